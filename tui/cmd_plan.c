/* tui/cmd_plan.c: the plan flags shared by every command that makes a plan. The CONFIG
 * argument may be a config, a Hugging Face config.json, or a saved plan; flags given on the
 * command line override the file, in the order given. */
#include <config.h>
#include "tui/cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "model/profile.h"
#include "model/scheme_registry.h"
#include "sim/plan/footprint.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/tune/tune.h"
#include "sim/plan/validate.h"
#include "traces/formats.h"
#include "util/err.h"
#include "util/str.h"

/* --help: what CONFIG is, before the plan flags. */
static const char cmd_plan_config_help[] =
    "  CONFIG                   a config JSON, a Hugging Face config.json, a plan JSON or\n"
    "                           torch's schedule CSV (*.csv; its model and costs from the\n"
    "                           flags) (default: GPT3-1.6B on 8 x A100-40G, V, global batch\n"
    "                           128)\n";

/* The plan flags' table: the parser (tui/cmd_options.c) records them in order, and
 * cmd_plan_apply applies them once the CONFIG file is read. */
const struct cmd_option cmd_plan_options[] = {
    {.name = "model", .arg = "NAME", .type = CMD_PLAN, .value = CMD_PLAN_MODEL,
     .heading = cmd_plan_config_help,
     .help = "model preset: GPT3-1.6B GPT3-13B LLaMA2-3B LLaMA2-13B tiny GPT-3-13B GPT-3-175B "
             "LLaMA-2-7B LLaMA-2-13B LLaMA-2-70B Llama-3.1-8B Llama-3.1-70B Llama-3.1-405B\n"
             "(the first four: the paper's Table 4 shapes; mario-tui models)"},
    {.name = "scheme", .arg = "S", .type = CMD_PLAN, .value = CMD_PLAN_SCHEME,
     .help_write = scheme_registry_help}, /* the scheme records' names, by family */
    {.name = "devices", .arg = "D", .type = CMD_PLAN, .value = CMD_PLAN_DEVICES,
     .help = "GPUs: pp x dp x tp"},
    {.name = "dp", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_DP,
     .help = "data-parallel degree (default 1)"},
    {.name = "tp", .arg = "T", .type = CMD_PLAN, .value = CMD_PLAN_TP,
     .help = "tensor-parallel degree: GPUs of one stage, dividing or a\n"
             "multiple of cluster.gpus_per_node (default 1)"},
    {.name = "microbatches", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_MICROBATCHES,
     .help = "micro-batches per iteration (overrides the global batch)"},
    {.name = "micro-batch-size", .arg = "B", .type = CMD_PLAN, .value = CMD_PLAN_MBS,
     .help = "samples per micro-batch"},
    {.name = "global-batch", .arg = "G", .type = CMD_PLAN, .value = CMD_PLAN_GLOBAL_BATCH,
     .help = "samples per iteration"},
    {.name = "chunks", .arg = "V", .type = CMD_PLAN, .value = CMD_PLAN_CHUNKS,
     .help = "chunks per device for W and ZB-W (default 2)"},
    {.name = "memory", .arg = "SIZE", .type = CMD_PLAN, .value = CMD_PLAN_MEMORY,
     .help = "memory cap per GPU, e.g. 40G; 0 = no cap (in M_theta under\n"
             "--unit-costs: 1.05); wins over --device in either order"},
    {.name = "reserve", .arg = "SIZE", .type = CMD_PLAN, .value = CMD_PLAN_RESERVE,
     .help = "kept free on each GPU for the CUDA context and allocator,\n"
             "off the cap (default 1G; 0 for the paper's presets)"},
    {.name = "device", .arg = "NAME", .type = CMD_PLAN, .value = CMD_PLAN_DEVICE,
     .help = "device preset: A100-40G A100-80G H100-80G H200"},
    {.name = "host-gbps", .arg = "GBPS", .type = CMD_PLAN, .value = CMD_PLAN_HOST_GBPS,
     .help = "a GPU's link to host memory, GB/s each way, for offload (OF/RL;\n"
             "default the device's: 25 A100 PCIe Gen4, 50 H100/H200 Gen5)"},
    {.name = "host-memory", .arg = "SIZE", .type = CMD_PLAN, .value = CMD_PLAN_HOST_MEMORY,
     .help = "host memory per node offloaded activations may take, shared\n"
             "by its GPUs (M_theta per device under --unit-costs); 0 = no cap"},
    {.name = "attention", .arg = "K", .type = CMD_PLAN, .value = CMD_PLAN_ATTENTION,
     .help = "flash (the default: no s x s scores kept) | eager (the\n"
             "paper's presets' default)"},
    {.name = "sequence-parallel", .type = CMD_PLAN, .value = CMD_PLAN_SEQ_PARALLEL,
     .help = "sequence parallelism: every activation split over tp"},
    {.name = "distributed-optimizer", .type = CMD_PLAN, .value = CMD_PLAN_DIST_OPT,
     .help = "fp32 master weights and Adam state sharded over dp\n"
             "(6 + 12/dp bytes a parameter)"},
    {.name = "unit-costs", .arg = "F,B,RC[,W[,O]]", .type = CMD_PLAN,
     .value = CMD_PLAN_UNIT_COSTS,
     .help = "unit costs: times in t, memory in units of M_theta; B is the\n"
             "whole backward, W its weight-gradient part (default B/2), O the\n"
             "time to move one M_theta to or from host memory (default 1)"},
    {.name = "blocking-send", .type = CMD_PLAN, .value = CMD_PLAN_BLOCKING,
     .help = "rendezvous p2p: a send waits for its receive"},
    {.name = "iterations", .arg = "K", .type = CMD_PLAN, .value = CMD_PLAN_ITERATIONS,
     .help = "iterations one plan spans (Async, PipeDream; default 1)"},
    {.name = "update-interval", .arg = "U", .type = CMD_PLAN, .value = CMD_PLAN_UPDATE_INTERVAL,
     .help = "backwards per optimizer step of a stage (Async, PipeDream;\ndefault 1)"},
    {.name = "calibration", .arg = "FILE", .type = CMD_PLAN, .value = CMD_PLAN_CALIBRATION,
     .help = "measured costs from `mario-tui profile` in place of the\n"
             "analytic ones (a plan keeps its instructions)"},
    {.name = "cores", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_CORES,
     .help = "cores the ranks share (more ranks than N share them; default:\n"
             "a CPU calibration's, else a core each)"},
    {0},
};

