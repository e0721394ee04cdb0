/* sim/tune/tune_expert.c: the tuner's expert dimensions (issue 38 item 5): which expert-parallel
 * degree ep and expert tensor-parallel degree etp a candidate of a mixture of experts tries.
 *
 * Megatron-LM's rules (megatron/training/arguments.py, megatron/core/parallel_state.py), as
 * model/moe.c checks them on each config: ep divides the routed experts; the experts fold a
 * pipeline stage's tp x cp x dp GPUs as etp x ep x expert dp, so ep x etp divides them; etp
 * splits each expert's width, so it divides moe.ffn_hidden_size. Where the EP group sits (in a
 * node: NVLink; across nodes: the network) is the cost model's to price (price_link_of), so an
 * ep wider than a node is a candidate like any other and loses on its all-to-all time where it
 * should; --max-ep keeps the grid to the groups a user allows. */
#include <config.h>
#include "sim/tune/tune.h"

#include "model/moe.h"

/* etp's values for a stage of tp GPUs: tp (Megatron's default) and 1 (each expert whole on
 * its rank, DeepSeek-V3's and Qwen3's choice), those that split the expert width; tp's other
 * divisors are left to --etp (they multiply the grid and sit between the two). */
static int tune_etps(const struct config *base, const struct tune_opts *o, int tp, int out[2])
{
    int width = base->model.moe.ffn_hidden_size, n = 0;
    if (o->etp > 0) {
        out[0] = o->etp;
        return 1;
    }
    if (width <= 0 || width % tp == 0)
        out[n++] = tp;
    if (tp > 1)
        out[n++] = 1;
    return n;
}

int tune_expert_pairs(const struct config *base, const struct tune_opts *o, int tp, int cp,
                      int dp, struct tune_expert_pair *out, int max)
{
    if (!moe_enabled(&base->model)) {
        out[0] = (struct tune_expert_pair){0, 0}; /* the config's: validation says a bad one */
        return 1;
    }
    int experts = base->model.moe.num_experts;
    long fold = (long)tp * (cp > 0 ? cp : 1) * dp;
    int etps[2], n_etp = tune_etps(base, o, tp, etps), n = 0;
    for (int a = 0; a < n_etp; a++)
        for (int ep = 1; ep <= experts && n < max; ep++) {
            if (o->ep > 0 && ep != o->ep)
                continue;
            if (o->max_ep > 0 && ep > o->max_ep)
                break;
            if (experts % ep != 0 || fold % ((long)ep * etps[a]) != 0)
                continue;
            out[n++] = (struct tune_expert_pair){ep, etps[a]};
        }
    if (n == 0 && (o->ep > 0 || o->etp > 0)) {
        /* pinned degrees the fold does not take: one candidate, the validation says why */
        out[0] = (struct tune_expert_pair){o->ep > 0 ? o->ep : 1, o->etp > 0 ? o->etp : tp};
        return 1;
    }
    return n;
}
