/* tests/unit/test_overlap.c: what Megatron-LM's overlap flags hide (model/cost.c,
 * cost_op_in_list_us and cost_dp_exposed_us), worked by hand: Llama-3.1-8B's block at 8,192
 * tokens over tp 8 with sequence parallelism on H100-80G, each TP collective a ring over
 * NVLink of 2sbh = 67,108,864 bytes. NCCL's model (model/price.c): 6.6 us + 7 steps x 0.6 us
 * of latency and (n-1)/n x bytes at the device's 365 GB/s bus bandwidth,
 *   10.8 + 0.875 x 67,108,864 / 365e3 = 10.8 + 160.8774 = 171.6774 us.
 * Transformer Engine's userbuffers (base.py, initialize_ub defaults): the all-gathers
 * ring-exchanged with their GEMM in tp chunks, the forward reduce-scatters pipelined with
 * their GEMM in 4 splits on 132 - 16 SMs (the last split's after), the backward
 * reduce-scatters side by side with the weight-gradient GEMM on 116 SMs; a pair takes its
 * slower side; the collective is charged what the pair takes beyond the GEMM, plus the
 * profile's 2 us launch when anything shows. The DP rules: the gradient reduce less the last
 * backward, the parameter all-gather less the first forward, never below 0. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/cost_ops.h"
#include "model/framework.h"
#include "model/ops.h"
#include "model/presets.h"
#include "model/price.h"
#include "tests/check.h"
#include "util/err.h"

#define RING_US 171.6774 /* the hand figure above */
#define LAUNCH_US framework_kernel_overhead_us(&c) /* the profile's per-kernel term */

static void llama8b_tp8(struct config *c)
{
    config_default(c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c->model, NULL), MT_OK);
    struct device_spec d;
    CHECK_EQ_INT(presets_device("H100-80G", &d, NULL), MT_OK);
    config_set_device(c, &d);
    c->model.seq_length = 8192;
    c->num_device = 8;
    c->cluster.tp = 8;
    c->sequence_parallel = true;
}

static size_t index_of(const struct op_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->op[i].name, name) == 0)
            return i;
    CHECK(!"op not in the list");
    return 0;
}

/* pass p of GEMM g cut into `splits` pieces of m / splits tokens, on sms of 132 SMs */
static double pieces_us(const struct config *c, const struct op *g, enum op_pass p, double splits,
                        double sms)
{
    struct op piece = *g;
    piece.m /= splits;
    return splits * price_op_us(c, &piece, p) * 132 / sms;
}

static void test_flag_off_is_cost_op_us(void)
{
    struct config c;
    llama8b_tp8(&c);
    CHECK(!ops_legacy(&c));
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    for (size_t i = 0; i < l.n; i++)
        for (int p = 0; p < PASS__COUNT; p++)
            CHECK_NEAR(cost_op_in_list_us(&c, &l, i, (enum op_pass)p),
                       cost_op_us(&c, &l.op[i], (enum op_pass)p), 0);
    /* the ring as NCCL's model prices it, by hand */
    size_t ag = index_of(&l, "tp_gather_attn");
    CHECK_NEAR(price_op_us(&c, &l.op[ag], PASS_FW), RING_US, 1e-3);
    CHECK_NEAR(cost_op_us(&c, &l.op[ag], PASS_FW), RING_US + LAUNCH_US, 1e-3);
    op_list_fini(&l);
}

/* NVLink as priced: qkv (8,192 x 768 x 4,096, ~70 us) is shorter than its ring, so the pair
 * takes the ring; proj's reduce-scatter pipelined with proj on 116 SMs. */
