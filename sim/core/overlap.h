/* sim/core/overlap.h: the expert all-to-alls' communication lane and the rule of a forward and
 * a backward run as one pair (DualPipe's and DualPipeV's F&B chunk; Megatron's
 * --overlap-moe-expert-parallel-comm in interleaved 1F1B).
 *
 * The cost model hands each stage the time of the all-to-alls inside its forward (fw_a2a) and
 * inside its backward's input-gradient part (b_a2a, model/cost.h): a MoE layer's dispatch and
 * combine. They run on the device's communication lane. Alone, an instruction waits for its
 * own all-to-alls: they are exposed, as before. In a pair, DeepSeek-V3's report (§3.2.1,
 * Figure 4) splits each chunk into attention, dispatch, MLP and combine and interleaves the two
 * chunks so that the forward's all-to-alls run while the backward computes and the backward's
 * while the forward computes (deepseek-ai/DualPipe, dualpipe.py: _forward_backward_chunk hands
 * both chunks to the module's overlapped_forward_backward). The rule here: in a pair (X, Y),
 * with comp = latency - a2a,
 *     X lasts comp(X) + max(0, a2a(X) - comp(Y)),  Y lasts comp(Y) + max(0, a2a(Y) - comp(X)),
 * so the pair lasts its compute plus what of each all-to-all outlasts the other's compute;
 * X hid min(a2a(X), comp(Y)). Not modelled: the SMs the report gives to communication (the
 * compute is not slowed), and the pair's outputs leave at each member's end, not the pair's.
 * An instruction is in a pair when its `paired` flag is set and the device's previous compute
 * is a forward where it is a backward (or the reverse), of another (micro-batch, stage), not
 * itself in a pair already: a pass that puts a recompute between them breaks the pair and
 * the all-to-alls show again. With no all-to-all (a dense model, ep = 1) every latency is the
 * cost's to the bit. */
#ifndef MT_SIM_OVERLAP_H
#define MT_SIM_OVERLAP_H

#include <stdbool.h>

struct plan;
struct instr;
struct cost_model;
struct sim_result;

/* Whether some stage of cost has an expert all-to-all. */
bool overlap_cost_has_a2a(const struct cost_model *cost);
/* partner[i]: the position in ins[0..n) of the compute ins[i] is paired with (before or after
 * it), or -1; pairs formed from the list's start, each compute in one at most. */
void overlap_pairs(const struct instr *ins, int n, int *partner);
/* The all-to-all time inside in (a forward's fw_a2a, a backward's b_a2a, else 0). */
double overlap_a2a(const struct cost_model *cost, const struct instr *in);
/* The latency of in paired with partner (the header's rule); NULL: its cost latency. */
double overlap_latency(const struct cost_model *cost, const struct instr *in,
                       const struct instr *partner);
/* The durations a simulation takes for p: NULL when no pair changes one (no all-to-all, no
 * pair); else a malloc'd [total + 1] array, dur's entries (NAN where dur is NULL) with every
 * NAN entry of a paired instruction set to overlap_latency. The caller frees it. */
double *overlap_durations(const struct plan *p, const struct cost_model *cost, const double *dur);
/* Where cost has an all-to-all, fills r's lane: per instruction the all-to-all time it hid and
 * left exposed, their bytes and its partner's id (-1 alone), per device the sums. Else leaves
 * them NULL. */
void overlap_annotate(const struct plan *p, const struct cost_model *cost, struct sim_result *r);

#endif
