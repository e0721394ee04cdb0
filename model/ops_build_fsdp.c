/* model/ops_build_fsdp.c: ZeRO-2 and ZeRO-3 (FSDP) collectives of a stage (model/ops.h;
 * docs/fsdp.md). The step's own collectives (ZeRO-1's, and the once-a-step ones below) are
 * ops_build_step's (model/ops_build.c); this file lists what runs per micro-batch around each
 * FSDP unit (a transformer block, the embedding, the norm and head: torchtitan's
 * apply_fsdp_to_decoder wraps each as its own fully_shard unit) and says when each runs.
 *
 * When, after the sources:
 *   ZeRO-2 (Rajbhandari et al. 2020, §5.2 P_os+g; DeepSpeed's stage 2 reduces each
 *     micro-batch's gradients into the owner's partition as the backward produces them):
 *     a unit's gradients reduce-scattered after its backward in every micro-batch, hidden
 *     behind the next unit's backward; the parameters all-gathered once a step after the
 *     sharded optimizer step (as the distributed optimizer does).
 *   ZeRO-3 = PyTorch FSDP2 (torch.distributed.fsdp.fully_shard) as torchtitan runs it:
 *     - a unit's bf16 parameters all-gathered before its forward, the next unit's gather
 *       prefetched while the current one computes (FSDP2's implicit forward prefetch), and
 *       freed after the forward when reshard_after_forward (torchtitan's
 *       fsdp_reshard_after_forward: "default" = off under pipeline parallelism,
 *       torchtitan/distributed/fsdp.py get_fsdp_reshard_after_forward_policy: "to avoid
 *       per-microbatch all-gathers"); freed, they are gathered again before its backward;
 *     - without PP each micro-batch's backward reduce-scatters a unit's gradients (in fp32,
 *       torchtitan's mixed_precision_reduce) after its backward, hidden behind the previous
 *       unit's backward; with HSDP the shard then all-reduced over the replicas;
 *     - under PP, torch.distributed.pipelining (stage.py backward_maybe_with_nosync) runs
 *       every backward but the last with set_requires_gradient_sync(False) and
 *       set_reshard_after_backward(False): the unsharded gradients accumulate over the
 *       micro-batches (in fp32: FSDPParam.to_accumulated_grad_if_needed upcasts them to the
 *       reduce dtype) and are reduce-scattered once, after the last backward, by its
 *       run_post_backward: nothing left to hide them behind. With reshard_after_forward off
 *       the parameters, gathered by the step's first forward, stay gathered until then: one
 *       gather a step.
 *   What is not modelled: under PP with reshard_after_forward on, the backward leaves its
 *   parameters gathered (reshard_after_backward off) and the next forward finds them so; we
 *   charge that forward's gather again and count the gathered copy as transient, not live.
 *
 * Overlap (fsdp_chain_exposed_us): one communication stream shared by the gathers and the
 * reduce-scatters, one compute stream; unit k's gather is issued when unit k-1 starts to
 * compute (the first at once), unit k computes when its gather is done and unit k-1 is done,
 * its reduce-scatter is issued when it is done. What shows is the chain's length less the
 * compute: for n like units, gather g, compute t, the forward's g + (n-1) max(0, g - t). */
#include <config.h>
#include "model/ops.h"

#include <string.h>

#include "model/config.h"
#include "model/price.h"

struct ops_fsdp ops_fsdp_of(const struct config *c)
{
    struct ops_fsdp f;
    memset(&f, 0, sizeof f);
    f.zero = config_zero_stage(c);
    /* the shard group: dp_shard of dp, with the CP ranks (Megatron's dp x cp for the
     * distributed optimizer; torchtitan's FSDP mesh dp_shard_cp) */
    f.shard = config_dp_shard(c) * config_cp(c);
    f.replicate = config_dp_replicate(c);
    f.shard_link = price_link_of(c, GROUP_DP, f.shard);
    f.replicate_link = price_link_of(c, GROUP_DP, f.shard * f.replicate);
    f.grad_bytes = config_grad_reduce_fp32(c) ? 4 : 2;
    if (f.zero < 2 || f.shard * f.replicate <= 1)
        return f;
    bool pp = config_pp(c) > 1;
    if (f.zero == 2) {
        f.reduce_mb = true;
        return f;
    }
    bool reshard = config_fsdp_reshard_after_forward(c);
    f.gather_fw = reshard || !pp;    /* without PP the backward reshards: each forward gathers */
    f.gather_bw = reshard;
    f.gather_step = !reshard && pp;  /* kept gathered from the first forward to the last backward */
    f.params_live = !reshard;        /* gathered from a forward to its backward, or the step */
    f.reduce_mb = !pp;
    f.reduce_step = pp;
    f.grads_live = pp;               /* unsharded fp32 gradients accumulated over the step */
    return f;
}

