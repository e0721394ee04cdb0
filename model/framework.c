/* model/framework.c: the framework profiles of model/framework.h. */
#include <config.h>
#include "model/framework.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <strings.h>

#include "util/err.h"

/* The per-instruction term is an estimate (nothing measured here): the Python a schedule step
 * runs between waiting on its p2p and launching the micro-batch's first kernel (Megatron-core's
 * schedules.py forward_step/backward_step around p2p_communication's batch_isend_irecv and its
 * wait; torch.distributed.pipelining's _step_microbatches interpreting one action, with FSDP2's
 * hooks): a few hundred microseconds.
 *
 * Megatron-core's compute_factor and kernel_overhead_us are a fit (scripts/fidelity.py --fit
 * megatron_lm --fit-key compute_factor,kernel_overhead_us; docs/fidelity.md): on Megatron-LM's
 * published H100 table (9 bf16 runs, 1.7B to 462B, 48 to 6,144 GPUs) they come out 0.9188 and
 * 35.62 us, kept here rounded; checked on the NeMo performance summaries (18 FP8 runs) they give
 * 9.6 %, on the Llama 3 paper's runs 16.5 %. What they stand for: the GEMMs and attention of a
 * step run at 0.92 of the isolated kernels' rates the device model holds (mamf-finder's and
 * FlashAttention's are measured alone: a step adds clocks under sustained load and the
 * communication kernels on the same SMs), and each op of the list leaves ~36 us of the host's
 * launch path (Transformer Engine's modules in eager mode, CUDA graphs off) beside its kernels.
 * The fit the other way (on NeMo: 0.8547 and 1.59 us) checks at 12.3 % on Megatron-LM.
 *
 * torchtitan's compute_factor is a fit the same way (--fit torchtitan:tt2412 --fit-key
 * compute_factor): on its 2024-12 H100 tables (18 runs, 8B to 405B, 8 to 512 GPUs, FSDP, TP, PP,
 * CP) 0.6938, kept as 0.69; checked on its 2025-06 tables (10 runs: async TP on H100, FSDP on
 * H200) 8.3 %; fitted on those instead, 0.7078, it checks at 7.6 % on the 2024-12 ones. It is
 * what the op list does not price of that stack (torch.compile's absence and FSDP2's copy-in and
 * copy-out kernels, the eager element-wise ops each a kernel of its own, the GPUs' 500 W limit
 * on the 2024 hosts beyond the preset's peak), lumped: not a measured figure of any one cause.
 * Its attention is PyTorch SDPA's flash backend, FlashAttention-2 (attention_fa2).
 *
 * torchtitan's per-kernel term is an estimate: ~1 us a launch (NVIDIA's "Getting Started with
 * CUDA Graphs", 2019: a 2.9 us kernel takes 3.8 us a launch back to back in one stream), three
 * launches an op with eager PyTorch (torch.compile off, its default: RMSNorm, SwiGLU and rotary
 * as several element-wise kernels each). Launch costs inside a block are in the kernel term, so
 * no profile has a layer term. A calibration (`mario-tui profile`, issue 37 item 6) replaces
 * the terms with measured ones. */
static const struct framework_profile profiles[] = {
    {FRAMEWORK_MEGATRON_DS_2021, "megatron-deepspeed-2021", "Megatron-DeepSpeed (2021)",
     FRAMEWORK_DS2021_OP_US, FRAMEWORK_DS2021_LAYER_US, 0, false, 1,
     "fitted to the paper's Table 5 (GPT3-13B, 8 nodes of 4 A100-40G; "
     "scripts/fit_overheads.py): 3360 us an instruction, 546 us a block and pass, efficiency "
     "0.551"},
    {FRAMEWORK_MEGATRON_CORE, "megatron-core", "Megatron-core + Transformer Engine", 200, 0, 36,
     false, 0.92,
     "schedule step ~200 us (estimate: schedules.py around batch_isend_irecv's wait); kernel "
     "rates x 0.92 and 36 us an op (fitted on Megatron-LM's H100 table, checked on NeMo's: "
     "docs/fidelity.md), CUDA graphs off"},
    {FRAMEWORK_TORCHTITAN, "torchtitan", "torchtitan (PyTorch eager, FSDP2)", 300, 0, 3, true,
     0.69,
     "pipelining action ~300 us (estimate: _step_microbatches, FSDP2 hooks), 3 launches an op at "
     "~1 us (estimate: eager, torch.compile off); FlashAttention-2 (SDPA); kernel rates x 0.69 "
     "(fitted on torchtitan's 2024-12 H100 tables, checked on its 2025-06 ones: "
     "docs/fidelity.md)"},
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
