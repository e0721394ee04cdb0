/* model/ops_build_mla.c: multi-head latent attention (DeepSeek-V2, Liu et al. 2024, §2.1;
 * DeepSeek-V3's config: q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
 * qk_rope_head_dim 64, v_head_dim 128) as the kernels Megatron-core's MLASelfAttention runs
 * (megatron/core/transformer/multi_latent_attention.py), per rank:
 *   q: a down-projection h -> q_lora (W^DQ), an RMSNorm, an up-projection q_lora ->
 *      heads x (d_nope + d_rope) (W^UQ and W^QR together); without q_lora (DeepSeek-V2-Lite)
 *      one projection h -> heads x (d_nope + d_rope);
 *   kv: a down-projection h -> kv_lora + d_rope (W^DKV and the shared rotary key W^KR), an
 *      RMSNorm of the latent, an up-projection kv_lora -> heads x (d_nope + d_v) (W^UK, W^UV);
 *   rotary on q's and k's d_rope parts; the attention core over heads of d_nope + d_rope for
 *      q and k and d_v for v; the output projection heads x d_v -> h.
 * The down-projections are replicated over tp (Megatron builds them "duplicated") and run on
 * the rank's own tokens, sequence-split with SP, whose latents are then all-gathered (the
 * backward reduce-scatters their gradients); the up-projections are column-parallel over the
 * heads, the output projection row-parallel with the block's usual exit. Parameters of a
 * layer: h q_lora + q_lora + q_lora a (d_nope + d_rope) + h (kv_lora + d_rope) + kv_lora +
 * kv_lora a (d_nope + d_v) + a d_v h (+ the norm's h). */
#include <config.h>

#include "model/config.h"
#include "model/ops.h"
#include "model/ops_shape.h"