int cmd_plan_record(struct cmd_plan *cp, int opt, const char *arg, struct mt_err *e)
{
    if (cp->n_over == CMD_PLAN_MAX_OVERRIDES)
        return err_set(e, MT_EINVAL, "more than %d plan flags", CMD_PLAN_MAX_OVERRIDES);
    cp->over[cp->n_over].opt = opt;
    cp->over[cp->n_over].arg = arg;
    cp->n_over++;
    return MT_OK;
}

bool cmd_plan_given(const struct cmd_plan *cp, int opt)
{
    for (int i = 0; i < cp->n_over; i++)
        if (cp->over[i].opt == opt)
            return true;
    return false;
}

static int cmd_plan_int(const char *flag, const char *arg, long lo, long hi, int *out,
                        struct mt_err *e)
{
    long v;
    if (cmd_options_int(arg, lo, hi, &v, e) != MT_OK)
        return err_wrap(e, "--%s", flag);
    *out = (int)v;
    return MT_OK;
}

static int cmd_plan_apply(struct config *c, int opt, const char *arg, struct mt_err *e)
{
    switch (opt) {
    case CMD_PLAN_MODEL:
        if (presets_model(arg, &c->model, e) != MT_OK)
            return err_wrap(e, "--model");
        return MT_OK;
    case CMD_PLAN_SCHEME:
        if (config_scheme_parse(arg, &c->scheme, e) != MT_OK)
            return err_wrap(e, "--scheme");
        return MT_OK;
    case CMD_PLAN_DEVICES:
        return cmd_plan_int("devices", arg, 1, CONFIG_MAX_DEVICES, &c->num_device, e);
    case CMD_PLAN_DP:
        return cmd_plan_int("dp", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.dp, e);
    case CMD_PLAN_TP:
        return cmd_plan_int("tp", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.tp, e);
    case CMD_PLAN_MICROBATCHES:
        return cmd_plan_int("microbatches", arg, 1, CONFIG_MAX_MICROBATCHES, &c->num_microbatches,
                            e);
    case CMD_PLAN_MBS:
        TRY(cmd_plan_int("micro-batch-size", arg, 1, 1 << 20, &c->micro_batch_size, e));
        return MT_OK;
    case CMD_PLAN_GLOBAL_BATCH:
        TRY(cmd_plan_int("global-batch", arg, 1, 1 << 30, &c->global_batch_size, e));
        c->num_microbatches = 0;
        return MT_OK;
    case CMD_PLAN_CHUNKS:
        return cmd_plan_int("chunks", arg, 1, CONFIG_MAX_CHUNKS, &c->chunks, e);
    case CMD_PLAN_MEMORY:
        if (str_parse_bytes(arg, &c->memory_per_device, e) != MT_OK)
            return err_wrap(e, "--memory");
        c->given |= CONFIG_GIVEN_MEMORY;
        return MT_OK;
    case CMD_PLAN_DEVICE: {
        struct device_spec dev;
        if (presets_device(arg, &dev, e) != MT_OK)
            return err_wrap(e, "--device");
        config_set_device(c, &dev);
        return MT_OK;
    }
    case CMD_PLAN_HOST_GBPS:
        if (str_parse_double(arg, &c->cluster.host_gbps, e) != MT_OK || !(c->cluster.host_gbps > 0))
            return err_set(e, MT_EINVAL, "--host-gbps: '%s' is not a bandwidth > 0 in GB/s", arg);
        c->given |= CONFIG_GIVEN_HOST_GBPS;
        return MT_OK;
    case CMD_PLAN_HOST_MEMORY:
        if (str_parse_bytes(arg, &c->cluster.host_mem_per_node, e) != MT_OK)
            return err_wrap(e, "--host-memory");
        return MT_OK;
    case CMD_PLAN_RESERVE:
        if (str_parse_bytes(arg, &c->reserve, e) != MT_OK)
            return err_wrap(e, "--reserve");
        return MT_OK;
    case CMD_PLAN_ATTENTION:
        if (config_attention_parse(arg, &c->attention, e) != MT_OK)
            return err_wrap(e, "--attention");
        return MT_OK;
    case CMD_PLAN_SEQ_PARALLEL:
        c->sequence_parallel = true;
        return MT_OK;
    case CMD_PLAN_DIST_OPT:
        c->distributed_optimizer = true;
        return MT_OK;
    case CMD_PLAN_UNIT_COSTS:
        if (config_unit_costs_parse(arg, &c->unit, e) != MT_OK)
            return err_wrap(e, "--unit-costs");
        return MT_OK;
    case CMD_PLAN_BLOCKING:
        c->blocking_send = true;
        return MT_OK;
    case CMD_PLAN_ITERATIONS:
        return cmd_plan_int("iterations", arg, 1, CONFIG_MAX_ITERATIONS, &c->iterations, e);
    case CMD_PLAN_UPDATE_INTERVAL:
        return cmd_plan_int("update-interval", arg, 1, CONFIG_MAX_MICROBATCHES,
                            &c->update_interval, e);
    case CMD_PLAN_CALIBRATION:
        if (profile_load(arg, &c->profile, e) != MT_OK)
            return err_wrap(e, "--calibration");
        return MT_OK;
    case CMD_PLAN_CORES:
        return cmd_plan_int("cores", arg, 1, 1 << 20, &c->profile.cores, e);
    default:
        return err_set(e, MT_EINVAL, "unknown plan flag");
    }
}

