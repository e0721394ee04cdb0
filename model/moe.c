/* model/moe.c: the MoE block pattern, the expert groups, the parameter counts and the MoE
 * keys' validation (model/moe.h). */
#include <config.h>
#include "model/moe.h"

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/ops.h"
#include "util/err.h"

bool moe_enabled(const struct model_spec *m)
{
    return m->moe.num_experts > 0;
}

bool mla_enabled(const struct model_spec *m)
{
    return m->mla.kv_lora_rank > 0;
}

bool moe_layer_is_moe(const struct model_spec *m, int layer)
{
    if (!moe_enabled(m) || layer < m->moe.first_k_dense)
        return false;
    int freq = m->moe.layer_freq > 0 ? m->moe.layer_freq : 1;
    return (layer + 1) % freq == 0;
}

int moe_layers_in(const struct model_spec *m, int first, int n)
{
    if (!moe_enabled(m))
        return 0;
    int k = 0;
    for (int i = first; i < first + n; i++)
        k += moe_layer_is_moe(m, i);
    return k;
}

double moe_routing_skew(const struct model_spec *m)
{
    return m->moe.routing_skew > 0 ? m->moe.routing_skew : MOE_ROUTING_SKEW_DEFAULT;
}

int config_ep(const struct config *c)
{
    return c->cluster.ep > 0 ? c->cluster.ep : 1;
}

int config_etp(const struct config *c)
{
    if (c->cluster.etp > 0)
        return c->cluster.etp;
    return c->cluster.tp > 0 ? c->cluster.tp : 1;
}

long moe_expert_fold(const struct config *c)
{
    return (long)(c->cluster.tp > 0 ? c->cluster.tp : 1) * config_cp(c) *
           (c->cluster.dp > 0 ? c->cluster.dp : 1);
}

int config_expert_dp(const struct config *c)
{
    long stage = moe_expert_fold(c);
    long fold = (long)config_ep(c) * config_etp(c);
    return fold > 0 && stage % fold == 0 ? (int)(stage / fold) : 1;
}

double moe_expert_bytes_per_param(const struct config *c)
{
    return config_bytes_per_param_over(c, config_expert_dp(c));
}

/* The parameters of an op list, and of its routed experts (the grouped GEMMs). */
static void list_params(const struct op_list *l, double *all, double *experts)
{
    *all = *experts = 0;
    for (size_t i = 0; i < l->n; i++) {
        *all += l->op[i].params;
        if (l->op[i].kind == OP_GROUPED_GEMM)
            *experts += l->op[i].params;
    }
}

void moe_model_counts(const struct model_spec *m, struct moe_counts *out)
{
    struct config c;
    config_default(&c);
    c.model = *m;
    struct ops_par par = {.tp = 1};
    struct op_list l;
    double dense = 0, moe = 0, moe_experts = 0, ends = 0, head_matrix = 0, x;
    memset(out, 0, sizeof *out);
    int s = m->seq_length;

    op_list_init(&l);
    ops_build_block_par(&c, s, &par, BLOCK_DENSE, &l);
    list_params(&l, &dense, &x);
    op_list_fini(&l);
    if (moe_enabled(m)) {
        op_list_init(&l);
        ops_build_block_par(&c, s, &par, BLOCK_MOE, &l);
        list_params(&l, &moe, &moe_experts);
        op_list_fini(&l);
    }
    op_list_init(&l);
    ops_build_embed_par(&c, s, &par, &l);
    ops_build_head_par(&c, s, &par, &l);
    for (size_t i = 0; i < l.n; i++) {
        ends += l.op[i].params;
        if (l.op[i].site == SITE_HEAD && l.op[i].kind == OP_GEMM && l.op[i].weight)
            head_matrix += l.op[i].params;
    }
    op_list_fini(&l);
    if (config_tied_embeddings(m))
        ends -= head_matrix;
    int n_moe = moe_layers_in(m, 0, m->num_layers), n_dense = m->num_layers - n_moe;
    out->experts = n_moe * moe_experts;
    out->total = n_dense * dense + n_moe * moe + ends;
    double share = moe_enabled(m) ? (double)m->moe.router_topk / m->moe.num_experts : 1;
    out->active = out->total - out->experts + out->experts * share;
    if (m->moe.mtp_layers > 0) {
        op_list_init(&l);
        ops_build_mtp(&c, s, &l);
        list_params(&l, &out->mtp, &x);
        op_list_fini(&l);
    }
}

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return err_set(e, MT_EINVAL, __VA_ARGS__);                                             \
    } while (0)

