/* sim/passes/pass_checkpoint.c: §5.1 pass 1, apply-checkpoint. "The forward instruction (FW_i) is
 * replaced by the checkpointed forward (CFW_i). And a recomputation (RC_i) instruction is
 * inserted before the corresponding backward (BW_i)": right before it, so after the RG of its
 * micro-batch, as a naive implementation places it (Figure 2, step 1: 21t -> 28t). RC_i then
 * waits for the gradient; pass 2 moves it.
 *
 * Every forward that keeps its activations becomes a checkpoint of the whole stage
 * (ckpt_layers = 0); forwards already checkpointed are left as they are. Memory: each device
 * keeps one full activation at a time (the one RC_i restored for BW_i) plus the checkpoints of
 * the micro-batches in flight. Pass 1 may be slower than its input: it adds the recompute. */
#include <config.h>
#include "sim/passes/pass.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

/* Every FW of in checkpointed with ckpt_layers k and its RC inserted right before the backward
 * of its (mb, stage): the candidate of pass 1 (k = 0) and of the framework's checkpointing. */
static struct plan *checkpoint_all(const struct plan *in, int k, struct pass_changes *ch)
{
    const struct plan_geom *g = plan_geom(in);
    /* kept[mb * stages + stage]: the forward of (mb, stage) keeps its activations (FW), so its
     * backward gets an RC. Keys out of range are left to validation (pass_finish). */
    size_t keys = (size_t)g->mbs * g->stages;
    unsigned char *kept = xcalloc(keys + 1, 1);
    for (int d = 0; d < plan_devices(in); d++)
        for (int i = 0; i < plan_len(in, d); i++) {
            const struct instr *o = plan_at(in, d, i);
            if (o->op == OP_FW && o->mb >= 0 && o->mb < g->mbs && o->stage >= 0 &&
                o->stage < g->stages)
                kept[(size_t)o->mb * g->stages + o->stage] = 1;
        }
    struct plan *cand = plan_new(plan_config(in), g);
    for (int d = 0; d < plan_devices(in); d++) {
        for (int i = 0; i < plan_len(in, d); i++) {
            struct instr ins = *plan_at(in, d, i);
            if (ins.op == OP_FW) {
                ins.op = OP_CFW;
                ins.ckpt_layers = k;
                pass_changes_add(ch, PASS_CHANGE_RETYPE, d, &ins, OP_FW);
            } else if (plan_op_is_backward(ins.op) && ins.mb >= 0 && ins.mb < g->mbs &&
                       ins.stage >= 0 && ins.stage < g->stages &&
                       kept[(size_t)ins.mb * g->stages + ins.stage]) {
                struct instr rc = ins;
                rc.op = OP_RC;
                rc.peer = -1;
                rc.paired = 0; /* a recompute pairs with nothing (sim/core/overlap.h) */
                rc.ckpt_layers = k;
                plan_append(cand, d, rc);
                pass_changes_add(ch, PASS_CHANGE_INSERT, d, &rc, OP_RC);
            }
            plan_append(cand, d, ins);
        }
    }
    free(kept);
    return cand;
}

int pass_checkpoint_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                        struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e)
{
    *out = NULL;
    pass_changes_clear(ch);
    struct plan *cand = checkpoint_all(in, 0, ch);
    return pass_finish(in, in_sim, cand, PASS_KEEP_ALWAYS, out, out_sim, ch, e);
}

int pass_framework_ac(const struct plan *in, struct plan **out, struct pass_framework_ac *r,
                      struct mt_err *e)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    r->ckpt_layers = -1;
    /* what the plan does: its checkpoints' layer counts, the forwards it keeps whole, the
     * recomputes that do not run right before their backward */
    struct plan *bare = plan_new(plan_config(in), plan_geom(in));
    for (int d = 0; d < plan_devices(in); d++)
        for (int i = 0; i < plan_len(in, d); i++) {
            struct instr ins = *plan_at(in, d, i);
            if (ins.op == OP_CFW) {
                r->checkpoints++;
                if (r->ckpt_layers < 0)
                    r->ckpt_layers = ins.ckpt_layers;
                else if (r->ckpt_layers != ins.ckpt_layers)
                    r->mixed = true;
                ins.op = OP_FW;
                ins.ckpt_layers = 0;
            } else if (ins.op == OP_FW) {
                r->forwards_kept++;
            } else if (ins.op == OP_RC) {
                r->recomputes++;
                /* the framework's recompute runs once the gradient is there, inside the
                 * backward: the next instruction (a receive of the gradient after it is
                 * earlier than that) */
                const struct instr *nx = i + 1 < plan_len(in, d) ? plan_at(in, d, i + 1) : NULL;
                if (nx == NULL || !plan_op_is_backward(nx->op) || nx->mb != ins.mb ||
                    nx->stage != ins.stage)
                    r->recomputes_moved++;
                continue; /* the framework recomputes inside the backward */
            }
            plan_append(bare, d, ins);
        }
    if (r->ckpt_layers < 0 || r->mixed)
        r->ckpt_layers = 0; /* none, or several counts: the whole stage */
    struct pass_changes ch;
    pass_changes_init(&ch);
    struct plan *cand = checkpoint_all(bare, r->ckpt_layers, &ch);
    int rc = pass_finish(bare, NULL, cand, PASS_KEEP_ALWAYS, out, NULL, &ch, e);
    pass_changes_fini(&ch);
    plan_free(bare);
    return rc;
}