/* Every flag in order, --cores last (it sets what a --calibration file would). */
static int cmd_plan_apply_all(const struct cmd_plan *cp, struct config *out, struct mt_err *e)
{
    for (int last = 0; last < 2; last++)
        for (int i = 0; i < cp->n_over; i++)
            if ((cp->over[i].opt == CMD_PLAN_CORES) == (last == 1))
                TRY(cmd_plan_apply(out, cp->over[i].opt, cp->over[i].arg, e));
    return MT_OK;
}

/* Under unit costs memory is in M_θ: --memory 2 is a cap of 2 M_θ per device. Without one
 * there is no cap (the device's bytes, the default, mean nothing in M_θ). */
static void cmd_plan_unit_cap(const struct cmd_plan *cp, struct config *c)
{
    if (c->unit.enabled && !cmd_plan_given(cp, CMD_PLAN_MEMORY) &&
        c->memory_per_device == c->cluster.device.mem_bytes)
        c->memory_per_device = 0;
}

/* Reads CONFIG and applies the flags; validation is left to the caller. */
static int cmd_plan_read(const struct cmd_plan *cp, struct config *out, struct plan **loaded,
                         struct mt_err *e)
{
    *loaded = NULL;
    const struct file_format *f = cp->path != NULL ? format_of(cp->path) : NULL;
    if (f != NULL && f->id == FORMAT_TORCH_CSV) {
        /* torch's schedule CSV holds only the order: the model, cluster and costs come from
         * the flags, the geometry from the file */
        config_default(out);
        TRY(cmd_plan_apply_all(cp, out, e));
        TRY(plan_load_torch_csv_file(cp->path, out, loaded, e));
        *out = *plan_config(*loaded);
        cmd_plan_unit_cap(cp, out);
        return MT_OK;
    }
    if (cp->path == NULL) {
        config_default(out);
    } else if (f->id == FORMAT_PLAN) {
        TRY(plan_load(cp->path, loaded, e));
        *out = *plan_config(*loaded);
    } else {
        TRY(config_load_file(cp->path, out, e));
    }
    int rc = cmd_plan_apply_all(cp, out, e);
    if (rc == MT_OK && cmd_plan_given(cp, CMD_PLAN_MEMORY)) /* name the flag, not the key */
        rc = config_check_cap(out, "--memory", e);
    if (rc != MT_OK) {
        plan_free(*loaded);
        *loaded = NULL;
        return rc;
    }
    cmd_plan_unit_cap(cp, out);
    if (cp->n_over > 0)
        snprintf(out->source + strnlen(out->source, sizeof out->source - 12),
                 sizeof out->source - strnlen(out->source, sizeof out->source - 12), " + flags");
    return MT_OK;
}

