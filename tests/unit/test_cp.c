/* tests/unit/test_cp.c: context parallelism (issue 39 item 1; model/ops_build_cp.c,
 * model/config_parallel.c) against cases worked by hand:
 *   the causal pairs of a 2-rank CP over 8 tokens, load-balanced (chunks of 2: rank 0 holds
 *   tokens 0-1 and 6-7: 1 + 2 + 7 + 8 = 18 pairs; rank 1 tokens 2-5: 3 + 4 + 5 + 6 = 18) and
 *   contiguous (rank 0 tokens 0-3: 10, rank 1 4-7: 26); 36 = 8 x 9 / 2 in all;
 *   Llama-3.1-8B (8 K/V heads of 128, bf16) at 8,192 tokens: K + V = 2 x 8192 x 8 x 128 x 2 B
 *   = 32 MiB all-gathered and dK/dV reduce-scattered; p2p cp 2: one 16 MiB block forward,
 *   32 MiB (K/V + dK/dV) backward; a2a cp 2 (32 query heads): Q,K,V of 4,096 tokens
 *   2 x 4096 x (32 x 128 + 8 x 256) = 48 MiB, O 32 MiB;
 *   every mode's attention FLOPs = the unsplit causal attention's / cp; activations / cp;
 *   GPUs = tp x cp x pp x dp. */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/ops.h"
#include "model/presets.h"
#include "tests/check.h"
#include "util/err.h"

static const struct op *find(const struct op_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->op[i].name, name) == 0)
            return &l->op[i];
    return NULL;
}

static void llama8b(struct config *c, int cp, enum cp_comm_type mode)
{
    config_default(c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c->model, NULL), MT_OK);
    c->model.seq_length = 8192;
    c->cluster.cp = cp;
    c->cluster.cp_comm_type = mode;
    c->num_device = 8 * cp;
}

static void test_pairs(void)
{
    CHECK_NEAR(ops_cp_causal_pairs(8, 2, 0, true), 18, 0);
    CHECK_NEAR(ops_cp_causal_pairs(8, 2, 1, true), 18, 0);
    CHECK_NEAR(ops_cp_causal_pairs(8, 2, 0, false), 10, 0);
    CHECK_NEAR(ops_cp_causal_pairs(8, 2, 1, false), 26, 0);
    /* balanced: every rank s (s + 1) / (2 cp) pairs, whatever cp */
    for (int cp = 1; cp <= 16; cp *= 2)
        for (int r = 0; r < cp; r++)
            CHECK_NEAR(ops_cp_causal_pairs(131072, cp, r, true), 131072.0 * 131073 / 2 / cp, 0);
    /* contiguous: the last rank does 2 cp - 1 times the first's (the triangle aside) */
    CHECK(ops_cp_causal_pairs(131072, 16, 15, false) > 30 * ops_cp_causal_pairs(131072, 16, 0, false));
}

static double attn_fw_flops(const struct op_list *l)
{
    double f = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->op[i].kind == OP_ATTENTION)
            f += op_flops(&l->op[i], PASS_FW);
    return f;
}

static double keep(const struct op_list *l)
{
    double k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += l->op[i].keep_bytes;
    return k;
}

