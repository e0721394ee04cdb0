/* model/moe.h: mixtures of experts and multi-head latent attention (issue 38 items 1-3).
 *
 * The model's side (struct moe_spec, struct mla_spec in model/config.h's model_spec): which
 * blocks are MoE, the experts, the router, MLA's ranks. The cluster's side (cluster.ep,
 * cluster.etp): Megatron-LM folds a pipeline stage's tp x cp x dp GPUs twice
 * (megatron/core/parallel_state.py, initialize_model_parallel: the decoder's RankGenerator
 * "tp-cp-ep-dp-pp" ... and the experts' with tp = expert_tensor_parallel_size, dp = expert
 * data parallel): attention and dense layers as tp x cp x dp, the routed experts as
 * etp x ep x edp, so edp = tp x cp x dp / (etp x ep). Each expert's weights are split over
 * etp, the experts over ep, and their gradients are reduced (and with the distributed
 * optimizer their fp32 state sharded) over edp, the dense ones over cp x dp.
 *
 * The ops of a MoE sublayer are model/ops_build_moe.c's, MLA's model/ops_build_mla.c's; the
 * functions here are the pattern, the degrees, the parameter counts and the validation. */
#ifndef MT_MODEL_MOE_H
#define MT_MODEL_MOE_H

#include <stdbool.h>

struct config;
struct model_spec;
struct mt_err;

#define MOE_ROUTING_SKEW_DEFAULT 1.2
#define MOE_MAX_EXPERTS 65536

/* The model has routed experts (moe.num_experts > 0) / multi-head latent attention. */
bool moe_enabled(const struct model_spec *m);
bool mla_enabled(const struct model_spec *m);
/* Whether block `layer` (0-based) is a MoE block: not among the first first_k_dense
 * (DeepSeek's first_k_dense_replace), and (layer + 1) a multiple of layer_freq (Qwen's
 * decoder_sparse_step: HF Qwen2MoeDecoderLayer's `(layer_idx + 1) % decoder_sparse_step == 0`;
 * Megatron's --moe-layer-freq N puts an expert layer every N-th from layer 0, the same for
 * N = 1, the only value the presets use). */
bool moe_layer_is_moe(const struct model_spec *m, int layer);
/* MoE blocks among [first, first + n). */
int moe_layers_in(const struct model_spec *m, int first, int n);
/* The routing skew a config prices with: moe.routing_skew, else MOE_ROUTING_SKEW_DEFAULT. */
double moe_routing_skew(const struct model_spec *m);
/* The GPUs of a pipeline stage the experts fold as etp x ep x edp: tp x cp x dp (Megatron's
 * parallel_state.py: expert dp = world / (etp x ep x pp), the world tp x cp x dp x pp; a CP
 * rank holds the same weights, so it joins the experts' data-parallel group). */
long moe_expert_fold(const struct config *c);
/* The degrees: cluster.ep (0 = 1), cluster.etp (0 = tp, Megatron's default for
 * --expert-tensor-parallel-size), the expert data-parallel degree tp x cp x dp / (etp x ep). */
int config_ep(const struct config *c);
int config_etp(const struct config *c);
int config_expert_dp(const struct config *c);
/* Static bytes a routed expert's parameter takes: config_bytes_per_param over the expert dp
 * (with the distributed optimizer 6 + 12 / edp; Megatron shards the experts' optimizer state
 * over their own data-parallel group, distrib_optimizer.md) */
double moe_expert_bytes_per_param(const struct config *c);

/* Parameter counts of the whole model (every rank's together, the LM head apart from the
 * embedding unless tied): `total` every weight of the main model (the MTP modules apart,
 * in `mtp`), `active` those one token's forward reads (the router's k experts of each MoE
 * block, not the other E - k; embedding and head included, as DeepSeek and Qwen quote it). */
struct moe_counts {
    double total, active, mtp, experts; /* experts: the routed experts' weights */
};
void moe_model_counts(const struct model_spec *m, struct moe_counts *out);

/* The MoE and MLA keys' own limits and Megatron-LM's rules for the groups
 * (megatron/training/arguments.py and parallel_state.py): ep divides model.moe.num_experts,
 * etp x ep divides the GPUs of a pipeline stage (tp x cp x dp), router_topk in [1, E], sequence
 * parallelism with ep > 1 and tp > 1, MLA's dimensions positive and heads divided by tp.
 * Messages name the key ("cluster.ep: 3 does not divide model.moe.num_experts 64"). */
int moe_validate(const struct config *c, struct mt_err *e);

#endif