int cmd_plan_config_raw(const struct cmd_plan *cp, struct config *out, struct mt_err *e)
{
    struct plan *loaded = NULL;
    TRY(cmd_plan_read(cp, out, &loaded, e));
    plan_free(loaded);
    /* What the tuner keeps of the config: model, cluster, batch, devices, cap. The scheme
     * geometry is the tuner's to choose, so it is checked on a one-device pipeline. */
    struct config check = *out;
    check.scheme = SCHEME_V;
    check.num_device = 1;
    check.cluster.dp = 1;
    check.cluster.tp = 1; /* the tuner chooses tp too; a one-device pipeline has one GPU */
    check.micro_batch_size = 1;
    check.num_microbatches = 0;
    check.iterations = 1; /* the tuner names an async scheme or several iterations itself */
    check.update_interval = 1;
    int rc = config_validate(&check, e);
    if (rc == MT_OK && (out->num_device < 1 || out->num_device > CONFIG_MAX_DEVICES))
        rc = err_set(e, MT_EINVAL, "num_device: must be in [1, %d] (got %d)", CONFIG_MAX_DEVICES,
                     out->num_device);
    return rc != MT_OK && cp->path ? err_wrap(e, "%s", cp->path) : rc;
}

/* "pipeline_scheme": "Auto": the tuner's best candidate becomes the config; *ckpt says
 * whether it runs with Mario's checkpointing. */
