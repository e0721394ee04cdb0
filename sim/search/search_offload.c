/* sim/search/search_offload.c: sim/search/search_offload.h. The schedule search's local search
 * (sim/search/search_local.c) run again with offload allowed (search_ctx.offload): its evaluator
 * times the copies on their lanes and walks the memory of a device with copies at their
 * times, as the simulator does (tests/unit/test_offload_search.c holds it bit for bit), and
 * its moves offload a forward (kept or checkpointed; its RL at its recompute's place or up to
 * three places earlier), checkpoint an offloaded one again, or drop it, beside the schedule
 * moves. It starts from the searched plan and the schedule search's twelve list schedules,
 * each also with every checkpoint offloaded, and the base (and the searched plan) with every
 * forward offloaded, and descends from the four best; what it keeps is checked with the
 * validator and the simulator (the host cap too). A plan at the lower bound that allows
 * offload is left as it is, unsearched. */
#include <config.h>
#include "sim/search/search_offload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/bound.h"
#include "sim/core/simulate.h"
#include "sim/search/search.h"
#include "sim/search/search_internal.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "util/err.h"
#include "util/xalloc.h"

static bool offload_fits(const struct sim_result *r, double cap)
{
    if (r->host_oom_device >= 0)
        return false;
    if (!(cap > 0))
        return true;
    for (int d = 0; d < r->devices; d++)
        if (r->dev[d].peak_mem > cap * (1 + 1e-12))
            return false;
    return true;
}

/* The position of the compute instruction `back` compute instructions before position pos
 * (pos itself for 0), not before lo. */
static int offload_back(const struct instr *ins, int pos, int back, int lo)
{
    int i = pos;
    while (back > 0 && i > lo) {
        i--;
        if (plan_op_is_compute(ins[i].op))
            back--;
    }
    return i;
}

/* The plan of base's work with every forward offloaded whose backward is not the next compute
 * instruction on its device: the OF right after it, the RL right after the backward before
 * its own on the device (for the first backward, after the last forward before it), `back`
 * compute instructions earlier. Checkpointed forwards are left as they are. */
static struct plan *offload_all(const struct plan *base, int back, bool ckpt_too)
{
    struct plan *p = plan_clone(base);
    int mbs = plan_geom(base)->mbs, stages = plan_geom(base)->stages;
    bool *off = xcalloc((size_t)mbs * stages + 1, 1);
    for (int d = 0; d < plan_devices(base); d++) {
        const struct instr *ins = plan_instrs(base, d);
        int len = plan_len(base, d);
        for (int i = 0; i < len; i++) {
            if (ins[i].op != OP_FW && !(ckpt_too && ins[i].op == OP_CFW && !ins[i].ckpt_layers))
                continue;
            int j = i + 1;
            while (j < len && !plan_op_is_compute(ins[j].op))
                j++;
            off[(size_t)ins[i].mb * stages + ins[i].stage] =
                !(j < len && plan_op_is_backward(ins[j].op) && ins[j].mb == ins[i].mb &&
                  ins[j].stage == ins[i].stage);
        }
        struct instr *out = xmalloc(((size_t)len * 3 + 1) * sizeof *out);
        /* out's positions just after the last backward and just after the last compute */
        int n = 0, prev_bw = -1, prev_compute = 0;
        for (int i = 0; i < len; i++) {
            const struct instr *in = &ins[i];
            if (plan_op_is_backward(in->op) && off[(size_t)in->mb * stages + in->stage]) {
                /* its RL after the previous backward, else after the forwards before it */
                int at = prev_bw >= 0 ? prev_bw : prev_compute;
                at = offload_back(out, at, back, 0);
                memmove(&out[at + 1], &out[at], (size_t)(n - at) * sizeof *out);
                out[at] = *in;
                out[at].op = OP_RL;
                n++;
            }
            bool mine = in->mb >= 0 && in->mb < mbs && in->stage >= 0 && in->stage < stages &&
                        off[(size_t)in->mb * stages + in->stage]; /* AR, OS have no mb */
            if (in->op == OP_RC && mine)
                continue; /* its forward is kept and offloaded instead */
            out[n++] = *in;
            if (plan_op_is_forward(in->op) && mine) {
                out[n - 1].op = OP_FW;
                out[n] = out[n - 1];
                out[n++].op = OP_OF;
            }
            if (plan_op_is_backward(in->op))
                prev_bw = n;
            if (plan_op_is_compute(in->op))
                prev_compute = n;
        }
        plan_set_list(p, d, out, n);
        free(out);
    }
    free(off);
    return p;
}