static void test_tp_overlap_nvlink(void)
{
    struct config c;
    llama8b_tp8(&c);
    c.cluster.tp_comm_overlap = true;
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    const struct op *qkv = &l.op[index_of(&l, "qkv")], *proj = &l.op[index_of(&l, "proj")];
    CHECK_NEAR(qkv->m, 8192, 0);
    CHECK_NEAR(qkv->n, 768, 0);
    /* the input's all-gather, ring-exchanged with qkv in 8 chunks of 1,024 tokens */
    double qkv_fw = price_op_us(&c, qkv, PASS_FW), chunks = pieces_us(&c, qkv, PASS_FW, 8, 132);
    CHECK(chunks < RING_US && chunks >= qkv_fw); /* ring-bound; chunks no faster than whole */
    CHECK_NEAR(cost_op_in_list_us(&c, &l, index_of(&l, "tp_gather_attn"), PASS_FW),
               RING_US - qkv_fw + LAUNCH_US, 1e-3);
    /* gate_up (8,192 x 3,584 x 4,096) outlasts its ring: only the chunking shows */
    const struct op *gate_up = &l.op[index_of(&l, "gate_up")];
    double up_fw = price_op_us(&c, gate_up, PASS_FW), up_chunks = pieces_us(&c, gate_up, PASS_FW, 8, 132);
    CHECK(up_chunks > RING_US);
    double shows = up_chunks - up_fw;
    CHECK_NEAR(cost_op_in_list_us(&c, &l, index_of(&l, "tp_gather_mlp"), PASS_FW),
               shows > 0 ? shows + LAUNCH_US : 0, 1e-9);
    /* proj's reduce-scatter: 4 splits on 116 SMs, then the last quarter of the ring */
    double proj_fw = price_op_us(&c, proj, PASS_FW), split = pieces_us(&c, proj, PASS_FW, 4, 116);
    double pair = fmax(split, 0.75 * RING_US) + 0.25 * RING_US;
    CHECK_NEAR(cost_op_in_list_us(&c, &l, index_of(&l, "tp_reduce_attn"), PASS_FW),
               pair - proj_fw + LAUNCH_US, 1e-3);
    CHECK(pair - proj_fw > 0.25 * RING_US); /* the SM margin costs: worse than the tail alone */
    /* off its own pass and the already-hidden backward all-gather: nothing */
    CHECK_NEAR(cost_op_in_list_us(&c, &l, index_of(&l, "tp_gather_attn"), PASS_B), 0, 0);
    CHECK_NEAR(cost_op_in_list_us(&c, &l, index_of(&l, "tp_regather_attn"), PASS_B), 0, 0);
    op_list_fini(&l);
}

/* A slow TP link (1 GB/s, cluster.tp_gbps): every collective outlasts its GEMM, so each costs
 * exactly the ring less the GEMM pass it hides under. */
static void test_tp_overlap_comm_bound(void)
{
    struct config c;
    llama8b_tp8(&c);
    c.cluster.tp_comm_overlap = true;
    c.cluster.tp_gbps = 1;
    c.given |= CONFIG_GIVEN_TP_GBPS;
    double ring = 10.8 + 0.875 * 67108864 / 1e3; /* 58,730.0 us */
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    const struct op *qkv = &l.op[index_of(&l, "qkv")], *proj = &l.op[index_of(&l, "proj")];
    const struct op *gate_up = &l.op[index_of(&l, "gate_up")], *down = &l.op[index_of(&l, "down")];
    CHECK_NEAR(price_op_us(&c, &l.op[index_of(&l, "tp_gather_attn")], PASS_FW), ring, 1e-6);
    struct {
        const char *coll;
        enum op_pass pass;
        const struct op *gemm;
        enum op_pass under;
    } pairs[] = {
        {"tp_gather_attn", PASS_FW, qkv, PASS_FW},      /* qkv_fprop, ring_exchange */
        {"tp_reduce_attn", PASS_FW, proj, PASS_FW},     /* proj_fprop, pipeline */
        {"tp_gather_attn_dy", PASS_B, proj, PASS_B},    /* proj_dgrad, ring_exchange */
        {"tp_reduce_attn_dx", PASS_B, qkv, PASS_W},     /* qkv_wgrad, bulk */
        {"tp_gather_mlp", PASS_FW, gate_up, PASS_FW},   /* fc1_fprop */
        {"tp_reduce_mlp", PASS_FW, down, PASS_FW},      /* fc2_fprop */
        {"tp_gather_mlp_dy", PASS_B, down, PASS_B},     /* fc2_dgrad */
        {"tp_reduce_mlp_dx", PASS_B, gate_up, PASS_W},  /* fc1_wgrad */
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        double want = ring - price_op_us(&c, pairs[k].gemm, pairs[k].under) + LAUNCH_US;
        double got = cost_op_in_list_us(&c, &l, index_of(&l, pairs[k].coll), pairs[k].pass);
        if (fabs(got - want) > 1e-6)
            printf("  %s: %.6f us, want %.6f\n", pairs[k].coll, got, want);
        CHECK_NEAR(got, want, 1e-6);
    }
    op_list_fini(&l);
    /* outside a block (the embedding's reduce-scatter after a lookup): exposed as before */
    op_list_init(&l);
    ops_build_embed(&c, 8192, &l);
    size_t e = index_of(&l, "tp_reduce_embed");
    CHECK_NEAR(cost_op_in_list_us(&c, &l, e, PASS_FW), cost_op_us(&c, &l.op[e], PASS_FW), 0);
    CHECK_NEAR(cost_op_us(&c, &l.op[e], PASS_FW), ring + LAUNCH_US, 1e-6);
    op_list_fini(&l);
}

