/* sim/plan/validate.c: checks a plan before anything runs it. Structure first (every pair of
 * forward/backward present once, on the right device, in the right order; sends matched by
 * receives), then a run of the simulator, which finds deadlocks and names where each
 * device stalls. Messages name the device and the instruction's position in its list. */
#include <config.h>
#include "sim/plan/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Labels are formatted only on the error paths: validation runs after every pass. */
static const char *validate_label(const struct plan *p, int dev, int pos, char *what, int n)
{
    plan_instr_label(p, plan_at(p, dev, pos), what, n);
    return what;
}

/* Whether send or receive `in` of device d has its partner on its peer, naming d back.
 * base[d]: the id of device d's first instruction (base[D]: the total). */
static inline bool validate_paired(const struct plan *p, const struct vpipe_index *x,
                                   const int *base, int d, const struct instr *in)
{
    int other = vpipe_partner_of(x, in), peer = in->peer, D = plan_geom(p)->devices;
    /* on the peer's list: the device plan_locate_id would find is the peer */
    if (other < 0 || peer < 0 || peer >= D || other < base[peer] || other >= base[peer + 1])
        return false;
    return plan_instrs(p, peer)[other - base[peer]].peer == d;
}

/* The error of the first send or receive in list order that validate_paired refuses. */
static int validate_first_unpaired(const struct plan *p, const struct vpipe_index *x,
                                   const int *base, struct mt_err *e)
{
    for (int d = 0; d < plan_devices(p); d++) {
        const struct instr *ins = plan_instrs(p, d);
        for (int i = 0; i < plan_len(p, d); i++) {
            enum op want;
            int stage;
            if (!vpipe_peer(ins[i].op, ins[i].stage, &want, &stage) ||
                validate_paired(p, x, base, d, &ins[i]))
                continue;
            char what[32];
            return err_set(e, MT_EINFEASIBLE,
                           "device %d, instruction %d (%s): no matching %s%d on device %d", d, i,
                           validate_label(p, d, i, what, sizeof what), plan_op_name(want),
                           ins[i].mb, ins[i].peer);
        }
    }
    return MT_OK; /* not reached: the counts said one fails */
}

/* Offload of the cell c, whose forward is at fi and backward at bi on device dev: an OF and an RL
 * together or neither, the OF of a FW (a CFW kept only its checkpoint) after it, the RL after
 * the OF and before the backward. Each error names the instruction at fault. */
static int validate_copies(const struct plan *p, const struct vpipe_cell *c, const int *base,
                           int dev, int fi, int bi, bool ckpt, struct mt_err *e)
{
    int of = c->of, rl = c->rl;
    if (of < 0 && rl < 0)
        return MT_OK;
    int oi = of - base[dev], li = rl - base[dev];
    char what[32], other[32];
    const char *why = NULL;
    int at = -1, ref = -1;
    if (of < 0)
        why = "reload without an offload (OF) of its forward", at = li;
    else if (ckpt)
        why = "offload of a checkpointed forward (it keeps only its checkpoint: offload a FW)",
        at = oi;
    else if (oi < fi)
        why = "offload before its forward", at = oi, ref = fi;
    else if (rl < 0)
        why = "offload without a reload (RL) before its backward", at = oi;
    else if (li < oi)
        why = "reload before its offload", at = li, ref = oi;
    else if (bi < li)
        why = "backward before the reload of its activations", at = bi, ref = li;
    if (why == NULL)
        return MT_OK;
    validate_label(p, dev, at, what, sizeof what);
    if (ref < 0)
        return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d (%s): %s", dev, at, what,
                       why);
    return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d (%s): %s (%s at %d)", dev, at,
                   what, why, validate_label(p, dev, ref, other, sizeof other), ref);
}

/* Positions come from the index's ids less each device's first id: the index has checked
 * that every instruction sits on the device the virtual pipeline places it on, so a
 * forward, its recompute and its backward are on vpipe_locate's device (no search per id). */