void ops_build_mla(struct op_list *l, const struct shape *sh)
{
    const double e = sh->e, h = sh->h, T = sh->tokens, Tr = sh->tok_r, a = sh->heads;
    const double dqk = sh->d_nope + sh->d_rope, dv = sh->d_v, ql = sh->q_lora, kl = sh->kv_lora;
    const double kv_down_n = kl + sh->d_rope;

    ops_push_norm(l, sh, SITE_LAYER, "attn_norm", e * Tr * h);
    if (!sh->sp) /* the replicated input's gradient summed over tp (Megatron's f operator) */
        ops_push_tp_coll(l, sh, SITE_LAYER, "tp_reduce_attn_dx", COLL_ALL_REDUCE, e * T * h,
                         PASS_B, false);
    if (ql > 0) {
        ops_push_linear(l, sh, SITE_LAYER, "q_down",
                      "MLA query down-projection h -> q_lora (W^DQ, DeepSeek-V2 eq. 12), "
                      "replicated over tp on the rank's tokens: 2mnk; keeps its input",
                      Tr, ql, h, h * ql, e * Tr * h);
        ops_push_linear(l, sh, SITE_LAYER, "kv_down",
                      "MLA key-value down-projection h -> kv_lora + d_rope (W^DKV and W^KR, eqs. "
                      "9 and 15), replicated: 2mnk; shares q_down's input",
                      Tr, kv_down_n, h, h * kv_down_n, 0);
    } else {
        ops_push_linear(l, sh, SITE_LAYER, "kv_down",
                      "MLA key-value down-projection h -> kv_lora + d_rope (W^DKV and W^KR, eqs. "
                      "9 and 15), replicated on the rank's tokens: 2mnk; keeps its input",
                      Tr, kv_down_n, h, h * kv_down_n, e * Tr * h);
    }
    if (sh->sp) { /* the latents gathered over tp, their gradients reduce-scattered */
        double lat = e * T * ((ql > 0 ? ql : 0) + kv_down_n);
        ops_push_tp_coll(l, sh, SITE_LAYER, "tp_gather_latents", COLL_ALL_GATHER, lat, PASS_FW,
                         false);
        ops_push_tp_coll(l, sh, SITE_LAYER, "tp_reduce_latents_dx", COLL_REDUCE_SCATTER, lat,
                         PASS_B, false);
        if (ql == 0) /* q projects the hidden state itself: gathered as a dense block's */
            ops_push_tp_entry(l, sh, SITE_LAYER, "tp_gather_attn", "tp_reduce_attn_dx",
                              "tp_regather_attn");
    }
    if (ql > 0) {
        ops_push_mem(l, sh, SITE_LAYER, "q_norm",
                     "RMSNorm of the query latent (q_a_layernorm): reads and writes T q_lora; "
                     "keeps its input",
                     2 * e * T * ql, 3 * e * T * ql, ql, e * T * ql);
        ops_push_norm_linear(l, sh, SITE_LAYER, "q_up",
                      "MLA query up-projection q_lora -> heads (d_nope + d_rope) (W^UQ, W^QR), "
                      "column-parallel: 2mnk; keeps its input",
                      T, a * dqk, ql, ql * a * dqk, e * T * ql);
    } else {
        ops_push_linear(l, sh, SITE_LAYER, "q_proj",
                      "MLA query projection h -> heads (d_nope + d_rope) (no q_lora: "
                      "DeepSeek-V2-Lite), column-parallel: 2mnk; its input is kv_down's, kept there",
                      T, a * dqk, h, h * a * dqk, 0);
    }
    ops_push_mem(l, sh, SITE_LAYER, "kv_norm",
                 "RMSNorm of the key-value latent (kv_a_layernorm): reads and writes T kv_lora; "
                 "keeps its input",
                 2 * e * T * kl, 3 * e * T * kl, kl, e * T * kl);
    ops_push_norm_linear(l, sh, SITE_LAYER, "kv_up",
                  "MLA key-value up-projection kv_lora -> heads (d_nope + d_v) (W^UK, W^UV), "
                  "column-parallel: 2mnk; keeps its input",
                  T, a * (sh->d_nope + dv), kl, kl * a * (sh->d_nope + dv), e * T * kl);
    double rope = e * T * (a + 1) * sh->d_rope;
    ops_push_mem(l, sh, SITE_LAYER, "rotary",
                 "decoupled rotary embedding of q's heads' and the shared key's d_rope parts "
                 "(DeepSeek-V2 §2.1.3): reads and writes them; keeps nothing",
                 2 * rope, 2 * rope, 0, 0);
    double qkv_keep = e * T * a * (2 * dqk + dv);
    struct op core = {.kind = OP_ATTENTION, .name = "core_attn", .site = SITE_LAYER,
                      .dtype = sh->dtype, .batch = sh->b, .s_q = sh->s, .s_kv = sh->s,
                      .heads = a, .kv_heads = a, .head_dim = dqk, .head_dim_v = dv,
                      .causal = true, .flash = sh->flash};
    if (sh->flash) {
        core.keep_bytes = qkv_keep + 4 * sh->b * a * sh->s;
        core.source = "MLA core, FlashAttention with q, k of d_nope + d_rope and v of d_v: fw "
                      "2 b a pairs (d_qk + d_v), bw 2.5x; keeps q, k, v and the fp32 lse";
        op_list_push(l, &core);
    } else {
        core.keep_bytes = qkv_keep;
        core.source = "MLA core, eager: Q K^T and P V over the whole square; keeps q, k, v";
        op_list_push(l, &core);
        double sq = sh->b * a * sh->s * sh->s;
        ops_push_mem(l, sh, SITE_LAYER, "attn_softmax",
                     "masked softmax of the scores: reads S, writes P; keeps P", 2 * e * sq,
                     3 * e * sq, 0, e * sq);
    }
    ops_push_linear(l, sh, SITE_LAYER, "proj",
                  "row-parallel linear heads d_v -> h (W^O): 2mnk; keeps its input", T, h, a * dv,
                  a * dv * h, e * T * a * dv);
    ops_push_tp_exit(l, sh, "tp_reduce_attn", "tp_gather_attn_dy");
    ops_push_residual(l, sh, "attn_residual");
}
