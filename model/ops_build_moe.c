/* model/ops_build_moe.c: a mixture-of-experts sublayer as the kernels it runs, in order, per
 * rank (issue 38 item 1), after Megatron-core's MoELayer with the all-to-all token dispatcher
 * (megatron/core/transformer/moe/moe_layer.py, token_dispatcher.py
 * MoEAlltoAllTokenDispatcher): the pre-MLP norm; the router (a replicated h -> E linear, its
 * softmax or sigmoid and top-k); permute (each token copied once for each of its k experts,
 * sorted by expert); the dispatch all-to-all over the EP group; with expert TP an all-gather of
 * the tokens over etp; the experts as grouped GEMMs (fc1 [gate | up], the GLU, fc2); the
 * reduce-scatter over etp; the combine all-to-all back; unpermute (the k copies weighted by
 * their router probabilities and summed); the shared experts, a tensor-parallel MLP on every
 * token (DeepSeekMoE, Dai et al. 2024); the residual.
 *
 * A rank's share: E / ep experts, each fc a (m x h) . (h x f/etp) product with m the tokens of
 * one expert. The tokens a rank computes are those of its EP group spread over ep ranks,
 * tok x k per rank on average, x etp with expert TP (each etp rank sees its peers' tokens and
 * computes 1/etp of each expert's width), times the routing skew: the busiest rank sets the
 * pace, every rank waits for it at the combine (default 1.2, model.moe.routing_skew). Dropless
 * by default (Megatron's default, --moe-expert-capacity-factor unset); with a capacity factor
 * an expert takes at most cf x its mean share, so the busiest rank computes min(skew, cf) x.
 *
 * The all-to-alls, four a MoE block and micro-batch: dispatch and combine in the forward, and
 * in the backward their mirrors (the combine's gradient goes out as a dispatch, the dispatch's
 * comes back as a combine). Each moves the buffer of tok x k rows of h (the rank's routed
 * copies): (ep-1)/ep of it leaves the rank (op_coll_bus_factor). The forward dispatch in FP8
 * with model.moe.fp8_dispatch (DeepSeek-V3 report §3.3.2: dispatch in FP8 with a scale each 128
 * values, combine and the backward in BF16). NVLink or the network by where the EP group sits
 * (model/price.h price_link_of, Megatron's rank order). */
#include <config.h>
#include "model/moe.h"

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/ops.h"
#include "model/ops_shape.h"
#include "model/price.h"

void moe_shape_of(const struct config *c, const struct ops_par *par, struct shape *sh)
{
    const struct model_spec *m = &c->model;
    const struct moe_spec *moe = &m->moe;
    sh->ep = par->ep > 0 ? par->ep : 1;
    sh->etp = par->etp > 0 ? par->etp : 1;
    sh->ep_link = price_link_of(c, GROUP_EP, sh->ep);
    sh->etp_link = ops_link_of(c, GROUP_TP, sh->etp); /* etp is innermost, as tp */
    if (moe->num_experts > 0) {
        sh->experts = (double)moe->num_experts / sh->ep;
        sh->topk = moe->router_topk;
        sh->moe_ffn = (double)moe->ffn_hidden_size / sh->etp;
        sh->shared_ffn = (double)moe->shared_ffn / sh->t;
        sh->tok_moe = sh->tok_r;
        double skew = moe_routing_skew(m);
        if (moe->capacity_factor > 0)
            skew = fmin(skew, moe->capacity_factor);
        sh->routed_skew = skew;
        sh->routed = sh->tok_moe * sh->topk * sh->etp * skew;
        sh->fp8_dispatch = moe->fp8_dispatch;
        sh->router_bias = moe->router_bias;
    }
    const struct mla_spec *mla = &m->mla;
    if (mla->kv_lora_rank > 0) {
        sh->mla = true;
        sh->q_lora = mla->q_lora_rank;
        sh->kv_lora = mla->kv_lora_rank;
        sh->d_nope = mla->qk_nope_head_dim;
        sh->d_rope = mla->qk_rope_head_dim;
        sh->d_v = mla->v_head_dim;
    }
}

/* An all-to-all over the EP group (none at ep = 1: every routed copy stays on the rank). */
static void push_a2a(struct op_list *l, const struct shape *sh, const char *name,
                     enum op_dtype dt, double bytes, enum op_pass pass)
{
    if (sh->ep <= 1)
        return;
    struct op o = {.kind = OP_COLLECTIVE, .name = name, .site = SITE_LAYER, .dtype = dt,
                   .coll = COLL_ALL_TO_ALL, .group_kind = GROUP_EP, .bytes = bytes,
                   .group = sh->ep, .link = sh->ep_link, .pass = pass,
                   .source = "expert all-to-all (Megatron MoEAlltoAllTokenDispatcher): the "
                             "rank's tok x k routed rows of h, (ep-1)/ep of them leave it; "
                             "FP8 dispatch with a scale a 128 values (DeepSeek-V3 §3.3.2)"};
    op_list_push(l, &o);
}