static int offload_count(const struct plan *p)
{
    int n = 0;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            n += plan_at(p, d, i)->op == OP_OF;
    return n;
}

/* The starts: the searched schedule, the same with every checkpoint offloaded (each RL at
 * its recompute's place), and every forward offloaded from the base and from the searched
 * plan (offload_all, each RL 0 .. OFFLOAD_ALL_BACK compute instructions early). */
enum { OFFLOAD_ALL_BACK = 3, OFFLOAD_LISTS = 12, OFFLOAD_RUNS = 4,
       OFFLOAD_STARTS = 2 + 2 * (OFFLOAD_ALL_BACK + 1) + 2 * OFFLOAD_LISTS };

/* s[0]'s checkpoints offloaded into s[1]. */
static void offload_every_ckpt(const struct search_ctx *c, struct search_sched *s)
{
    search_sched_copy(c, &s[1], &s[0]);
    for (int key = 0; key < c->keys; key++)
        if (s[1].ck[key] == SEARCH_CK_CKPT)
            s[1].ck[key] = SEARCH_CK_OFFLOAD;
}

/* Whether every forward of s comes before its RC / RL slot and that before its backward
 * (offload_all may put an RL before its forward where a forward runs after the backward
 * before its own: such a start is dropped). */
static bool offload_ordered(const struct search_ctx *c, const struct search_sched *s)
{
    int *pos = xmalloc(((size_t)c->n_ops + 1) * sizeof(int));
    for (int d = 0; d < c->D; d++)
        for (int i = 0; i < s->len[d]; i++)
            pos[s->ord[(size_t)d * c->stride + i]] = i;
    bool ok = true;
    for (int key = 0; key < c->keys && ok; key++)
        if (s->ck[key] != SEARCH_CK_KEEP)
            ok = pos[SEARCH_OP(key, SK_F)] < pos[SEARCH_OP(key, SK_RC)] &&
                 pos[SEARCH_OP(key, SK_RC)] < pos[SEARCH_OP(key, SK_B)];
    free(pos);
    return ok;
}

static int offload_starts(const struct search_ctx *c, const struct plan *in,
                          const struct plan *base, struct search_sched *st)
{
    int n = 0;
    if (search_sched_from_plan(c, in, &st[n], NULL) == MT_OK) {
        offload_every_ckpt(c, &st[n]);
        n += 2;
    }
    /* the schedule search's list schedules (search.c's twelve) and the same offloaded */
    static const int extras[] = {0, 1, 2, 1 << 20};
    static const unsigned flags[] = {0, SEARCH_LIST_RC_FIRST, SEARCH_LIST_RC_EARLY};
    for (int k = 0; k < OFFLOAD_LISTS; k++)
        if (search_list(c, extras[k / 3], flags[k % 3], 0, &st[n])) {
            offload_every_ckpt(c, &st[n]);
            n += 2;
        }
    const struct plan *from[2] = {base, in};
    for (int k = 0; k < 2; k++)
        for (int back = 0; back <= OFFLOAD_ALL_BACK && from[k] != NULL; back++) {
            struct plan *q = offload_all(from[k], back, k == 1);
            n += search_sched_from_plan(c, q, &st[n], NULL) == MT_OK &&
                 offload_ordered(c, &st[n]);
            plan_free(q);
        }
    return n;
}

/* Whether s runs and every device fits the cap (into ev). */
static bool offload_sched_fits(const struct search_ctx *c, const struct search_sched *s,
                               struct search_eval *ev)
{
    if (!search_eval_time(c, s, ev))
        return false;
    for (int d = 0; d < c->D; d++)
        if (!search_fits(c, search_eval_peak(c, s, d, ev)))
            return false;
    return true;
}

/* The local search with offload over the starts, the best result into *best; false when no
 * start runs under the cap. */