static int validate_pairs(const struct plan *p, const struct vpipe_index *x, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices;
    int *base = xmalloc(((size_t)D + 1) * sizeof(int));
    for (int d = 0; d < D; d++)
        base[d] = plan_id(p, d, 0);
    base[D] = plan_total(p);
    int rc = MT_OK, sends = 0, recvs = 0, paired = 0;
    for (int mb = 0; mb < g->mbs && rc == MT_OK; mb++)
        for (int s = 0; s < g->stages; s++) {
            struct vpipe_cell c; /* its ids and device, read at once */
            vpipe_lookup_cell(x, mb, s, &c);
            int fw = c.fwd, bw = c.bwd, dev = c.dev;
            if (fw < 0 || bw < 0) {
                rc = err_set(e, MT_EINFEASIBLE, "device %d: micro-batch %d stage %d has no %s",
                             dev, mb, s, fw < 0 ? "forward" : "backward");
                break;
            }
            const struct instr *ins = plan_instrs(p, dev);
            int fi = fw - base[dev], bi = bw - base[dev];
            char fname[32], bname[32];
            if (bi < fi) {
                rc = err_set(e, MT_EINFEASIBLE,
                             "device %d, instruction %d (%s): backward before its forward (%s at "
                             "%d)", dev, bi, validate_label(p, dev, bi, bname, sizeof bname),
                             validate_label(p, dev, fi, fname, sizeof fname), fi);
                break;
            }
            bool ckpt = ins[fi].op == OP_CFW;
            int rcid = c.rc;
            if (ckpt != (rcid >= 0)) {
                rc = err_set(e, MT_EINFEASIBLE, "device %d, instruction %d (%s): %s", dev, fi,
                             validate_label(p, dev, fi, fname, sizeof fname),
                             ckpt ? "checkpointed forward without a recompute"
                                  : "recompute of a forward that kept its activations");
                break;
            }
            if (rcid >= 0) {
                int ri = rcid - base[dev];
                char rname[32];
                if (ri < fi || ri > bi) {
                    rc = err_set(e, MT_EINFEASIBLE,
                                 "device %d, instruction %d (%s): recompute outside its forward "
                                 "(%d) .. backward (%d)", dev, ri,
                                 validate_label(p, dev, ri, rname, sizeof rname), fi, bi);
                    break;
                }
            }
            rc = validate_copies(p, &c, base, dev, fi, bi, ckpt, e);
            if (rc != MT_OK)
                break;
            bool split = ins[bi].op == OP_B;
            if (split != (c.w >= 0)) {
                rc = err_set(e, MT_EINFEASIBLE, "device %d, instruction %d (%s): %s", dev, bi,
                             validate_label(p, dev, bi, bname, sizeof bname),
                             split ? "split backward B without its W"
                                   : "W without a split backward B");
                break;
            }
            /* its messages, counted from the index (which holds every instruction once, on
             * this device): no walk over the lists */
            recvs += (c.ra >= 0) + (c.rg >= 0);
            if (c.sa >= 0)
                sends++, paired += validate_paired(p, x, base, dev, &ins[c.sa - base[dev]]);
            if (c.sg >= 0)
                sends++, paired += validate_paired(p, x, base, dev, &ins[c.sg - base[dev]]);
        }
    /* Every send has its receive on the peer, and every receive its send. Checked from the
     * sends: a send's receive found on its peer naming it back is also that receive's check
     * passed, so when every send passes and the receives are as many, all are paired. Else
     * the walk over both finds the first failure in list order, to name it. */
    if (rc == MT_OK && (paired != sends || recvs != sends))
        rc = validate_first_unpaired(p, x, base, e);
    free(base);
    if (rc != MT_OK)
        return rc;
    /* AR and OS come after every backward of their stage on the device: one walk finds each
     * part's last backward, last OS and first AR or OS (the first of a part to come too early,
     * if any does: the earliest such instruction is the first of its part). */
    bool ends_bw[OP__COUNT];
    for (int op = 0; op < OP__COUNT; op++)
        ends_bw[op] = plan_op_is_backward((enum op)op) || op == OP_W;
    for (int d = 0; d < g->devices; d++) {
        const struct instr *ins = plan_instrs(p, d);
        int len = plan_len(p, d);
        int last_bw[CONFIG_MAX_CHUNKS + 2] = {0}, last_os[CONFIG_MAX_CHUNKS + 2] = {0};
        int first_update[CONFIG_MAX_CHUNKS + 2];
        for (int part = 0; part < g->parts; part++)
            first_update[part] = -1;
        for (int i = 0; i < len; i++) {
            const struct instr *in = &ins[i];
            if (in->part < 0 || in->part >= g->parts)
                return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d: part %d out of range",
                               d, i, in->part);
            if ((unsigned)in->op < OP__COUNT && ends_bw[in->op])
                last_bw[in->part] = i;
            else if (in->op == OP_AR || in->op == OP_OS) {
                if (first_update[in->part] < 0)
                    first_update[in->part] = i;
                if (in->op == OP_OS)
                    last_os[in->part] = i;
            }
        }
        if (config_scheme_async(g->scheme)) {
            /* Async: OS every U backwards (after its own, a dependency); none may be left
             * unapplied, so an OS follows the last backward of each part. */
            for (int part = 0; part < g->parts; part++)
                if (last_os[part] < last_bw[part])
                    return err_set(e, MT_EINFEASIBLE,
                                   "device %d, instruction %d: no optimizer step (OS) after the "
                                   "last backward of part %d", d, last_bw[part], part);
            continue;
        }
        int at = -1, part_at = -1;
        for (int part = 0; part < g->parts; part++)
            if (first_update[part] >= 0 && first_update[part] < last_bw[part] &&
                (at < 0 || first_update[part] < at))
                at = first_update[part], part_at = part;
        if (at >= 0)
            return err_set(e, MT_EINFEASIBLE,
                           "device %d, instruction %d (%s): before the last backward of its "
                           "stage (at %d)", d, at, plan_op_name(ins[at].op), last_bw[part_at]);
    }
    return MT_OK;
}

int validate_plan_sim(const struct plan *p, struct sim_result *out, struct mt_err *e)
{
    const struct vpipe_resolved *rv; /* kept with the plan: the simulator takes it up */
    memset(out, 0, sizeof *out);
    TRY(vpipe_resolve(p, &rv, e));
    TRY(validate_pairs(p, rv->x, e));
    return sim_run(p, out, e);
}

int validate_plan(const struct plan *p, struct mt_err *e)
{
    struct sim_result r;
    int rc = validate_plan_sim(p, &r, e);
    sim_result_fini(&r);
    return rc;
}

int validate_plan_input(const struct plan *p, struct mt_err *e)
{
    int rc = validate_plan(p, e);
    if (rc == MT_EINFEASIBLE) {
        if (e != NULL)
            e->code = MT_EINVAL;
        rc = MT_EINVAL;
    }
    return rc;
}
