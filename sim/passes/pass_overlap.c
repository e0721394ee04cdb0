/* sim/passes/pass_overlap.c: §5.1 pass 2, overlap-recompute: RC(mb,s) goes before RG(mb,s) or it
 * waits for BW(mb,s+1). "RC_i relies only on the forward instruction FW_i of the same device
 * ... RC_i should be placed before RG_i (which receives the gradient of BW_i from device j+1)";
 * then RC_i runs while device j+1 computes BW_i (Figure 2, step 2: 28t -> 25t).
 *
 * RC moves up over receives only (its own RG and any receive between them): crossing a send
 * would delay another device, crossing a backward would hold two full activations at once.
 * Program-order memory is unchanged: receives take none. With rendezvous sends, posting RG
 * later can hold up the sender; then the rewrite is slower and the input is kept. */
#include <config.h>
#include "sim/passes/pass.h"

#include "sim/core/vpipe.h"
#include "util/err.h"

/* One sweep per device: receives are held back in a run; an RC whose RG is in the run is
 * written before that RG. With cand NULL it only counts the RCs it would move. */
static int pass_overlap_sweep(const struct plan *in, struct plan *cand, struct pass_changes *ch)
{
    int moved = 0;
    for (int d = 0; d < plan_devices(in); d++) {
        const struct instr *ins = plan_instrs(in, d);
        int n = plan_len(in, d), run = 0; /* the run is ins[i - run .. i) */
        for (int i = 0; i < n; i++) {
            if (vpipe_is_recv(ins[i].op)) {
                run++;
                continue;
            }
            int at = -1;
            if (ins[i].op == OP_RC)
                for (int k = i - run; k < i && at < 0; k++)
                    if (ins[k].op == OP_RG && ins[k].mb == ins[i].mb &&
                        ins[k].stage == ins[i].stage)
                        at = k;
            moved += at >= 0;
            if (cand != NULL) {
                for (int k = i - run; k < i; k++) {
                    if (k == at) {
                        plan_append(cand, d, ins[i]);
                        pass_changes_add(ch, PASS_CHANGE_MOVE, d, &ins[i], OP_RC);
                    }
                    plan_append(cand, d, ins[k]);
                }
                if (at < 0)
                    plan_append(cand, d, ins[i]);
            }
            run = 0;
        }
        if (cand != NULL)
            for (int k = n - run; k < n; k++)
                plan_append(cand, d, ins[k]);
    }
    return moved;
}

int pass_overlap_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                     struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e)
{
    *out = NULL;
    pass_changes_clear(ch);
    struct plan *cand;
    if (pass_overlap_sweep(in, NULL, ch) == 0) {
        cand = plan_clone(in);
    } else {
        cand = plan_new(plan_config(in), plan_geom(in));
        pass_overlap_sweep(in, cand, ch);
    }
    return pass_finish(in, in_sim, cand, PASS_KEEP_NOT_SLOWER, out, out_sim, ch, e);
}
