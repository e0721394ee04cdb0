/* model/config_parallel.c: context parallelism's keys (cluster.cp, cluster.cp_comm_type), their
 * resolvers and checks (model/config.h). What CP does to a block is model/ops_build_cp.c's.
 *
 * Megatron-LM (megatron/core/parallel_state.py) counts the world as tp x cp x pp x dp with the
 * rank order tp-cp-ep-dp-pp: a CP group's members are tp apart, and the weights are the same on
 * every CP rank, so gradients are reduced (and the distributed optimizer sharded) over dp x cp.
 * Its CP needs the sequence split into 2 cp chunks (the causal load balancing of
 * get_batch_on_this_cp_rank) and Transformer Engine's fused attention; the all-to-all modes
 * scatter the heads, so cp divides them (TE's flash_attn_a2a_communicate). */
#include <config.h>
#include "model/config.h"


#include "util/err.h"
#include "util/str.h"

static const char *const cp_comm_names[CP_COMM__COUNT] = {"p2p", "all_gather", "a2a",
                                                          "a2a+p2p"};

int config_cp(const struct config *c)
{
    return c->cluster.cp > 1 ? c->cluster.cp : 1;
}

int config_cp_comm_parse(const char *s, enum cp_comm_type *out, struct mt_err *e)
{
    int i = str_index_of(s, cp_comm_names, CP_COMM__COUNT);
    if (i >= 0) {
        *out = (enum cp_comm_type)i;
        return MT_OK;
    }
    return err_set(e, MT_EINVAL, "unknown cp_comm_type '%s' (one of: %s)", s,
                   config_cp_comm_names_line());
}

const char *config_cp_comm_name(enum cp_comm_type t)
{
    return (unsigned)t < CP_COMM__COUNT ? cp_comm_names[t] : "?";
}

const char *config_cp_comm_names_line(void)
{
    return "p2p all_gather a2a a2a+p2p";
}

/* this rank's K/V heads (the smaller of the two head counts a2a scatters) */
static int rank_kv_heads(const struct config *c)
{
    int tp = c->cluster.tp > 0 ? c->cluster.tp : 1;
    return config_kv_heads(&c->model) / tp;
}

int config_cp_a2a_size(const struct config *c)
{
    int cp = config_cp(c);
    if (cp == 1 || c->cluster.cp_comm_type == CP_COMM_P2P ||
        c->cluster.cp_comm_type == CP_COMM_ALL_GATHER)
        return 1;
    if (c->cluster.cp_comm_type == CP_COMM_A2A)
        return cp;
    int tp = c->cluster.tp > 0 ? c->cluster.tp : 1;
    int in_node = c->cluster.gpus_per_node / tp, heads = rank_kv_heads(c);
    for (int a = in_node < cp ? in_node : cp; a > 1; a--)
        if (cp % a == 0 && heads > 0 && heads % a == 0)
            return a;
    return 1;
}

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return err_set(e, MT_EINVAL, __VA_ARGS__);                                             \
    } while (0)

int config_validate_cp(const struct config *c, struct mt_err *e)
{
    const struct cluster_spec *k = &c->cluster;
    NEED(k->cp >= 1 && k->cp <= CONFIG_MAX_DEVICES, "cluster.cp: must be in [1, %d] (got %d)",
         CONFIG_MAX_DEVICES, k->cp);
    NEED((unsigned)k->cp_comm_type < CP_COMM__COUNT, "cluster.cp_comm_type: unknown mode");
    long group = (long)k->dp * k->tp * k->cp;
    NEED(c->num_device % group == 0,
         "cluster.cp: tp %d x cp %d x dp %d = %ld does not divide num_device %d (GPUs = tp x cp "
         "x pp x dp)", k->tp, k->cp, k->dp, group, c->num_device);
    if (k->cp == 1)
        return MT_OK;
    NEED(config_framework(c) != FRAMEWORK_MEGATRON_DS_2021,
         "cluster.cp: the 2021 Megatron-DeepSpeed stack has no context parallelism (use "
         "framework megatron-core or torchtitan)");
    NEED(config_attention(c) == ATTN_FLASH,
         "cluster.cp: context parallelism runs Transformer Engine's fused (flash) attention, "
         "not eager attention");
    NEED(c->unit.enabled == false,
         "cluster.cp: unit costs give whole-share costs; context parallelism needs the op model");
    NEED(c->model.seq_length % (2 * k->cp) == 0,
         "cluster.cp: model.seq_length %d is not a multiple of 2 x cp = %d (each CP rank holds "
         "two chunks, a head and a tail, for the causal load balance)",
         c->model.seq_length, 2 * k->cp);
    int tp = k->tp > 0 ? k->tp : 1, heads = c->model.num_attention_heads / tp;
    if (k->cp_comm_type == CP_COMM_A2A)
        NEED(heads % k->cp == 0 && rank_kv_heads(c) % k->cp == 0,
             "cluster.cp_comm_type: a2a scatters the heads over cp %d, but a rank has %d query "
             "and %d K/V heads (tp %d)", k->cp, heads, rank_kv_heads(c), tp);
    if (k->cp_comm_type == CP_COMM_A2A_P2P)
        NEED(config_cp_a2a_size(c) > 1,
             "cluster.cp_comm_type: a2a+p2p needs an all-to-all level of more than one rank: "
             "no divisor of cp %d and of a rank's %d K/V heads fits in a node's %d GPUs / tp %d",
             k->cp, rank_kv_heads(c), k->gpus_per_node, tp);
    return MT_OK;
}
