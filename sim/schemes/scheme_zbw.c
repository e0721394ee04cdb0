/* sim/schemes/scheme_zbw.c: ZB-W, interleaved zero bubble (ZB1P of arXiv 2401.10241 over v chunks per
 * device; the order of torch.distributed.pipelining's ScheduleInterleavedZeroBubble). Placed
 * as W: stage s = part * D + device.
 *
 * Micro-batches go in rounds of m = N / max(1, N / D) (torch requires N to be a multiple of the
 * round count). Device r of D counts its n = vN compute slots: warm-up forwards
 * w = min((v-1)m + D-1-r, vN); slot k's forward runs part (k / m) mod v and slot k's backward
 * part v-1 - ((k - w) / m) mod v, each part's micro-batches in order. Slots k < w are
 * forwards; then slots pair a forward with a B while forwards remain, and the rest are Bs.
 * From the (r+1)-th B on, every B is followed by the W of the oldest B whose W has not run;
 * the Ws left over go at the end. torch's inserted bubbles (None actions) only wait for
 * dependencies, which the simulator does by itself. */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

static void zbw_put(struct plan *p, int d, enum op op, int part, int mb)
{
    plan_append(p, d, (struct instr){op, mb, part, vpipe_stage(plan_geom(p), d, mb, part), -1, 0, 0, 0});
}

int scheme_order_zbw(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs, v = g->parts;
    int rounds = N / D > 1 ? N / D : 1, m = N / rounds;
    if (N % rounds != 0)
        return err_set(e, MT_EINVAL,
                       "num_microbatches: ZB-W needs a multiple of %d rounds (got %d)", rounds, N);
    int total = v * N;
    int *bw_part = xmalloc((size_t)total * sizeof(int)); /* part of each B, in order */
    int *bw_mb = xmalloc((size_t)total * sizeof(int));
    for (int r = 0; r < D; r++) {
        int warm = (v - 1) * m + (D - 1 - r);
        if (warm > total)
            warm = total;
        int fcount[CONFIG_MAX_CHUNKS] = {0}, bcount[CONFIG_MAX_CHUNKS] = {0};
        int nb = 0, nw = 0;
        for (int k = 0; k < total + warm; k++) {
            if (k < total) { /* a slot with a forward: the warm-up and the 1F1B phase */
                int part = (k / m) % v;
                zbw_put(p, r, OP_FW, part, fcount[part]++);
            }
            if (k >= warm) { /* a slot with a backward */
                int part = v - 1 - ((k - warm) / m) % v;
                bw_part[nb] = part;
                bw_mb[nb++] = bcount[part]++;
                zbw_put(p, r, OP_B, part, bw_mb[nb - 1]);
                if (k - warm >= r) {
                    zbw_put(p, r, OP_W, bw_part[nw], bw_mb[nw]);
                    nw++;
                }
            }
        }
        while (nw < nb) {
            zbw_put(p, r, OP_W, bw_part[nw], bw_mb[nw]);
            nw++;
        }
    }
    free(bw_part);
    free(bw_mb);
    return MT_OK;
}