/* A collective over the expert-TP group (the tokens gathered before the experts and their
 * outputs reduce-scattered after, Megatron's dispatcher with expert_tensor_parallel_size > 1). */
static void push_etp(struct op_list *l, const struct shape *sh, const char *name,
                     enum op_coll coll, double bytes, enum op_pass pass)
{
    if (sh->etp <= 1)
        return;
    struct op o = {.kind = OP_COLLECTIVE, .name = name, .site = SITE_LAYER, .dtype = sh->dtype,
                   .coll = coll, .group_kind = GROUP_TP, .bytes = bytes, .group = sh->etp,
                   .link = sh->etp_link, .pass = pass,
                   .source = "expert tensor parallelism: the routed tokens all-gathered over "
                             "etp before the experts, their outputs reduce-scattered after "
                             "(Megatron token_dispatcher.py)"};
    op_list_push(l, &o);
}

static void push_grouped(struct op_list *l, const struct shape *sh, const char *name,
                         const char *source, double n, double k, double keep)
{
    double rows = sh->routed / sh->experts; /* tokens of one expert on this rank */
    struct op o = {.kind = OP_GROUPED_GEMM, .name = name, .source = source, .site = SITE_LAYER,
                   .dtype = sh->dtype, .m = rows, .n = n, .k = k, .count = sh->experts,
                   .weight = true, .params = sh->experts * n * k, .keep_bytes = keep};
    o.w_keep_bytes = sh->e * sh->routed * k + sh->e * sh->routed * n;
    if (sh->fp8.recipe != FP8_NONE) /* TE's grouped linear under the recipe (model/fp8.h) */
        ops_push_fp8_gemm(l, sh, &o, sh->routed * k, sh->routed * n);
    else
        op_list_push(l, &o);
}

void ops_build_moe_mlp(struct op_list *l, const struct shape *sh)
{
    const double e = sh->e, h = sh->h, T = sh->tok_moe, k = sh->topk, E = sh->experts * sh->ep;
    const double R = sh->routed, f = sh->moe_ffn;
    const bool glu = sh->mlp != MLP_GELU;

    ops_push_norm(l, sh, SITE_LAYER, "mlp_norm", e * sh->tok_r * h);
    /* the router: replicated on every TP rank, on the rank's (sequence-split) tokens */
    ops_push_gemm(l, sh, SITE_LAYER, "router",
                  "MoE router, a replicated linear h -> E (Megatron TopKRouter): 2mnk; keeps its "
                  "input",
                  T, E, h, E * h + (sh->router_bias ? E : 0), e * T * h);
    /* softmax (or DeepSeek-V3's sigmoid) over the E scores in fp32 and the top k: reads the
     * logits, writes the fp32 scores and the k probabilities and indices; keeps the scores */
    ops_push_mem(l, sh, SITE_LAYER, "router_topk",
                 "router scores in fp32 and top-k (Megatron moe_utils topk_softmax_with_capacity):"
                 " reads the logits, writes the fp32 scores, k probabilities and indices; keeps "
                 "the scores 4 tok E",
                 (e + 4) * T * E + 8 * T * k, 3 * 4 * T * E, 0, 4 * T * E);
    ops_push_mem(l, sh, SITE_LAYER, "permute",
                 "permute: each token copied to its k experts' rows, sorted by expert (Megatron "
                 "moe_utils.permute); the backward scatter-adds; keeps the int32 row map",
                 e * T * h + e * T * k * h, e * T * k * h + e * T * h, 0, 4 * T * k);
    double copies = T * k; /* the routed rows this rank sends (and, balanced, receives) */
    bool fp8 = sh->fp8_dispatch;
    push_a2a(l, sh, "ep_dispatch", fp8 ? OP_FP8 : sh->dtype,
             fp8 ? copies * (h + 4 * h / 128) : e * copies * h, PASS_FW);
    push_a2a(l, sh, "ep_dispatch_dx", sh->dtype, e * copies * h, PASS_B);
    push_etp(l, sh, "etp_gather_tokens", COLL_ALL_GATHER, e * R * h / sh->routed_skew, PASS_FW);
    push_etp(l, sh, "etp_reduce_tokens_dx", COLL_REDUCE_SCATTER, e * R * h / sh->routed_skew,
             PASS_B);
    if (glu) {
        push_grouped(l, sh, "experts_gate_up",
                     "grouped GEMM of the E/ep local experts, h -> [gate | up] 2f/etp (Megatron "
                     "GroupedMLP / TEGroupedMLP): 2mnk per expert; keeps its input",
                     2 * f, h, e * R * h);
        ops_push_mem(l, sh, SITE_LAYER, sh->mlp == MLP_GEGLU ? "experts_geglu" : "experts_swiglu",
                     "the experts' GLU on the routed rows: reads gate, up, writes the product; "
                     "keeps gate, up and act(gate)",
                     3 * e * R * f, 5 * e * R * f, 0, 3 * e * R * f);
    } else {
        push_grouped(l, sh, "experts_fc1",
                     "grouped GEMM of the E/ep local experts, h -> f/etp: 2mnk per expert; keeps "
                     "its input",
                     f, h, e * R * h);
        ops_push_mem(l, sh, SITE_LAYER, "experts_gelu",
                     "the experts' GELU on the routed rows: reads and writes R f; keeps its input",
                     2 * e * R * f, 3 * e * R * f, 0, e * R * f);
    }
    push_grouped(l, sh, "experts_down",
                 "grouped GEMM of the local experts, f/etp -> h: 2mnk per expert; keeps its input",
                 h, f, e * R * f);
    push_etp(l, sh, "etp_reduce_tokens", COLL_REDUCE_SCATTER, e * R * h / sh->routed_skew,
             PASS_FW);
    push_etp(l, sh, "etp_gather_tokens_dy", COLL_ALL_GATHER, e * R * h / sh->routed_skew, PASS_B);
    push_a2a(l, sh, "ep_combine", sh->dtype, e * copies * h, PASS_FW);
    push_a2a(l, sh, "ep_combine_dy", sh->dtype, e * copies * h, PASS_B);
    /* the weighted sum of the k copies: the probabilities' gradient needs the expert outputs */
    ops_push_mem(l, sh, SITE_LAYER, "unpermute",
                 "unpermute: the k expert outputs of each token weighted by its probabilities "
                 "and summed (Megatron moe_utils.unpermute); keeps the expert outputs tok k h",
                 e * T * k * h + 4 * T * k + e * T * h, 2 * e * T * k * h + e * T * h, 0,
                 e * T * k * h);
    if (sh->shared_ffn > 0) {
        /* the shared experts: a tensor-parallel GLU MLP over every token (Megatron
         * SharedExpertMLP), its entry and exit the TP group's as the dense MLP's */
        double sf = sh->shared_ffn, Tf = sh->tokens;
        ops_push_tp_entry_linear(l, sh, SITE_LAYER, "tp_gather_shared", "tp_reduce_shared_dx",
                                 "tp_regather_shared");
        ops_push_linear(l, sh, SITE_LAYER, "shared_gate_up",
                      "shared experts, column-parallel h -> [gate | up] 2f_s/t (DeepSeekMoE): "
                      "2mnk; keeps its input",
                      Tf, 2 * sf, h, 2 * h * sf, e * sh->tok_r * h);
        ops_push_mem(l, sh, SITE_LAYER, "shared_swiglu",
                     "shared experts' SwiGLU: reads gate, up, writes the product; keeps gate, up "
                     "and silu(gate)",
                     3 * e * Tf * sf, 5 * e * Tf * sf, 0, 3 * e * Tf * sf);
        ops_push_linear(l, sh, SITE_LAYER, "shared_down",
                      "shared experts, row-parallel f_s/t -> h: 2mnk; keeps its input", Tf, h, sf,
                      sf * h, e * Tf * sf);
        ops_push_tp_exit(l, sh, "tp_reduce_shared", "tp_gather_shared_dy");
    }
    ops_push_residual(l, sh, "mlp_residual");
}

