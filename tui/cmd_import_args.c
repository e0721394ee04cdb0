/* tui/cmd_import_args.c: `mario-tui import-args FILE|- [-o CONFIG] [--devices N]`: the launch a
 * user has (a Megatron-LM command line or its script, a torchtitan job TOML; model/launch.h)
 * as our config JSON. Every command that takes CONFIG reads such a file the same way
 * (cmd_launch_read, from tui/cmd_plan.c). The one warning line (what matters and is not
 * modelled, what is not recognised) and what was assumed go to stderr. */
#include <config.h>
#include "tui/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/launch.h"
#include "model/presets.h"
#include "util/err.h"
#include "util/str.h"

static const char import_args_usage[] =
    "Usage: mario-tui import-args FILE|- [-o CONFIG] [--devices N] [plan flags]\n"
    "Read a launch: a Megatron-LM command line or the shell script around it (variables,\n"
    "${VAR:-default}, bash arrays of args as Megatron's examples build them, torchrun\n"
    "--nproc-per-node/--nnodes, srun and #SBATCH --nodes/--ntasks-per-node), or a torchtitan\n"
    "job TOML ([model] flavor, [training], [parallelism], [activation_checkpoint]), and\n"
    "write it as a config JSON (stdout, or -o CONFIG). --devices N plans for N GPUs: it fills\n"
    "torchtitan's -1 degrees and overrides the GPUs a script starts. The other plan flags\n"
    "(--device H100-80G, --memory ...) apply after the file. Every command that takes CONFIG\n"
    "also takes such a file directly. Flags or keys that matter and are not modelled are\n"
    "listed in one warning line on stderr; experts (issue 38) and context parallelism > 1\n"
    "(issue 39) are refused; data, logging and checkpoint settings are skipped\n"
    "(docs/launchers.md lists each).\n\n";

struct import_args_opts {
    const char *out;
    bool quiet;
};

static const struct cmd_option import_args_options[] = {
    {.name = "output", .letter = 'o', .arg = "CONFIG",
     CMD_TO_STRING(struct import_args_opts, out), .heading = "Import:\n",
     .help = "write the config JSON to CONFIG (default: stdout)"},
    {.name = "quiet", .letter = 'q', CMD_TO_BOOL(struct import_args_opts, quiet),
     .help = "no summary line on stderr (the warning line is still printed)"},
    {0},
};

static int import_args_exec(int argc, char **argv);

const struct cmd_entry cmd_import_args_entry = {
    .name = "import-args",
    .summary = "read a Megatron-LM launch script or a torchtitan TOML as a config",
    .usage = import_args_usage,
    .plan_flags = true,
    .options = import_args_options,
    .footer = "Exit status: 0 ok, 1 CONFIG could not be written, 2 bad usage or input (a flag\n"
              "or key at fault is named with its file:line:column).\n",
    .args_min = 1,
    .args_max = 1,
    .args = "FILE",
    .exec = import_args_exec,
};

/* --devices of the flags (the last one given), or 0. */
static int cmd_launch_devices(const struct cmd_plan *cp, int *out, struct mt_err *e)
{
    *out = 0;
    for (int i = 0; cp != NULL && i < cp->n_over; i++)
        if (cp->over[i].opt == CMD_PLAN_DEVICES) {
            long v;
            if (cmd_options_int(cp->over[i].arg, 1, CONFIG_MAX_DEVICES, &v, e) != MT_OK)
                return err_wrap(e, "--devices");
            *out = (int)v;
        }
    return MT_OK;
}

static int cmd_launch_read_info(const char *path, const struct cmd_plan *cp, struct config *out,
                                struct launch_info *info, struct mt_err *e)
{
    struct launch_read_opts o = {0};
    TRY(cmd_launch_devices(cp, &o.devices, e));
    TRY(launch_read_file(path, &o, out, info, e));
    const char *name = strcmp(path, "-") == 0 ? "(stdin)" : path;
    if (info->warning[0])
        fprintf(stderr, "%s: warning: %s\n", name, info->warning);
    if (info->assumed[0])
        fprintf(stderr, "%s: assumed: %s\n", name, info->assumed);
    return MT_OK;
}

int cmd_launch_read(const char *path, const struct cmd_plan *cp, struct config *out,
                    struct mt_err *e)
{
    struct launch_info info;
    return cmd_launch_read_info(path, cp, out, &info, e);
}

static int import_args_exec(int argc, char **argv)
{
    struct import_args_opts o = {0};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_import_args_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    const char *path = argv[first];
    struct config c;
    struct launch_info info;
    if (cmd_launch_read_info(path, &cp, &c, &info, &e) != MT_OK)
        return cmd_fail("import-args", &e);
    if (cmd_plan_apply_flags(&cp, &c, &e) != MT_OK || config_validate(&c, &e) != MT_OK)
        return cmd_fail("import-args", &e);
    char *json = config_to_json(&c);
    if (json == NULL) {
        fprintf(stderr, "mario-tui import-args: out of memory\n");
        return 1;
    }
    int status = 0;
    if (!o.quiet) {
        char model[96], scheme[48];
        presets_model_display(&c.model, model, sizeof model);
        snprintf(scheme, sizeof scheme, "%s", config_scheme_name(c.scheme));
        if (config_scheme_uses_chunks(c.scheme))
            snprintf(scheme + strlen(scheme), sizeof scheme - strlen(scheme), " (%d chunks)",
                     c.chunks);
        char cpx[48] = "";
        if (config_cp(&c) > 1)
            snprintf(cpx, sizeof cpx, " x cp %d (%s)", config_cp(&c),
                     config_cp_comm_name(c.cluster.cp_comm_type));
        /* the config's recompute policy, or the launch's that none is (model/launch.c) */
        char rc_text[64] = "";
        if (c.recompute != RECOMPUTE_NONE)
            snprintf(rc_text, sizeof rc_text, "; recompute %s", config_recompute_name(c.recompute));
        else if (info.recompute != LAUNCH_RECOMPUTE_NONE)
            snprintf(rc_text, sizeof rc_text, "; recompute %s of some blocks (not modelled)",
                     info.recompute == LAUNCH_RECOMPUTE_FULL ? "full" : "selective");
        fprintf(stderr,
                "read %s (%s): %s, %d GPUs = pp %d x dp %d x tp %d%s, %s, micro-batch %d, "
                "global batch %d%s%s\n",
                strcmp(path, "-") == 0 ? "(stdin)" : path, launch_kind_title(info.kind), model,
                c.num_device, config_pp(&c), c.cluster.dp, c.cluster.tp, cpx,
                scheme, c.micro_batch_size, config_global_batch(&c),
                rc_text,
                info.launched_gpus > 0 && info.launched_gpus != c.num_device ? " (see above)" : "");
    }
    if (o.out == NULL) {
        fputs(json, stdout);
    } else if (str_write_file_atomic(o.out, json, strlen(json), &e) != MT_OK) {
        status = cmd_fail("import-args", &e);
        if (status == 2)
            status = 1;
    } else {
        printf("wrote %s\n", o.out);
    }
    free(json);
    return status;
}