static void test_dp_exposed(void)
{
    struct config c;
    llama8b_tp8(&c);
    struct op rs = {.kind = OP_COLLECTIVE, .coll = COLL_REDUCE_SCATTER, .group_kind = GROUP_DP};
    struct op ag = rs, ar = rs;
    ag.coll = COLL_ALL_GATHER;
    ar.coll = COLL_ALL_REDUCE;
    /* off: the whole of it */
    CHECK_NEAR(cost_dp_exposed_us(&c, &rs, 300, 120, 200), 300, 0);
    CHECK_NEAR(cost_dp_exposed_us(&c, &ag, 150, 120, 200), 150, 0);
    c.cluster.overlap_grad_reduce = true;
    CHECK_NEAR(cost_dp_exposed_us(&c, &rs, 300, 120, 200), 180, 0);
    CHECK_NEAR(cost_dp_exposed_us(&c, &ar, 100, 120, 200), 0, 0);
    CHECK_NEAR(cost_dp_exposed_us(&c, &ag, 150, 120, 200), 150, 0); /* not the gather */
    c.cluster.overlap_param_gather = true; /* without the distributed optimizer: no gather */
    CHECK_NEAR(cost_dp_exposed_us(&c, &ag, 150, 120, 200), 150, 0);
    c.distributed_optimizer = true;
    CHECK_NEAR(cost_dp_exposed_us(&c, &ag, 250, 120, 200), 50, 0);
    CHECK_NEAR(cost_dp_exposed_us(&c, &ag, 150, 120, 200), 0, 0);
}

/* The stage's step as cost_model_build sums it: one stage, dp 4 over 32 GPUs (4 nodes, one DP
 * rank a node: the network), the distributed optimizer. Its reduce-scatter less the stage's
 * backward, its all-gather less its forward. */
static void test_stage_step(void)
{
    struct config c;
    llama8b_tp8(&c);
    c.num_device = 32;
    c.cluster.dp = 4;
    c.distributed_optimizer = true;
    c.global_batch_size = 16;
    struct mt_err e;
    struct cost_model off, on;
    CHECK_EQ_INT(cost_model_build(&c, 1, 1, 4, &off, &e), MT_OK);
    c.cluster.overlap_grad_reduce = c.cluster.overlap_param_gather = true;
    CHECK_EQ_INT(cost_model_build(&c, 1, 1, 4, &on, &e), MT_OK);
    struct op_list l;
    op_list_init(&l);
    ops_build_step(&c, off.stage[0].params, 4, &l);
    CHECK_EQ_INT((long long)l.n, 3); /* reduce-scatter, all-gather, optimizer */
    double rs = price_op_us(&c, &l.op[0], l.op[0].pass), ag = price_op_us(&c, &l.op[1], l.op[1].pass);
    CHECK(l.op[0].coll == COLL_REDUCE_SCATTER && l.op[1].coll == COLL_ALL_GATHER);
    CHECK(l.op[0].link == LINK_NETWORK);
    op_list_fini(&l);
    const struct stage_cost *s = &on.stage[0];
    CHECK_NEAR(off.stage[0].ar, rs + ag, 1e-6);
    CHECK_NEAR(s->ar, fmax(0, rs - s->bw) + fmax(0, ag - s->fw), 1e-6);
    CHECK(s->ar < off.stage[0].ar);
    CHECK_NEAR(s->fw, off.stage[0].fw, 0); /* the compute is the same */
    cost_model_fini(&off);
    cost_model_fini(&on);
}

/* Megatron-LM refuses both flags without what they overlap (arguments.py, validate_args). */
static void test_refusals(void)
{
    struct config c;
    llama8b_tp8(&c);
    c.global_batch_size = 8;
    struct mt_err e;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    c.cluster.tp_comm_overlap = true;
    c.sequence_parallel = false;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "tp_comm_overlap") != NULL && strstr(e.msg, "sequence_parallel") != NULL);
    c.sequence_parallel = true;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    c.cluster.overlap_param_gather = true;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "overlap_param_gather") != NULL);
    c.distributed_optimizer = true;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
}

int main(void)
{
    test_flag_off_is_cost_op_us();
    test_tp_overlap_nvlink();
    test_tp_overlap_comm_bound();
    test_dp_exposed();
    test_stage_step();
    test_refusals();
    return check_report("test_overlap");
}