void ops_build_mtp(const struct config *c, int seq, struct op_list *out)
{
    struct ops_par par = ops_par_of(c);
    struct shape sh;
    ops_shape_of(c, seq, &par, &sh);
    double e = sh.e, h = sh.h, x = e * sh.tok_r * h;
    for (int d = 0; d < c->model.moe.mtp_layers; d++) {
        /* DeepSeek-V3 §2.2, Figure 3: RMSNorm of the previous depth's hidden state and of the
         * next token's embedding (the main model's table), concatenated and projected 2h -> h */
        ops_push_mem(out, &sh, SITE_HEAD, "mtp_norms",
                     "MTP: RMSNorm of the hidden state and of the shifted token's embedding "
                     "(DeepSeek-V3 §2.2, enorm and hnorm): keeps both inputs",
                     4 * x, 6 * x, 2 * h, 2 * x);
        ops_push_tp_entry(out, &sh, SITE_HEAD, "tp_gather_mtp", "tp_reduce_mtp_dx",
                          "tp_regather_mtp");
        ops_push_gemm(out, &sh, SITE_HEAD, "mtp_eh_proj",
                      "MTP projection [h; emb] 2h -> h (DeepSeek-V3 eh_proj), column-parallel: "
                      "2mnk; keeps its input",
                      sh.tokens, h / sh.t, 2 * h, 2 * h * h / sh.t, 2 * x);
        size_t from = out->n;
        ops_build_block_par(c, seq, &par, BLOCK_MOE, out);
        size_t head_from = out->n;
        ops_build_head_par(c, seq, &par, out);
        for (size_t i = from; i < out->n; i++) {
            out->op[i].site = SITE_HEAD;
            /* the output matrix is the main head's (shared_head.head): its weights once */
            if (i >= head_from && out->op[i].kind == OP_GEMM)
                out->op[i].params = 0;
        }
    }
}
