/* sim/schemes/scheme_interleaved.c: W, Megatron-LM's interleaved 1F1B (Narayanan et al., SC'21;
 * megatron/core/pipeline_parallel/schedules.py). Each device holds v chunks; chunk c of
 * device d is stage c*D + d. Virtual micro-batch k (of N*v) runs forward chunk
 * (k mod Dv) / D of micro-batch (k / Dv) * D + k mod D; backwards walk the chunks in reverse.
 * Device d runs (D-d-1)*2 + (v-1)*D warm-up forwards, then 1F1B, then drains. N must be a
 * multiple of D (Megatron's own constraint). Bubble: (D-1)(F+B)/v.
 * With --overlap-moe-expert-parallel-comm each steady-state forward and the backward after it
 * are one pair (Megatron-core's combined_1f1b: schedules.py runs them as one
 * combined_forward_backward_step), whose expert all-to-alls hide behind each other's compute
 * (sim/core/overlap.h); warm-up and cool-down stay alone. Megatron then runs one more warm-up
 * forward (get_pp_rank_microbatches: num_warmup_microbatches += 1), so that a pair's forward
 * and backward are never the same micro-batch (the last device's first pair would be). */
#include <config.h>
#include "sim/schemes/scheme.h"

#include "model/config.h"
#include "util/err.h"

static struct instr interleaved_instr(const struct plan_geom *g, int d, int k, bool forward)
{
    int D = g->devices, v = g->parts;
    int chunk = (k % (D * v)) / D;
    if (!forward)
        chunk = v - 1 - chunk;
    int mb = (k / (D * v)) * D + k % D;
    return (struct instr){forward ? OP_FW : OP_BW, mb, chunk, chunk * D + d, -1, 0, 0, 0};
}

int scheme_order_interleaved(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, total = g->mbs * g->parts;
    if (g->mbs % D != 0)
        return err_set(e, MT_EINVAL, "num_microbatches: W needs a multiple of %d (got %d)", D,
                       g->mbs);
    bool pair = plan_config(p)->overlap_moe_a2a;
    for (int d = 0; d < D; d++) {
        int warm = (D - d - 1) * 2 + (g->parts - 1) * D + (pair ? 1 : 0);
        if (warm > total)
            warm = total;
        for (int k = 0; k < warm; k++)
            plan_append(p, d, interleaved_instr(g, d, k, true));
        for (int i = 0; i < total - warm; i++) {
            plan_append(p, d, interleaved_instr(g, d, warm + i, true));
            struct instr bw = interleaved_instr(g, d, i, false);
            bw.paired = pair;
            plan_append(p, d, bw);
        }
        for (int i = total - warm; i < total; i++)
            plan_append(p, d, interleaved_instr(g, d, i, false));
    }
    return MT_OK;
}