static void push_coll(struct op_list *out, const struct ops_fsdp *f, enum op_site site,
                      const char *name,
                      enum op_coll coll, double bytes, int group, enum op_link link,
                      enum op_pass pass, const char *source)
{
    if (group <= 1)
        return;
    struct op o = {.kind = OP_COLLECTIVE, .name = name, .source = source, .site = site,
                   .dtype = coll == COLL_ALL_GATHER || f->grad_bytes == 2 ? OP_BF16 : OP_FP32,
                   .coll = coll, .group_kind = GROUP_DP, .bytes = bytes, .group = group,
                   .link = link, .pass = pass, .overlapped = true};
    op_list_push(out, &o);
}

void ops_build_fsdp_unit(const struct ops_fsdp *f, enum op_site site, double params,
                         struct op_list *out)
{
    if (f->zero < 2 || params <= 0)
        return;
    double full = 2 * params; /* the unit's bf16 parameters, all ranks' shards */
    if (f->gather_fw)
        push_coll(out, f, site, "fsdp_gather_fw", COLL_ALL_GATHER, full, f->shard, f->shard_link,
                  PASS_FW,
                  "FSDP2 unshard before the unit's forward: bf16 parameters all-gathered over "
                  "the shard group, prefetched under the previous unit; NCCL ring (n-1)/n");
    if (f->gather_bw)
        push_coll(out, f, site, "fsdp_gather_bw", COLL_ALL_GATHER, full, f->shard, f->shard_link,
                  PASS_B,
                  "FSDP2 unshard before the unit's backward (resharded after its forward), "
                  "prefetched under the next unit's backward");
    if (f->reduce_mb) {
        push_coll(out, f, site, "fsdp_reduce_scatter", COLL_REDUCE_SCATTER, f->grad_bytes * params,
                  f->shard, f->shard_link, PASS_B,
                  f->zero == 2 ? "ZeRO-2: the unit's gradients reduce-scattered to their owners "
                                 "after its backward (Rajbhandari et al. 2020, §5.2)"
                               : "FSDP2 post-backward: the unit's gradients reduce-scattered "
                                 "(fp32 reduce dtype), under the previous unit's backward");
        push_coll(out, f, site, "fsdp_replica_all_reduce", COLL_ALL_REDUCE,
                  f->grad_bytes * params / f->shard, f->replicate, f->replicate_link, PASS_B,
                  "HSDP: the reduce-scattered shard all-reduced over the shard group's "
                  "replicas (FSDP2 on a 2-D mesh)");
    }
}

void ops_fsdp_unit_comm_us(const struct config *c, const struct op *o, double *before_fw,
                           double *before_bw, double *after_bw)
{
    if (o->kind != OP_COLLECTIVE || o->group_kind != GROUP_DP || o->site == SITE_STEP)
        return;
    double us = price_op_us(c, o, o->pass);
    if (o->coll == COLL_ALL_GATHER)
        *(o->pass == PASS_FW ? before_fw : before_bw) += us;
    else
        *after_bw += us;
}

double fsdp_chain_exposed_us(const double *before, const double *comp, const double *after,
                             int n)
{
    /* comm: when the communication stream is free; done: when the previous unit's compute
     * ends; ready[k]: when unit k's gather is done */
    double comm = 0, done = 0, busy = 0, start_next = 0;
    double gathered = before ? before[0] : 0; /* the first gather, exposed */
    comm = gathered;
    for (int k = 0; k < n; k++) {
        double start = done > gathered ? done : gathered;
        busy += comp[k];
        /* the next unit's gather, issued as this one starts computing */
        if (k + 1 < n && before) {
            start_next = comm > start ? comm : start;
            comm = start_next + before[k + 1];
            gathered = comm;
        }
        done = start + comp[k];
        /* this unit's reduce, issued as it ends, after what the stream already holds */
        if (after && after[k] > 0)
            comm = (comm > done ? comm : done) + after[k];
    }
    double end = comm > done ? comm : done;
    return end - busy > 0 ? end - busy : 0;
}
