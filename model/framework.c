/* model/framework.c: the framework profiles of model/framework.h. */
#include <config.h>
#include "model/framework.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <strings.h>

#include "util/err.h"

/* Megatron-core + Transformer Engine and torchtitan are estimates, not fits (nothing measured
 * here): the per-instruction term is the Python a schedule step runs between waiting on its
 * p2p and launching the micro-batch's first kernel (Megatron-core's schedules.py
 * forward_step/backward_step around p2p_communication's batch_isend_irecv and its wait;
 * torch.distributed.pipelining's _step_microbatches interpreting one action, with FSDP2's
 * hooks), the time the GPU idles because the host cannot run ahead across that wait: a few
 * hundred microseconds. The per-kernel term is the gap the GPU leaves between dependent
 * kernels when the host launches ahead of it: ~1 us a launch (NVIDIA's "Getting Started with
 * CUDA Graphs", 2019: a 2.9 us kernel takes 3.8 us a launch back to back in one stream, CUDA
 * graphs off as both frameworks run by default), two launches an op with Transformer Engine's
 * fused kernels (a GEMM one; a fused norm and cast one or two; flash attention's backward three),
 * three with torchtitan's eager PyTorch (torch.compile off, its default: RMSNorm, SwiGLU and
 * rotary as several element-wise kernels each). Launch costs inside a block are in the
 * kernel term, so neither has a layer term. A calibration (`mario-tui profile`, issue 37
 * item 6) replaces all three with measured ones. */
static const struct framework_profile profiles[] = {
    {FRAMEWORK_MEGATRON_DS_2021, "megatron-deepspeed-2021", "Megatron-DeepSpeed (2021)",
     FRAMEWORK_DS2021_OP_US, FRAMEWORK_DS2021_LAYER_US, 0, 1,
     "fitted to the paper's Table 5 (GPT3-13B, 8 nodes of 4 A100-40G; "
     "scripts/fit_overheads.py): 3360 us an instruction, 546 us a block and pass, efficiency "
     "0.551"},
    {FRAMEWORK_MEGATRON_CORE, "megatron-core", "Megatron-core + Transformer Engine", 200, 0, 2, 1,
     "estimate: schedule step ~200 us (schedules.py around batch_isend_irecv's wait), 2 "
     "launches an op at ~1 us (NVIDIA CUDA Graphs blog), CUDA graphs off"},
    {FRAMEWORK_TORCHTITAN, "torchtitan", "torchtitan (PyTorch eager, FSDP2)", 300, 0, 3, 1,
     "estimate: pipelining action ~300 us (_step_microbatches, FSDP2 hooks), 3 launches an op "
     "at ~1 us (eager, torch.compile off), CUDA graphs off"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const struct framework_profile *framework_profile(enum framework_id id)
{
    for (size_t i = 0; i < COUNT(profiles); i++)
        if (profiles[i].id == id)
            return &profiles[i];
    return NULL;
}

const struct framework_profile *framework_of(const struct config *c)
{
    return framework_profile(config_framework(c));
}

double framework_op_overhead_us(const struct config *c)
{
    if (config_framework(c) == FRAMEWORK_MEGATRON_DS_2021 || (c->given & CONFIG_GIVEN_OP_OVERHEAD))
        return c->cluster.device.op_overhead_us;
    return framework_of(c)->op_overhead_us;
}

double framework_layer_overhead_us(const struct config *c)
{
    if (config_framework(c) == FRAMEWORK_MEGATRON_DS_2021 ||
        (c->given & CONFIG_GIVEN_LAYER_OVERHEAD))
        return c->cluster.device.layer_overhead_us;
    return framework_of(c)->layer_overhead_us;
}

double framework_kernel_overhead_us(const struct config *c)
{
    if (c->given & CONFIG_GIVEN_KERNEL_OVERHEAD)
        return c->cluster.kernel_overhead_us;
    return framework_of(c)->kernel_overhead_us;
}

double framework_compute_factor(const struct config *c)
{
    if (c->given & CONFIG_GIVEN_COMPUTE_FACTOR)
        return c->cluster.compute_factor;
    return framework_of(c)->compute_factor;
}

bool framework_hides_tp_comm(const struct config *c)
{
    return c->cluster.tp_comm_overlap;
}

bool framework_hides_grad_reduce(const struct config *c)
{
    return c->cluster.overlap_grad_reduce;
}

bool framework_hides_param_gather(const struct config *c)
{
    return c->cluster.overlap_param_gather && c->distributed_optimizer;
}

int framework_parse(const char *s, enum framework_id *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(profiles); i++)
        if (strcasecmp(s, profiles[i].key) == 0) {
            *out = profiles[i].id;
            return MT_OK;
        }
    return err_set(e, MT_EINVAL, "unknown framework '%s' (one of: %s)", s, framework_names_line());
}

const char *framework_name(enum framework_id id)
{
    if (id == FRAMEWORK_DEFAULT)
        return "default";
    const struct framework_profile *p = framework_profile(id);
    return p != NULL ? p->key : "?";
}

/* The keys, in the table's order, joined once. */
static char names_line[128];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void framework_names_fill(void)
{
    size_t n = 0;
    for (size_t i = 0; i < COUNT(profiles); i++)
        n += (size_t)snprintf(names_line + n, sizeof names_line - n, "%s%s", i ? " " : "",
                              profiles[i].key);
}

const char *framework_names_line(void)
{
    pthread_once(&names_once, framework_names_fill);
    return names_line;
}