static void test_modes(void)
{
    struct config c;
    llama8b(&c, 1, CP_COMM_P2P);
    struct op_list one;
    op_list_init(&one);
    ops_build_layer(&c, 8192, &one);
    /* FlashAttention's causal pairs at cp 1: 8192 x 8193 / 2, 32 heads, d 128 */
    CHECK_NEAR(attn_fw_flops(&one), 2.0 * 32 * (8192.0 * 8193 / 2) * 256, 0);
    const double MiB = 1024.0 * 1024;
    for (int m = 0; m < CP_COMM__COUNT; m++) {
        if (m == CP_COMM_A2A_P2P)
            continue; /* 8 K/V heads at tp 1 over a node of 8: a2a over 2, no ring (below) */
        llama8b(&c, 2, (enum cp_comm_type)m);
        struct mt_err e = {0};
        CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
        struct op_list l;
        op_list_init(&l);
        ops_build_layer(&c, 8192, &l);
        /* the same attention work, split evenly: / cp */
        CHECK_NEAR(attn_fw_flops(&l), attn_fw_flops(&one) / 2, 1e-6 * attn_fw_flops(&one));
        /* every activation halves */
        CHECK_NEAR(keep(&l), keep(&one) / 2, 1e-9 * keep(&one));
        const struct op *o;
        if (m == CP_COMM_ALL_GATHER) {
            CHECK((o = find(&l, "cp_gather_kv")) != NULL && o->bytes == 32 * MiB &&
                  o->coll == COLL_ALL_GATHER && o->pass == PASS_FW && !o->overlapped &&
                  o->group == 2);
            CHECK((o = find(&l, "cp_reduce_scatter_dkv")) != NULL && o->bytes == 32 * MiB &&
                  o->pass == PASS_B);
            CHECK((o = find(&l, "cp_regather_kv")) != NULL && o->bytes == 32 * MiB);
        } else if (m == CP_COMM_P2P) {
            CHECK((o = find(&l, "cp_ring_kv")) != NULL && o->bytes == 16 * MiB && o->overlapped &&
                  o->coll == COLL_SEND_RECV);
            CHECK((o = find(&l, "cp_ring_kv_dkv")) != NULL && o->bytes == 32 * MiB &&
                  o->pass == PASS_B);
            CHECK((o = find(&l, "core_attn_ring")) != NULL && !o->causal && o->s_q == 4096 &&
                  o->s_kv == 2048);
        } else {
            CHECK((o = find(&l, "cp_a2a_qkv")) != NULL && o->bytes == 48 * MiB &&
                  o->coll == COLL_ALL_TO_ALL);
            CHECK((o = find(&l, "cp_a2a_out")) != NULL && o->bytes == 32 * MiB);
            CHECK((o = find(&l, "core_attn")) != NULL && o->heads == 16 && o->kv_heads == 4 &&
                  o->s_q == 8192);
        }
        /* the tokens of every other op are halved too: the QKV GEMM has 4,096 rows */
        CHECK((o = find(&l, "qkv")) != NULL && o->m == 4096);
        op_list_fini(&l);
    }
    /* a2a+p2p at cp 4 over a node of 8 GPUs with tp 2: 4 K/V heads a rank, a2a over 4 */
    llama8b(&c, 4, CP_COMM_A2A_P2P);
    c.cluster.tp = 2;
    c.num_device = 8;
    CHECK_EQ_INT(config_cp_a2a_size(&c), 4);
    c.cluster.gpus_per_node = 4; /* 2 CP ranks a node: a2a over 2, the ring over 2 */
    CHECK_EQ_INT(config_cp_a2a_size(&c), 2);
    struct op_list h;
    op_list_init(&h);
    ops_build_layer(&c, 8192, &h);
    const struct op *o = find(&h, "cp_ring_kv");
    CHECK(o != NULL && o->group == 2);
    o = find(&h, "cp_a2a_qkv");
    CHECK(o != NULL && o->group == 2);
    struct config c1;
    llama8b(&c1, 1, CP_COMM_P2P);
    c1.cluster.tp = 2;
    struct op_list h1;
    op_list_init(&h1);
    ops_build_layer(&c1, 8192, &h1);
    CHECK_NEAR(attn_fw_flops(&h), attn_fw_flops(&h1) / 4, 1e-6 * attn_fw_flops(&h1));
    op_list_fini(&h);
    op_list_fini(&h1);
    op_list_fini(&one);
}

