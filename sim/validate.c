/* sim/validate.c: checks a plan before anything runs it. Structure first (every pair of
 * forward/backward present once, on the right device, in the right order; sends matched by
 * receives), then a run of the simulator, which finds deadlocks and names where each
 * device stalls. Messages name the device and the instruction's position in its list. */
#include <config.h>
#include "sim/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plan.h"
#include "sim/simulate.h"
#include "sim/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Labels are formatted only on the error paths: validation runs after every pass. */
static const char *validate_label(const struct plan *p, int dev, int pos, char *what, int n)
{
    plan_instr_label(p, plan_at(p, dev, pos), what, n);
    return what;
}

static int validate_pairs(const struct plan *p, const struct vpipe_index *x, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    for (int mb = 0; mb < g->mbs; mb++)
        for (int s = 0; s < g->stages; s++) {
            int fw = vpipe_lookup(x, OP_FW, mb, s), bw = vpipe_lookup(x, OP_BW, mb, s);
            if (fw < 0 || bw < 0) {
                int dev, part;
                vpipe_locate(g, mb, s, &dev, &part);
                return err_set(e, MT_EINFEASIBLE, "device %d: micro-batch %d stage %d has no %s",
                               dev, mb, s, fw < 0 ? "forward" : "backward");
            }
            int fd, fi, bd, bi;
            char fname[32], bname[32];
            plan_locate_id(p, fw, &fd, &fi);
            plan_locate_id(p, bw, &bd, &bi);
            if (bi < fi)
                return err_set(e, MT_EINFEASIBLE,
                               "device %d, instruction %d (%s): backward before its forward (%s at "
                               "%d)", bd, bi, validate_label(p, bd, bi, bname, sizeof bname),
                               validate_label(p, fd, fi, fname, sizeof fname), fi);
            bool ckpt = plan_at(p, fd, fi)->op == OP_CFW;
            int rc = vpipe_lookup(x, OP_RC, mb, s);
            if (ckpt != (rc >= 0))
                return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d (%s): %s", fd, fi,
                               validate_label(p, fd, fi, fname, sizeof fname),
                               ckpt ? "checkpointed forward without a recompute"
                                           : "recompute of a forward that kept its activations");
            if (rc >= 0) {
                int rd, ri;
                char rname[32];
                plan_locate_id(p, rc, &rd, &ri);
                if (ri < fi || ri > bi)
                    return err_set(e, MT_EINFEASIBLE,
                                   "device %d, instruction %d (%s): recompute outside its forward "
                                   "(%d) .. backward (%d)", rd, ri,
                                   validate_label(p, rd, ri, rname, sizeof rname), fi, bi);
            }
            bool split = plan_at(p, bd, bi)->op == OP_B;
            int w = vpipe_lookup(x, OP_W, mb, s);
            if (split != (w >= 0))
                return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d (%s): %s", bd, bi,
                               validate_label(p, bd, bi, bname, sizeof bname),
                               split ? "split backward B without its W"
                                            : "W without a split backward B");
        }
    /* Every send has its receive on the peer, and every receive its send. */
    for (int d = 0; d < g->devices; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            enum op want;
            int stage;
            if (!vpipe_peer(in->op, in->stage, &want, &stage))
                continue;
            char what[32];
            int other = vpipe_lookup(x, want, in->mb, stage);
            int od = -1, oi = -1;
            if (other >= 0)
                plan_locate_id(p, other, &od, &oi);
            if (other < 0 || od != in->peer || plan_at(p, od, oi)->peer != d)
                return err_set(e, MT_EINFEASIBLE,
                               "device %d, instruction %d (%s): no matching %s%d on device %d", d,
                               i, validate_label(p, d, i, what, sizeof what), plan_op_name(want),
                               in->mb, in->peer);
        }
    /* AR and OS come after every backward of their stage on the device. */
    for (int d = 0; d < g->devices; d++) {
        int last_bw[CONFIG_MAX_CHUNKS + 2] = {0};
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (in->part < 0 || in->part >= g->parts)
                return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d: part %d out of range",
                               d, i, in->part);
            if (plan_op_is_backward(in->op) || in->op == OP_W)
                last_bw[in->part] = i;
        }
        if (config_scheme_async(g->scheme)) {
            /* Async: OS every U backwards (after its own, a dependency); none may be left
             * unapplied, so an OS follows the last backward of each part. */
            int last_os[CONFIG_MAX_CHUNKS + 2] = {0};
            for (int i = 0; i < plan_len(p, d); i++)
                if (plan_at(p, d, i)->op == OP_OS)
                    last_os[plan_at(p, d, i)->part] = i;
            for (int part = 0; part < g->parts; part++)
                if (last_os[part] < last_bw[part])
                    return err_set(e, MT_EINFEASIBLE,
                                   "device %d, instruction %d: no optimizer step (OS) after the "
                                   "last backward of part %d", d, last_bw[part], part);
            continue;
        }
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if ((in->op == OP_AR || in->op == OP_OS) && i < last_bw[in->part])
                return err_set(e, MT_EINFEASIBLE,
                               "device %d, instruction %d (%s): before the last backward of its "
                               "stage (at %d)", d, i, plan_op_name(in->op), last_bw[in->part]);
        }
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
