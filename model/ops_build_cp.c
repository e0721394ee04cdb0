/* model/ops_build_cp.c: the attention core of one context-parallel rank (model/ops.h). Every
 * other op of a block simply holds s / cp tokens (ops_build.c's ops_shape_of); only the
 * attention needs the other ranks' keys and values. Megatron-core's context parallelism
 * (docs "context_parallel", --cp-comm-type) runs Transformer Engine's attention with one of
 * four exchanges (TE attention.py, cp_comm_type), restated here:
 *
 *   load balance: the causal mask gives late queries more keys, so the sequence is cut into
 *     2 cp chunks and rank r holds chunks r and 2 cp - 1 - r (a head and a tail): every rank
 *     then has the same query-key pairs (ops_cp_causal_pairs; Llama 3 §3.3.2 does the same).
 *   p2p: the K/V blocks go round a ring of cp ranks. Step 0 is the rank's own two chunks
 *     against themselves (causal, 2c x 2c, c = s / 2cp); each of the cp - 1 other steps is
 *     2c queries against half a block (the earlier ranks' head chunk) or the tail's c queries
 *     against a whole block: 2c^2 pairs, no mask. The next block's send/recv runs while a
 *     block computes, so only what outlasts the blocks shows (model/cost.c). The backward
 *     sends K/V and dK/dV round the ring: twice the bytes.
 *   all_gather: K and V all-gathered before the attention, the rank's two chunks each against
 *     the keys before them (Llama 3's choice: the K/V of GQA are small beside Q, and the gather
 *     is one collective, but exposed). The backward gathers K/V again (only the local ones are
 *     kept) and reduce-scatters dK/dV.
 *   a2a: DeepSpeed-Ulysses (Jacobs et al. 2023): an all-to-all turns the sequence split of
 *     Q, K, V into a head split, the attention runs the whole sequence on heads / cp, and an
 *     all-to-all brings O back; the backward mirrors both. Needs cp | heads.
 *   a2a+p2p: hierarchical (Megatron --hierarchical-context-parallel-sizes): the all-to-all over
 *     the a CP ranks of a node, then p2p over the ring of cp / a groups. */
#include <config.h>
#include "model/ops.h"

#include "model/config.h"
#include "model/price.h"

struct ops_cp ops_cp_of(const struct config *c)
{
    struct ops_cp x = {.cp = config_cp(c), .mode = c->cluster.cp_comm_type};
    x.a2a = config_cp_a2a_size(c);
    x.ring = x.cp / x.a2a;
    x.a2a_link = ops_link_of(c, GROUP_CP, x.a2a);
    /* the ring spans the whole CP group (the a2a ranks are its inner level) */
    x.ring_link = ops_link_of(c, GROUP_CP, x.cp);
    return x;
}

double ops_cp_causal_pairs(double s, int cp, int rank, bool balanced)
{
    /* queries [q0, q0 + n) see keys [0, q + 1): n q0 + n (n + 1) / 2 pairs */
    double n = balanced ? s / (2.0 * cp) : s / cp;
    if (!balanced)
        return n * (rank * n) + n * (n + 1) / 2;
    double head = rank * n, tail = (2.0 * cp - 1 - rank) * n;
    return n * head + n * (n + 1) / 2 + n * tail + n * (n + 1) / 2;
}

static void push_cp_coll(struct op_list *l, const struct op *core, const char *name,
                         enum op_coll coll, double bytes, int group, enum op_link link,
                         enum op_pass pass, bool overlapped, const char *source)
{
    struct op o = {.kind = OP_COLLECTIVE, .name = name, .source = source, .site = SITE_LAYER,
                   .dtype = core->dtype, .coll = coll, .group_kind = GROUP_CP, .bytes = bytes,
                   .group = group, .link = link, .pass = pass, .overlapped = overlapped};
    op_list_push(l, &o);
}

/* K and V of `tokens` tokens of this rank's heads, bytes */
static double kv_bytes(const struct op *a, double tokens)
{
    double dv = a->head_dim_v > 0 ? a->head_dim_v : a->head_dim;
    return op_dtype_bytes(a->dtype) * a->batch * tokens * a->kv_heads * (a->head_dim + dv);
}

/* The ring over `ring` ranks of the attention `a` (its heads after any all-to-all, its s_q =
 * s_kv the sequence the ring splits): the diagonal step and the ring - 1 off-diagonal ones. */