static int cmd_plan_resolve_auto(struct config *c, bool *ckpt, struct mt_err *e)
{
    struct tune_opts o;
    tune_opts_default(&o);
    struct tune_result r;
    TRY(tune_grid_search(c, &o, &r, e));
    if (r.best < 0) {
        tune_result_fini(&r);
        return err_set(e, MT_EINFEASIBLE,
                       "pipeline_scheme: Auto: no configuration fits the memory cap (see "
                       "mario-tui tune)");
    }
    struct tune_candidate best = r.cand[r.best];
    tune_result_fini(&r);
    tune_candidate_config(c, &best, c);
    *ckpt = best.ckpt;
    return MT_OK;
}

int cmd_plan_config(const struct cmd_plan *cp, struct config *out, struct plan **plan_out,
                    struct mt_err *e)
{
    struct plan *loaded = NULL;
    if (plan_out)
        *plan_out = NULL;
    TRY(cmd_plan_read(cp, out, &loaded, e));
    int rc = config_validate(out, e);
    if (rc != MT_OK) {
        plan_free(loaded);
        return cp->path ? err_wrap(e, "%s (with flags)", cp->path) : rc;
    }
    /* --calibration and --cores change the costs, not the instructions: a loaded plan is kept,
     * with the calibrated config (and under unit costs the cap of cmd_plan_unit_cap) */
    int changing = 0;
    bool csv = cp->path && format_of(cp->path)->id == FORMAT_TORCH_CSV;
    for (int i = 0; i < cp->n_over && !csv; i++)
        changing += cp->over[i].opt != CMD_PLAN_CALIBRATION && cp->over[i].opt != CMD_PLAN_CORES;
    if (plan_out && loaded && changing == 0 &&
        (cp->n_over > 0 || out->memory_per_device != plan_config(loaded)->memory_per_device)) {
        struct plan *q = plan_with_config(loaded, out);
        plan_free(loaded);
        loaded = q;
    }
    if (plan_out && changing == 0)
        *plan_out = loaded;
    else
        plan_free(loaded);
    return MT_OK;
}

int cmd_plan_finish(const struct cmd_plan *cp, struct config *c, struct plan *loaded,
                    struct plan **out, struct mt_err *e)
{
    struct plan *p = loaded;
    *out = NULL;
    bool ckpt = false;
    if (p == NULL && c->scheme == SCHEME_AUTO) {
        int rc = cmd_plan_resolve_auto(c, &ckpt, e);
        if (rc != MT_OK)
            return cp->path ? err_wrap(e, "%s", cp->path) : rc;
    }
    /* before anything is built: a plan this machine cannot hold is refused with the figure */
    int fit = p != NULL ? footprint_check(plan_geom(p), (enum footprint_use)cp->use, 1, e)
                        : footprint_check_config(c, (enum footprint_use)cp->use, 1, e);
    if (fit != MT_OK) {
        plan_free(p);
        return fit;
    }
    if (p == NULL) {
        TRY(scheme_build(c, &p, e));
        if (ckpt) { /* Auto chose Mario's checkpointing */
            struct plan *q = NULL;
            int rc = tune_optimize_mario(p, NULL, &q, e);
            plan_free(p);
            TRY(rc);
            p = q;
        }
    }
    /* a loaded plan that cannot run is bad input (exit 2); a built one, the tool's failure */
    int rc = loaded ? validate_plan_input(p, e) : validate_plan(p, e);
    if (rc != MT_OK) {
        plan_free(p);
        return cp->path ? err_wrap(e, "%s", cp->path) : rc;
    }
    *out = p;
    return MT_OK;
}

int cmd_plan_build(const struct cmd_plan *cp, struct plan **out, struct mt_err *e)
{
    struct config c;
    struct plan *loaded = NULL;
    *out = NULL;
    TRY(cmd_plan_config(cp, &c, &loaded, e));
    return cmd_plan_finish(cp, &c, loaded, out, e);
}

int cmd_fail(const char *cmd, const struct mt_err *e)
{
    fprintf(stderr, "mario-tui %s: %s\n", cmd, e->msg);
    return err_exit_status(e->code);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "mario-tui %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'mario-tui %s --help'.\n", cmd);
    return 2;
}
