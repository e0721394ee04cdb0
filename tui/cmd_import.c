/* tui/cmd_import.c: `mario-tui import TRACE... -o PLAN.json`: a plan made from a measured run
 * (issue 19, traces/import.h): our own traces, profiler traces of torch.distributed.pipelining
 * (one file per rank, no mapping needed), or any trace with a mapping file. The plan then goes
 * to simulate, optimize, explore and export as any other. */
#include <config.h>
#include "tui/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "traces/import.h"
#include "traces/mapping.h"
#include "traces/trace.h"
#include "util/err.h"

static const char import_usage[] =
    "Usage: mario-tui import TRACE... -o PLAN.json [--map FILE] [--step K] [plan flags]\n"
    "Make a plan from a measured run: each device's order in one step, the stages, parts,\n"
    "micro-batches and placement read off the trace, the config from the trace where it\n"
    "carries one. TRACE is a trace of `mario-tui run --trace-out` (or `simulate\n"
    "--trace-out`), or PyTorch profiler traces, one file per rank: those of\n"
    "torch.distributed.pipelining need no mapping (its \"PP:\" action ranges and\n"
    "distributedInfo.rank), others a mapping file whose rules give op, micro-batch and stage.\n"
    "The plan flags give what a profiler trace does not (the model, the batch); a device\n"
    "named in deviceProperties (A100, H100, H200) sets --device.\n"
    "Plan flags:\n";

struct import_cmd_opts {
    const char *out, *map;
    int step;
    bool json;
};

static const struct cmd_option import_options[] = {
    {.name = "output",
     .letter = 'o',
     .arg = "FILE",
     CMD_TO_STRING(struct import_cmd_opts, out),
     .heading = "Import:\n",
     .help = "write the plan to FILE (.json, or .csv: torch's schedule)"},
    {.name = "map",
     .arg = "FILE",
     CMD_TO_STRING(struct import_cmd_opts, map),
     .help = "mapping of foreign event names to plan keys (docs/traces.md)"},
    {.name = "step",
     .arg = "K",
     CMD_TO_INT(struct import_cmd_opts, step, 0, 1 << 24),
     .help =
         "take step K's order (default: the second step, the first\nwarms up; or the only one)"},
    {.name = "json",
     CMD_TO_BOOL(struct import_cmd_opts, json),
     .help = "print what was imported as one JSON object"},
    {0},
};

static int import_exec(int argc, char **argv);

const struct cmd_entry cmd_import_entry = {
    .name = "import",
    .summary = "make a plan from a measured trace (ours, torch's, or mapped)",
    .usage = import_usage,
    .plan_flags = true,
    .options = import_options,
    .footer = "Exit status: 0 ok, 1 the plan could not be written, 2 bad usage or input (an\n"
              "inconsistent trace names the device, the event and where it is).\n",
    .args_min = 1,
    .args_max = -1,
    .args = "TRACE",
    .exec = import_exec,
};

static int import_exec(int argc, char **argv)
{
    struct import_cmd_opts o = {.step = -1};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_import_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    if (o.out == NULL)
        return cmd_usage_error("import", "-o PLAN.json is required");
    const char *const *files = (const char *const *)&argv[first];
    int nfiles = argc - first;
    /* the positional arguments are traces: the flags go over the built-in default */
    struct cmd_plan flags = cp;
    flags.path = NULL;
    struct config base;
    if (cmd_plan_config_raw(&flags, &base, &e) != MT_OK)
        return cmd_fail("import", &e);
    struct mapping *map = NULL;
    if (o.map && mapping_load(o.map, &map, &e) != MT_OK)
        return cmd_fail("import", &e);
    struct trace *t = NULL;
    struct plan *p = NULL;
    int status = 0;
    struct trace_opts to = {map, 0};
    if (trace_load(files, nfiles, &to, &t, &e) != MT_OK) {
        status = cmd_fail("import", &e);
        goto done;
    }
    struct import_opts io = {o.step, cp.n_over > 0, cmd_plan_given(&cp, CMD_PLAN_DEVICE)};
    struct import_info info;
    if (import_plan(t, files, nfiles, &base, &io, &p, &info, &e) != MT_OK) {
        status = cmd_fail("import", &e);
        goto done;
    }
    if (plan_save(p, o.out, &e) != MT_OK) {
        status = cmd_fail("import", &e);
        goto done;
    }
    const struct config *c = plan_config(p);
    const struct trace_info *ti = trace_info(t);
    if (o.json) {
        printf("{\"plan\": \"%s\", \"scheme\": \"%s\", \"devices\": %d, \"stages\": %d, "
               "\"microbatches\": %d, \"step\": %d, \"ours\": %s, \"config_from_trace\": %s, "
               "\"instructions\": %zu, \"left_out\": %zu, \"clock_shift_us\": %.17g, "
               "\"inversion_us\": %.17g}\n",
               o.out, config_scheme_name(c->scheme), info.devices, info.stages, info.mbs, info.step,
               info.ours ? "true" : "false", info.config_from_trace ? "true" : "false",
               info.instructions, info.left_out, ti->clock_shift_us, info.inversion_us);
    } else {
        printf("imported %s%s: %d devices, %d stages, %d micro-batches, placed as %s; step %d's "
               "order, %zu instructions%s\n",
               files[0], nfiles > 1 ? " ..." : "", info.devices, info.stages, info.mbs,
               config_scheme_name(c->scheme), info.step, info.instructions,
               info.ours ? " (sends and receives as recorded)"
                         : " (sends, receives and the optimizer step made as for a generated "
                           "plan)");
        if (info.left_out > 0)
            printf("left out %zu events of the step (%s)\n", info.left_out,
                   info.ours ? "a second iteration" : "communication, or a second iteration");
        if (ti->clock_shift_us > 0)
            printf("the ranks' clocks were put together by their dependencies (a shift of up to "
                   "%.1f us)\n",
                   ti->clock_shift_us);
        if (info.inversion_us > 0)
            printf("a dependency still ran %.1f us backwards in time: taken as clock skew (at "
                   "most 1%% of the shorter op)\n",
                   info.inversion_us);
        printf("model %s, %s%s\n", c->model.name, c->cluster.device.name,
               info.config_from_trace ? " (the config the trace carries)" : "");
        printf("wrote %s\n", o.out);
    }
done:
    plan_free(p);
    trace_free(t);
    mapping_free(map);
    return status;
}