static int mla_validate(const struct config *c, struct mt_err *e)
{
    const struct mla_spec *a = &c->model.mla;
    if (a->kv_lora_rank == 0) {
        NEED(a->q_lora_rank == 0 && a->qk_nope_head_dim == 0 && a->qk_rope_head_dim == 0 &&
                 a->v_head_dim == 0,
             "model.mla.kv_lora_rank: MLA's head dimensions are given but not its kv_lora_rank");
        return MT_OK;
    }
    NEED(a->kv_lora_rank > 0, "model.mla.kv_lora_rank: must be >= 0 (got %d)", a->kv_lora_rank);
    NEED(a->q_lora_rank >= 0, "model.mla.q_lora_rank: must be >= 0 (got %d)", a->q_lora_rank);
    NEED(a->qk_nope_head_dim > 0, "model.mla.qk_nope_head_dim: must be > 0 (got %d)",
         a->qk_nope_head_dim);
    NEED(a->qk_rope_head_dim > 0 && a->qk_rope_head_dim % 2 == 0,
         "model.mla.qk_rope_head_dim: must be even and > 0 (got %d)", a->qk_rope_head_dim);
    NEED(a->v_head_dim > 0, "model.mla.v_head_dim: must be > 0 (got %d)", a->v_head_dim);
    NEED(c->model.num_attention_heads % c->cluster.tp == 0,
         "cluster.tp: %d does not divide model.num_attention_heads %d (MLA splits its heads)",
         c->cluster.tp, c->model.num_attention_heads);
    return MT_OK;
}

int moe_validate(const struct config *c, struct mt_err *e)
{
    const struct moe_spec *m = &c->model.moe;
    const struct cluster_spec *k = &c->cluster;
    TRY(mla_validate(c, e));
    NEED(k->ep >= 0, "cluster.ep: must be >= 1 (got %d)", k->ep);
    NEED(k->etp >= 0, "cluster.etp: must be >= 1 (got %d)", k->etp);
    NEED(m->num_experts >= 0 && m->num_experts <= MOE_MAX_EXPERTS,
         "model.moe.num_experts: must be in [0, %d] (got %d)", MOE_MAX_EXPERTS, m->num_experts);
    if (m->num_experts == 0) {
        NEED(config_ep(c) == 1, "cluster.ep: %d but the model has no experts "
             "(model.moe.num_experts)", k->ep);
        NEED(k->etp <= 1 || k->etp == k->tp,
             "cluster.etp: %d but the model has no experts (model.moe.num_experts)", k->etp);
        NEED(m->mtp_layers == 0, "model.moe.mtp_num_layers: multi-token prediction is modelled "
             "with a MoE block only (DeepSeek-V3's); the model has no experts");
        return MT_OK;
    }
    NEED(m->router_topk >= 1 && m->router_topk <= m->num_experts,
         "model.moe.router_topk: must be in [1, num_experts %d] (got %d)", m->num_experts,
         m->router_topk);
    NEED(m->ffn_hidden_size >= 1, "model.moe.ffn_hidden_size: must be >= 1 (got %d)",
         m->ffn_hidden_size);
    NEED(m->shared_ffn >= 0, "model.moe.shared_expert_intermediate_size: must be >= 0 (got %d)",
         m->shared_ffn);
    NEED(m->layer_freq >= 0 && m->layer_freq <= c->model.num_layers,
         "model.moe.layer_freq: must be in [1, num_layers %d] (got %d)", c->model.num_layers,
         m->layer_freq);
    NEED(m->first_k_dense >= 0 && m->first_k_dense < c->model.num_layers,
         "model.moe.first_k_dense: must be in [0, num_layers %d) (got %d)", c->model.num_layers,
         m->first_k_dense);
    NEED(m->mtp_layers >= 0 && m->mtp_layers <= 16,
         "model.moe.mtp_num_layers: must be in [0, 16] (got %d)", m->mtp_layers);
    NEED(isfinite(m->routing_skew) && (m->routing_skew == 0 || m->routing_skew >= 1),
         "model.moe.routing_skew: must be >= 1, the busiest rank's tokens over the mean "
         "(got %g)", m->routing_skew);
    NEED(isfinite(m->capacity_factor) && m->capacity_factor >= 0,
         "model.moe.capacity_factor: must be > 0, or 0 for dropless (got %g)",
         m->capacity_factor);
    NEED(config_framework(c) != FRAMEWORK_MEGATRON_DS_2021,
         "cluster.framework: the 2021 Megatron-DeepSpeed estimate has no expert layers; use "
         "megatron-core or torchtitan");
    int ep = config_ep(c), etp = config_etp(c);
    /* Megatron-LM (arguments.py): num_experts % expert_model_parallel_size == 0 */
    NEED(m->num_experts % ep == 0, "cluster.ep: %d does not divide model.moe.num_experts %d", ep,
         m->num_experts);
    /* parallel_state.py: the expert fold etp x ep x edp = tp x cp x dp of a stage */
    long stage = moe_expert_fold(c);
    NEED(stage % ((long)ep * etp) == 0,
         "cluster.ep: ep %d x etp %d = %ld does not divide the %ld GPUs of a pipeline stage "
         "(tp %d x cp %d x dp %d)", ep, etp, (long)ep * etp, stage, k->tp, config_cp(c), k->dp);
    NEED(m->ffn_hidden_size % etp == 0,
         "cluster.etp: %d does not divide model.moe.ffn_hidden_size %d", etp, m->ffn_hidden_size);
    /* arguments.py: "When using expert parallelism and tensor parallelism, sequence
     * parallelism must be used" */
    NEED(!(ep > 1 && k->tp > 1) || c->sequence_parallel,
         "sequence_parallel: Megatron-LM requires it with cluster.ep %d and cluster.tp %d", ep,
         k->tp);
    return MT_OK;
}
