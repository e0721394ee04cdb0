/* model/config_zero.c: ZeRO / FSDP's keys (cluster.zero_stage, cluster.dp_shard,
 * cluster.fsdp_reshard_after_forward), their resolvers and checks (model/config.h). What the
 * stages shard and communicate is model/ops_build_fsdp.c's; docs/fsdp.md says it in words.
 *
 * ZeRO's stages (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
 * Parameter Models", SC'20, §5): P_os the optimizer state sharded over the data-parallel
 * group, P_os+g the gradients too, P_os+g+p the parameters too. Megatron-LM's distributed
 * optimizer is P_os (docs distrib_optimizer.md); PyTorch FSDP2's fully_shard, torchtitan's
 * default, is P_os+g+p. HSDP (torchtitan's data_parallel_replicate_degree x
 * data_parallel_shard_degree) shards over a group of dp_shard and replicates over the rest. */
#include <config.h>
#include "model/config.h"


#include "model/moe.h"
#include "util/err.h"
#include "util/str.h"

static const char *const reshard_names[FSDP_RESHARD__COUNT] = {"default", "always", "never"};

int config_zero_stage(const struct config *c)
{
    int z = c->cluster.zero_stage;
    if (c->distributed_optimizer && z < 1)
        z = 1; /* the distributed optimizer is ZeRO-1 */
    return z;
}

int config_dp_shard(const struct config *c)
{
    int dp = c->cluster.dp > 0 ? c->cluster.dp : 1;
    if (config_zero_stage(c) == 0)
        return 1;
    return c->cluster.dp_shard > 0 ? c->cluster.dp_shard : dp;
}

int config_dp_replicate(const struct config *c)
{
    int dp = c->cluster.dp > 0 ? c->cluster.dp : 1;
    return config_zero_stage(c) == 0 ? dp : dp / config_dp_shard(c);
}

bool config_fsdp_reshard_after_forward(const struct config *c)
{
    switch (c->cluster.reshard_after_forward) {
    case FSDP_RESHARD_ALWAYS: return true;
    case FSDP_RESHARD_NEVER: return false;
    default:
        /* torchtitan/distributed/fsdp.py get_fsdp_reshard_after_forward_policy: "For PP, by
         * default do not reshard after forward to avoid per-microbatch all-gathers" */
        return config_pp(c) <= 1;
    }
}

int config_fsdp_reshard_parse(const char *s, enum fsdp_reshard *out, struct mt_err *e)
{
    int i = str_index_of(s, reshard_names, FSDP_RESHARD__COUNT);
    if (i >= 0) {
        *out = (enum fsdp_reshard)i;
        return MT_OK;
    }
    return err_set(e, MT_EINVAL,
                   "unknown fsdp_reshard_after_forward '%s' (one of: default always never)", s);
}

const char *config_fsdp_reshard_name(enum fsdp_reshard r)
{
    return (unsigned)r < FSDP_RESHARD__COUNT ? reshard_names[r] : "default";
}

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return err_set(e, MT_EINVAL, __VA_ARGS__);                                             \
    } while (0)

int config_validate_zero(const struct config *c, struct mt_err *e)
{
    const struct cluster_spec *k = &c->cluster;
    NEED(k->zero_stage >= 0 && k->zero_stage <= 3,
         "cluster.zero_stage: must be 0 (plain DP), 1 (optimizer state sharded), 2 (+ "
         "gradients) or 3 (+ parameters, FSDP) (got %d)", k->zero_stage);
    NEED((unsigned)k->reshard_after_forward < FSDP_RESHARD__COUNT,
         "cluster.fsdp_reshard_after_forward: unknown policy");
    NEED(k->dp_shard >= 0 && k->dp_shard <= CONFIG_MAX_DEVICES,
         "cluster.dp_shard: must be in [0, %d] (0 = all of dp; got %d)", CONFIG_MAX_DEVICES,
         k->dp_shard);
    NEED(k->dp_shard == 0 || k->dp % k->dp_shard == 0,
         "cluster.dp_shard: %d does not divide dp %d (the shard group's replicas are dp / "
         "dp_shard)", k->dp_shard, k->dp);
    NEED(k->dp_shard == 0 || config_zero_stage(c) >= 1,
         "cluster.dp_shard: %d with zero_stage 0 (nothing is sharded; give zero_stage 1-3)",
         k->dp_shard);
    NEED(k->dp_shard != 1 || k->dp == 1,
         "cluster.dp_shard: 1 shards nothing: every replica keeps everything (plain DP: "
         "zero_stage 0)");
    NEED(k->reshard_after_forward == FSDP_RESHARD_DEFAULT || config_zero_stage(c) == 3,
         "cluster.fsdp_reshard_after_forward: %s needs zero_stage 3 (only FSDP shards the "
         "parameters; got %d)", config_fsdp_reshard_name(k->reshard_after_forward),
         config_zero_stage(c));
    if (config_zero_stage(c) >= 2) {
        NEED(config_framework(c) != FRAMEWORK_MEGATRON_DS_2021,
             "cluster.zero_stage: %d: the 2021 Megatron-DeepSpeed estimate has no sharded "
             "gradients or parameters (use framework megatron-core or torchtitan)",
             config_zero_stage(c));
        /* torchtitan shards the routed experts over their own mesh (efsdp = dp x cp / ep,
         * apply_fsdp_to_decoder's edp_mesh): not modelled; the dense blocks' rule would be
         * applied to them silently */
        NEED(!(moe_enabled(&c->model) && config_ep(c) > 1),
             "cluster.zero_stage: %d with expert parallelism %d: the experts' sharding over the "
             "expert data-parallel group (torchtitan's efsdp mesh) is not modelled yet",
             config_zero_stage(c), config_ep(c));
        NEED(!c->unit.enabled,
             "cluster.zero_stage: %d: unit costs give whole-share costs; ZeRO-2/3's "
             "collectives need the op model", config_zero_stage(c));
    }
    return MT_OK;
}