static void push_ring(struct op_list *l, const struct op *a, int ring, enum op_link link)
{
    double S = a->s_q, c = S / (2.0 * ring);
    struct op diag = *a;
    diag.s_q = diag.s_kv = 2 * c;
    diag.source = "context parallel p2p, step 0: the rank's head and tail chunks against "
                  "themselves (causal, 2c x 2c, c = s / 2cp; TE AttnFuncWithCPAndKVP2P)";
    op_list_push(l, &diag);
    if (ring <= 1)
        return;
    struct op off = *a;
    off.name = "core_attn_ring";
    off.s_q = 2 * c;
    off.s_kv = c;
    off.causal = false;
    off.batch = a->batch * (ring - 1); /* ring - 1 blocks of one shape */
    off.keep_bytes = 0;
    off.source = "context parallel p2p, steps 1..cp-1: 2c queries against half a K/V block "
                 "(or the tail's c against a whole one), 2c^2 pairs, no mask";
    op_list_push(l, &off);
    double block = kv_bytes(a, 2 * c); /* one rank's K/V: its two chunks */
    push_cp_coll(l, a, "cp_ring_kv", COLL_SEND_RECV, (ring - 1) * block, ring, link, PASS_FW,
                 true,
                 "context parallel p2p: K/V blocks round the ring, cp - 1 sends of the rank's "
                 "2c tokens, each under a block's compute (TE cp_comm_type p2p)");
    push_cp_coll(l, a, "cp_ring_kv_dkv", COLL_SEND_RECV, 2 * (ring - 1) * block, ring, link,
                 PASS_B, true,
                 "context parallel p2p backward: K/V and dK/dV round the ring, 2 (cp - 1) "
                 "blocks, each under a block's backward");
}

void ops_build_cp_attention(const struct ops_cp *cp, const struct op *core, struct op_list *out)
{
    if (cp->cp <= 1) {
        op_list_push(out, core);
        return;
    }
    double S = core->s_q;
    switch (cp->mode) {
    case CP_COMM_P2P: push_ring(out, core, cp->cp, cp->ring_link); return;
    case CP_COMM_ALL_GATHER: {
        double c = S / (2.0 * cp->cp), all = kv_bytes(core, S);
        push_cp_coll(out, core, "cp_gather_kv", COLL_ALL_GATHER, all, cp->cp, cp->ring_link,
                     PASS_FW, false,
                     "context parallel all_gather: K and V of the whole sequence gathered "
                     "before the attention, exposed (Llama 3 §3.3.2; TE cp_comm_type all_gather)");
        /* rank 0's chunks: the head (c queries, c keys) and the tail (c queries, all keys);
         * every rank has the same pairs, rank 0 the least even pair of kernels */
        struct op head = *core, tail = *core;
        head.s_q = head.s_kv = c;
        head.work_bytes = all;
        head.source = "context parallel all_gather: the head chunk's c queries against the "
                      "keys up to it (causal)";
        tail.name = "core_attn_tail";
        tail.s_q = c;
        tail.s_kv = S;
        tail.keep_bytes = 0;
        tail.work_bytes = all;
        tail.source = "context parallel all_gather: the tail chunk's c queries against the keys "
                      "up to it (causal)";
        op_list_push(out, &head);
        op_list_push(out, &tail);
        push_cp_coll(out, core, "cp_regather_kv", COLL_ALL_GATHER, all, cp->cp, cp->ring_link,
                     PASS_B, false,
                     "context parallel all_gather backward: K/V gathered again (only the "
                     "rank's own are kept)");
        push_cp_coll(out, core, "cp_reduce_scatter_dkv", COLL_REDUCE_SCATTER, all, cp->cp,
                     cp->ring_link, PASS_B, false,
                     "context parallel all_gather backward: dK/dV of the whole sequence "
                     "reduce-scattered to their ranks");
        return;
    }
    case CP_COMM_A2A:
    case CP_COMM_A2A_P2P: {
        int a = cp->a2a;
        double e = op_dtype_bytes(core->dtype), local = S / cp->cp;
        double dv = core->head_dim_v > 0 ? core->head_dim_v : core->head_dim;
        double qkv = e * core->batch * local *
                     (core->heads * core->head_dim + core->kv_heads * (core->head_dim + dv));
        double o = e * core->batch * local * core->heads * dv;
        static const char a2a_src[] =
            "context parallel a2a (DeepSpeed-Ulysses, Jacobs et al. 2023): the sequence split "
            "of Q, K, V turned into a head split; O back (TE cp_comm_type a2a)";
        push_cp_coll(out, core, "cp_a2a_qkv", COLL_ALL_TO_ALL, qkv, a, cp->a2a_link, PASS_FW,
                     false, a2a_src);
        struct op h = *core;
        h.heads = core->heads / a;
        h.kv_heads = core->kv_heads / a;
        /* after the all-to-all a rank holds its a2a group's S / ring tokens on heads / a; the
         * ring of cp / a groups splits the whole sequence among them */
        push_ring(out, &h, cp->ring, cp->ring_link);
        push_cp_coll(out, core, "cp_a2a_out", COLL_ALL_TO_ALL, o, a, cp->a2a_link, PASS_FW, false,
                     a2a_src);
        push_cp_coll(out, core, "cp_a2a_dout", COLL_ALL_TO_ALL, o, a, cp->a2a_link, PASS_B,
                     false, a2a_src);
        push_cp_coll(out, core, "cp_a2a_dqkv", COLL_ALL_TO_ALL, qkv, a, cp->a2a_link, PASS_B,
                     false, a2a_src);
        return;
    }
    default: op_list_push(out, core); return;
    }
}
