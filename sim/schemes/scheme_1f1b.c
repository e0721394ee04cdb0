/* sim/schemes/scheme_1f1b.c: V, the 1F1B order of DeepSpeed and Megatron-LM (PipeDream-Flush).
 * Device d runs min(D-d-1, N) warm-up forwards, then alternates one forward and one
 * backward, then drains the remaining backwards. At most D-d micro-batches are in flight
 * on device d, so its peak activation memory is (D-d) M_θ (paper Table 1: [M_θ, D M_θ]). */
#include <config.h>
#include "sim/schemes/scheme.h"

#include "util/err.h"

int scheme_order_1f1b(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    for (int d = 0; d < D; d++) {
        int warm = D - d - 1 < N ? D - d - 1 : N;
        for (int i = 0; i < warm; i++)
            plan_append(p, d, (struct instr){OP_FW, i, 0, d, -1, 0, 0, 0});
        for (int i = 0; i < N - warm; i++) {
            plan_append(p, d, (struct instr){OP_FW, warm + i, 0, d, -1, 0, 0, 0});
            plan_append(p, d, (struct instr){OP_BW, i, 0, d, -1, 0, 0, 0});
        }
        for (int i = N - warm; i < N; i++)
            plan_append(p, d, (struct instr){OP_BW, i, 0, d, -1, 0, 0, 0});
    }
    return MT_OK;
}