static void test_geometry(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-405B", &c.model, NULL), MT_OK);
    c.model.seq_length = 131072;
    c.num_device = 16384;
    c.cluster.tp = 8;
    c.cluster.cp = 16;
    c.cluster.dp = 8;
    c.cluster.gpus_per_node = 8;
    CHECK_EQ_INT(config_pp(&c), 16);
    config_set_pp(&c, 16);
    CHECK_EQ_INT(c.num_device, 16384);
    struct mt_err e = {0};
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    /* the distributed optimizer shards over dp x cp = 128 */
    c.distributed_optimizer = true;
    CHECK_NEAR(config_bytes_per_param(&c), 6 + 12.0 / 128, 1e-12);
    /* refusals, each naming the field */
    c.cluster.cp = 3;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "cluster.cp") != NULL);
    c.cluster.cp = 16;
    c.model.seq_length = 131072 + 16; /* not a multiple of 2 cp = 32 */
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "2 x cp") != NULL);
    c.model.seq_length = 131072;
    c.cluster.cp_comm_type = CP_COMM_A2A; /* 8 K/V heads / tp 8 = 1 cannot be split over 16 */
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "a2a") != NULL);
    c.cluster.cp_comm_type = CP_COMM_ALL_GATHER;
    c.attention = ATTN_EAGER;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    c.attention = ATTN_DEFAULT;
    c.cluster.framework = FRAMEWORK_MEGATRON_DS_2021;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "2021") != NULL);
    c.cluster.framework = FRAMEWORK_DEFAULT;
    /* the keys round-trip */
    char *json = config_to_json(&c);
    CHECK(json != NULL && strstr(json, "\"cp_comm_type\": \"all_gather\"") != NULL);
    struct config back;
    CHECK_EQ_INT(config_load_string(json, strlen(json), "cp.json", &back, &e), MT_OK);
    CHECK_EQ_INT(back.cluster.cp, 16);
    CHECK_EQ_INT(back.cluster.cp_comm_type, CP_COMM_ALL_GATHER);
    free(json);
    enum cp_comm_type t;
    CHECK_EQ_INT(config_cp_comm_parse("A2A+P2P", &t, &e), MT_OK);
    CHECK_EQ_INT(t, CP_COMM_A2A_P2P);
    CHECK_EQ_INT(config_cp_comm_parse("ring", &t, &e), MT_EINVAL);
}

/* The three Llama 3 405B layouts of Table 4 (Dubey et al. 2024) build a cost model: 8,192 GPUs
 * TP 8 PP 16 DP 64 and 16,384 GPUs DP 128 at 8,192 tokens; 16,384 GPUs TP 8 CP 16 PP 16 DP 8
 * at 131,072. A CP stage keeps 1/16 of what the same stage would keep unsplit. */
static void test_llama3(void)
{
    static const struct { int gpus, cp, dp, seq; } rows[] = {
        {8192, 1, 64, 8192}, {16384, 1, 128, 8192}, {16384, 16, 8, 131072}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct config c;
        config_default(&c);
        CHECK_EQ_INT(presets_model("Llama-3.1-405B", &c.model, NULL), MT_OK);
        c.model.seq_length = rows[i].seq;
        c.num_device = rows[i].gpus;
        c.cluster.tp = 8;
        c.cluster.cp = rows[i].cp;
        c.cluster.dp = rows[i].dp;
        c.cluster.cp_comm_type = CP_COMM_ALL_GATHER;
        c.global_batch_size = 16 * rows[i].dp;
        c.sequence_parallel = true;
        struct mt_err e = {0};
        CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
        CHECK_EQ_INT(config_pp(&c), 16);
        struct cost_model m;
        CHECK_EQ_INT(cost_model_build(&c, 16, 1, rows[i].dp * rows[i].cp, &m, &e), MT_OK);
        CHECK(m.stage[1].fw > 0 && m.stage[1].act > 0);
        if (rows[i].cp > 1) {
            struct config u = c;
            u.cluster.cp = 1;
            struct cost_model mu;
            CHECK_EQ_INT(cost_model_build(&u, 16, 1, rows[i].dp, &mu, &e), MT_OK);
            CHECK_NEAR(m.stage[1].act, mu.stage[1].act / 16, 1e-9 * mu.stage[1].act);
            CHECK(m.stage[1].fw < mu.stage[1].fw / 8); /* the work divides by cp, less comm */
            cost_model_fini(&mu);
        }
        cost_model_fini(&m);
    }
}

/* every header's degrees name the CP mode (the review of issue 41 item 5: only simulate's did) */
static void test_degrees_text(void)
{
    struct config c;
    llama8b(&c, 2, CP_COMM_A2A);
    c.cluster.tp = 2;
    char t[128];
    config_degrees_text(&c, 4, t, sizeof t);
    CHECK(strcmp(t, "pp 4 x dp 1 x tp 2 x cp 2 (a2a)") == 0);
    llama8b(&c, 1, CP_COMM_A2A);
    config_degrees_text(&c, 8, t, sizeof t);
    CHECK(strcmp(t, "pp 8 x dp 1") == 0); /* no cp, no mode */
}

int main(void)
{
    test_degrees_text();
    test_pairs();
    test_modes();
    test_geometry();
    test_llama3();
    return check_report("test_cp");
}