static bool offload_search(struct search_ctx *c, const struct plan *in, const struct plan *base,
                           long budget, unsigned seed, struct search_sched *best,
                           struct search_offload_stats *st)
{
    struct search_sched starts[OFFLOAD_STARTS];
    struct search_score score[OFFLOAD_STARTS];
    struct search_eval ev;
    search_eval_init(c, &ev);
    for (int i = 0; i < OFFLOAD_STARTS; i++)
        search_sched_init(c, &starts[i]);
    int n = offload_starts(c, in, base, starts), ok = 0;
    for (int i = 0; i < n; i++) { /* those that run and fit, by score (insertion) */
        st->evals++;
        if (!offload_sched_fits(c, &starts[i], &ev))
            continue;
        struct search_score sc = search_score_of(&ev);
        int j = ok++;
        search_sched_copy(c, &starts[j], &starts[i]);
        for (; j > 0 && search_better(sc, score[j - 1]); j--) {
            struct search_sched t = starts[j];
            starts[j] = starts[j - 1];
            starts[j - 1] = t;
            score[j] = score[j - 1];
        }
        score[j] = sc;
    }
    /* the OFFLOAD_RUNS best starts, an equal share of the budget each (one descent's end
     * depends on where it starts) */
    struct search_ls_stats ls = {0};
    struct search_score found = {INFINITY, INFINITY, INFINITY};
    int runs = ok < OFFLOAD_RUNS ? ok : OFFLOAD_RUNS;
    for (int i = 0; i < runs && !search_stopped(c); i++) {
        long share = (budget - ls.evals) / (runs - i);
        search_local(c, &starts[i], share, 0, seed + (unsigned)i, &ls);
        search_eval_time(c, &starts[i], &ev);
        if (search_better(search_score_of(&ev), found)) {
            found = search_score_of(&ev);
            search_sched_copy(c, best, &starts[i]);
        }
    }
    st->evals += ls.evals;
    for (int i = 0; i < OFFLOAD_STARTS; i++)
        search_sched_fini(&starts[i]);
    search_eval_fini(&ev);
    return ok > 0;
}

int search_offload(const struct plan *in, const struct plan *base, const struct search_opts *o,
                   struct plan **out, struct sim_result *out_sim,
                   struct search_offload_stats *st, struct mt_err *e)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    struct sim_result r;
    TRY(validate_plan_sim(in, &r, e));
    struct search_ctx c;
    struct plan *found = NULL;
    struct bound_result b;
    bool at_bound = false; /* nothing is faster: no search */
    if (bound_plan(in, &b, NULL) == MT_OK) {
        bound_allow_offload(&b);
        at_bound = r.step_time <= bound_value(&b, true) * (1 + 1e-12);
    }
    if (!at_bound && search_ctx_init(&c, in, o->cap, NULL) == MT_OK) {
        {
            c.offload = true;
            /* the tuner's (quick) searches: half their budget, as the schedule search before
             * them has its own (tune --search --offload within 2x of tune --search) */
            long budget = search_budget(o, c.n_ops) / (o->quick && o->budget <= 0 ? 2 : 1);
            struct search_progress prog = search_progress_make(o, budget, c.n_ops);
            if (o->progress != NULL)
                c.prog = &prog;
            struct search_sched best;
            search_sched_init(&c, &best);
            if (offload_search(&c, in, base, budget, o->seed, &best, st))
                found = search_sched_plan(&c, &best);
            st->stopped = prog.stop;
            if (o->progress != NULL && !prog.stop)
                o->progress(o->progress_ctx, budget, budget);
            search_sched_fini(&best);
        }
        search_ctx_fini(&c);
    }
    struct sim_result q;
    struct mt_err why = {0};
    if (found != NULL && validate_plan_sim(found, &q, &why) == MT_OK) {
        if (offload_fits(&q, o->cap) && q.step_time < r.step_time * (1 - 1e-12)) {
            sim_result_fini(&r);
            r = q;
        } else {
            sim_result_fini(&q);
            plan_free(found);
            found = NULL;
        }
    } else {
        plan_free(found);
        found = NULL;
    }
    *out = found != NULL ? found : plan_clone(in);
    st->offloaded = offload_count(*out);
    if (out_sim)
        *out_sim = r;
    else
        sim_result_fini(&r);
    return MT_OK;
}
