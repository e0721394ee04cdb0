/* sim/schemes/scheme_async.c: the asynchronous schemes, Async (PipeMare, Yang et al., MLSys'21, §3)
 * and PipeDream (Narayanan et al., SOSP'19, §3: 1F1B without a flush, weight stashing).
 *
 * Both run 1F1B with no flush between iterations. A plan spans K iterations: micro-batch
 * k * N + m is micro-batch m of iteration k and its instructions carry step = k. Device d runs
 * min(D-d-1, KN) warm-up forwards once, then alternates one forward and one backward across all
 * K iterations, and drains only at the end of the plan. Each stage applies an optimizer step
 * (OS) after every U-th backward and after its last one; the OS is keyed by the micro-batch of
 * that backward (sim/core/vpipe.h), and with dp > 1 an AR of the stage's gradients precedes it.
 *
 * The two schemes share the order and differ in memory only: PipeDream keeps, for each
 * micro-batch in flight, the weight version its forward read, so that its backward uses the
 * same one (sim/core/simulate.c counts the stashed copies); PipeMare keeps one version and lets the
 * backward use the current weights. In the steady state device d holds D-d micro-batches in
 * flight and, with U = 1, runs D-1-d backwards (each followed by an update) between the
 * forward of a micro-batch and its backward: that is stage d's weight staleness. */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>
#include <string.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

int scheme_order_async(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, M = g->mbs, N = config_microbatches(plan_config(p));
    if (N < 1 || M % N != 0)
        return err_set(e, MT_EINVAL,
                       "num_microbatches: %d micro-batches are not whole "
                       "iterations of %d",
                       M, N);
    for (int d = 0; d < D; d++) {
        int warm = D - d - 1 < M ? D - d - 1 : M;
        for (int i = 0; i < warm; i++)
            plan_append(p, d, (struct instr){OP_FW, i, 0, d, -1, i / N, 0, 0});
        for (int i = 0; i < M - warm; i++) {
            int f = warm + i;
            plan_append(p, d, (struct instr){OP_FW, f, 0, d, -1, f / N, 0, 0});
            plan_append(p, d, (struct instr){OP_BW, i, 0, d, -1, i / N, 0, 0});
        }
        for (int i = M - warm; i < M; i++)
            plan_append(p, d, (struct instr){OP_BW, i, 0, d, -1, i / N, 0, 0});
    }
    return MT_OK;
}

/* Appends in to dev with its receive before and its send after (vpipe_wrap). */
static void scheme_async_put(struct plan *p, int dev, struct instr in)
{
    struct instr w[VPIPE_WRAP_MAX];
    int n = vpipe_wrap(plan_geom(p), dev, in, w);
    for (int i = 0; i < n; i++)
        plan_append(p, dev, w[i]);
}

void scheme_async_add_comm(struct plan *p)
{
    const struct plan_geom *g = plan_geom(p);
    const struct config *c = plan_config(p);
    int U = c->update_interval > 0 ? c->update_interval : 1;
    bool replicated = c->cluster.dp > 1;
    int maxlen = 0;
    for (int d = 0; d < g->devices; d++)
        maxlen = plan_len(p, d) > maxlen ? plan_len(p, d) : maxlen;
    struct instr *tmp = xmalloc(((size_t)maxlen + 1) * sizeof *tmp);
    for (int d = 0; d < g->devices; d++) {
        int n = plan_len(p, d);
        memcpy(tmp, plan_instrs(p, d), (size_t)n * sizeof *tmp);
        /* The gradient of a micro-batch is complete after BW, or after W when split. */
        int total[CONFIG_MAX_CHUNKS + 1] = {0}, done[CONFIG_MAX_CHUNKS + 1] = {0};
        for (int i = 0; i < n; i++)
            if ((tmp[i].op == OP_BW || tmp[i].op == OP_W) && tmp[i].part >= 0 &&
                tmp[i].part <= CONFIG_MAX_CHUNKS)
                total[tmp[i].part]++;
        /* Rebuilt in one sweep: removing from the end moves nothing. */
        while (plan_len(p, d) > 0)
            plan_remove(p, d, plan_len(p, d) - 1);
        for (int i = 0; i < n; i++) {
            struct instr in = tmp[i];
            scheme_async_put(p, d, in);
            if ((in.op != OP_BW && in.op != OP_W) || in.part < 0 || in.part > CONFIG_MAX_CHUNKS)
                continue;
            int k = ++done[in.part];
            if (k % U != 0 && k != total[in.part])
                continue;
            if (replicated)
                plan_append(p, d, (struct instr){OP_AR, in.mb, in.part, in.stage, -1, in.step, 0, 0});
            plan_append(p, d, (struct instr){OP_OS, in.mb, in.part, in.stage, -1, in.step, 0, 0});
        }
    }
    free(tmp);
}
