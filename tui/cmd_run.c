/* tui/cmd_run.c: `mario-tui run PLAN|CONFIG`: run a plan for real (issue 7).
 *
 * Two roles in one command. Started by a user (no MPI in the environment), it is the
 * launcher: it builds and checks the plan, then re-executes itself under `mpirun -np D`
 * (exec/launch.h) and waits; when the job fails it reads the ranks' spool files to name
 * the rank that died and writes the partial trace. Started by mpirun, it is one rank: it
 * runs its device's instruction list (exec/interp.h); rank 0 draws the progress bar (when
 * the launcher's stderr is a terminal), gathers the records, writes the Chrome trace with
 * the simulator's keys (traces/chrome.h) and prints the summary or the JSON object, with
 * the simulator's prediction for the same plan beside the measured figures. */
#include <config.h>
#include "tui/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/input_aware.h"
#include "exec/interp.h"
#include "exec/launch.h"
#include "exec/xformer.h"
#include "flow/run.h"
#include "model/config.h"
#include "model/seqlen.h"
#include "sim/plan/footprint.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/str.h"

static const char run_usage[] =
    "Usage: mario-tui run [PLAN|CONFIG] [plan flags] [--np D] [--backend cpu|cuda|nccl]\n"
    "                     [--steps K] [--trace-out FILE] [--json]\n"
    "                     [--lr-reschedule[=W]] [--discrepancy-correction[=D]]\n"
    "                     [--lengths FILE [--input-aware | --checkpointing S] [--bucket W]\n"
    "                      [--fit-batches N]]\n"
    "Run a plan for real: each MPI rank is one pipeline device and runs its instruction list\n"
    "on a GPT-style model (LayerNorm, GELU) or a LLaMA-style one (RMSNorm, SwiGLU, RoPE, GQA;\n"
    "CPU backend; its MLP a mixture of experts with --ep equal to --dp, docs/moe.md) with the\n"
    "config's sizes, trained on byte-level text. Outside MPI the command starts itself under\n"
    "`mpirun -np D`. Prints the loss per step, the step time and the peak memory measured per\n"
    "device beside the simulator's prediction (and a MoE run's all-to-alls).\n\n";

struct run_args {
    struct cmd_plan cp;
    int np;
    const char *backend;
    /* as given, before they go where they belong (0 or -1: not given) */
    int backend_i, steps, seed, strategy, bucket, fit_batches;
    double lr;
    const char *trace_out;
    const char *data;
    bool json;
    struct interp_opts o;
    /* --lengths */
    const char *lengths;
    struct seqlen_sample smp;
    struct input_aware_opts iao;
    struct input_aware *ia;
    struct input_aware_report ir; /* rank 0, after the run */
    bool have_ir;
};

const char *const cmd_run_backends[] = {"cpu", "cuda", "nccl", NULL};

/* --checkpointing's names, in enum input_aware_strategy's order */
static const char *const run_strategies[] = {"full", "static", "input-aware", NULL};
_Static_assert(INPUT_AWARE_FULL == 0 && INPUT_AWARE_STATIC == 1 && INPUT_AWARE_PLANS == 2,
               "run_strategies follows enum input_aware_strategy");

static const struct cmd_option run_options[] = {
    {.name = "np", .arg = "D", CMD_TO_INT(struct run_args, np, 1, 4096),
     .help = "MPI ranks (default: the plan's pp x dp)"},
    {.name = "backend", .arg = "B", CMD_TO_CHOICE(struct run_args, backend_i, cmd_run_backends),
     .help = "cpu (OpenBLAS, default) | cuda (cuBLAS, MPI) | nccl (cuBLAS,\nNCCL)"},
    {.name = "steps", .arg = "K", CMD_TO_INT(struct run_args, steps, 1, 1000000),
     .help = "training steps (default 10); an Async or PipeDream plan of\n"
             "I iterations runs whole: K a multiple of I (default I)"},
    {.name = "trace-out", .arg = "FILE", CMD_TO_STRING(struct run_args, trace_out),
     .help = "write the measured timeline as a Chrome trace (Perfetto), keyed\n"
             "like `mario-tui simulate --trace-out`; partial if the run fails"},
    {.name = "json", CMD_TO_BOOL(struct run_args, json),
     .help = "print one JSON object instead of the summary"},
    {.name = "lr", .arg = "X", CMD_TO_DOUBLE(struct run_args, lr, 0, 10), .open_min = true,
     .help = "AdamW learning rate (default 0.001)"},
    {.name = "seed", .arg = "N", CMD_TO_INT(struct run_args, seed, 0, 0x7fffffff),
     .help = "weight initialisation seed (default 1337)"},
    {.name = "timeout", .arg = "S", CMD_TO_DOUBLE(struct run_args, o.timeout_s, 0, 86400),
     .open_min = true,
     .help = "longest wait for a peer before the run is ended (default 8;\n"
             "grows to 4 x the slowest step)"},
    {.name = "data", .arg = "FILE", CMD_TO_STRING(struct run_args, data),
     .help = "training text (default: the shipped data/corpus.txt)"},
    {.name = "dump", .arg = "DIR", CMD_TO_STRING(struct run_args, o.dump_dir),
     .help = "write each stage's gradients and parameters after the last\n"
             "step (stage-SSS.rank-RRRRR.grad|param, raw float32) and the\n"
             "loss of every step (DIR/loss, every digit)"},
    {.name = "lr-reschedule", .arg = "W", .optional = true, .dflt = INTERP_LR_WARMUP_DEFAULT,
     CMD_TO_INT(struct run_args, o.lr_warmup, 1, 100000000),
     .help = "Async, PipeDream: PipeMare's T1, each stage's step size divided\n"
             "by its staleness, released over W steps (default 50)"},
    {.name = "discrepancy-correction", .arg = "D", .optional = true,
     .dflt = INTERP_CORRECTION_DECAY_DEFAULT,
     CMD_TO_DOUBLE(struct run_args, o.correction_decay, 0, 1), .open_min = true,
     .open_max = true,
     .help = "Async: PipeMare's T2, the backward runs on the weights\n"
             "extrapolated back along a velocity of decay D (default 0.1)"},
    {.name = "lengths", .arg = "FILE", CMD_TO_STRING(struct run_args, lengths),
     .heading = "Variable-length batches (input-aware checkpointing, Mimose on Mario's plans):\n",
     .help = "one training step per length in FILE (whole numbers of tokens,\n"
             "'#' comments; as `plan-inputs --lengths`, one batch a length):\n"
             "every micro-batch of step i has the i-th length; --steps\n"
             "defaults to the number of lengths (more wrap around). A step\n"
             "runs the plan made for its bucket's longest length (as\n"
             "plan-inputs) but is not padded to it. The plans are the CONFIG's\n"
             "after Mario's passes at the longest length, every forward\n"
             "checkpointed, with per-stage layer counts from the strategy:"},
    {.name = "checkpointing", .arg = "S", CMD_TO_CHOICE(struct run_args, strategy, run_strategies),
     .help = "full (default): every layer, every step;\n"
             "static: one choice, planned for the longest length;\n"
             "input-aware: per step the plan of its length's bucket from the\n"
             "plan cache (a miss plans it), switched on the fly"},
    {.name = "input-aware", CMD_TO_SET(struct run_args, strategy, INPUT_AWARE_PLANS),
     .help = "--checkpointing input-aware"},
    {.name = "bucket", .arg = "W", CMD_TO_INT(struct run_args, bucket, 1, 1 << 20),
     .help = "plans are cached per W tokens of length (default 64)"},
    {.name = "fit-batches", .arg = "N", CMD_TO_INT(struct run_args, fit_batches, 1, 100000),
     .help = "the first N steps (default 10) run full checkpointing while\n"
             "every rank measures its stages' bytes; the memory predictor\n"
             "(per stage and layer, a quadratic in the length) is fitted on\n"
             "them and makes the static and input-aware plans; reported: its\n"
             "error on the later steps' peak per device, the measured peak\n"
             "per device against the cap (--memory), steps over the cap,\n"
             "plan switches, cache hits and misses, samples and tokens per s"},
    {0},
};

static int run_exec(int argc, char **argv);

const struct cmd_entry cmd_run_entry = {
    .name = "run",
    .summary = "run a plan for real under MPI: loss, step time, measured memory",
    .usage = run_usage,
    .plan_flags = true,
    .options = run_options,
    .footer =
        "Test hooks (environment): MT_FAULT_KILL_RANK=r or MT_FAULT_HANG_RANK=r with\n"
        "MT_FAULT_AT_STEP=k make rank r kill itself (SIGKILL) or stop answering halfway through\n"
        "step k (1-based, default 1).\n"
        "Exit status: 0 ok, 1 the run failed (a rank died, hung or hit an error), 2 bad usage or\n"
        "a plan the executor cannot run.\n",
    .args_max = 1,
    .args = "PLAN or CONFIG",
    .exec = run_exec,
};

/* ---- rank 0's output ---- */

struct run_ui {
    bool tty;
};

static void run_progress(int step, int steps, double loss, double step_s, void *ctx)
{
    const struct run_ui *ui = ctx;
    if (!ui->tty)
        return;
    enum { W = 30 };
    static const char bar[W + 1] = "##############################";
    int fill = steps > 0 ? W * step / steps : W;
    fprintf(stderr, "\r[%.*s%*s] step %d/%d  loss %.4f  %.1f ms/step ", fill, bar, W - fill, "",
            step, steps, loss, step_s * 1e3);
    if (step == steps)
        fputc('\n', stderr);
    fflush(stderr);
}

static void run_print_inputs(const struct plan *p, const struct run_args *a,
                             const struct interp_result *r)
{
    const struct input_aware_report *ir = &a->ir;
    double sps, tps;
    input_aware_rates(p, &a->smp, r, &sps, &tps);
    printf("lengths: %s, %d to %d tokens (mean %.1f); %d steps; checkpointing: %s", a->lengths,
           a->smp.min_len, a->smp.max_len, seqlen_sample_mean(&a->smp), r->steps,
           input_aware_strategy_name(ir->strategy));
    if (ir->strategy == INPUT_AWARE_PLANS)
        printf(" (buckets of %d tokens)", ir->width);
    if (ir->k_static != NULL) {
        printf(" (layers per stage:");
        for (int j = 0; j < ir->stages; j++)
            printf(" %d", ir->k_static[j]);
        printf(")");
    }
    printf("\nthroughput %.2f samples/s, %.0f tokens/s; %ld plan switches", sps, tps, ir->switches);
    if (ir->strategy == INPUT_AWARE_PLANS)
        printf("; plan cache: %ld hits, %ld misses (%.3f ms per miss, %.3f ms max)", ir->hits,
               ir->misses, ir->plan_ms_mean, ir->plan_ms_max);
    if (ir->fallbacks > 0)
        printf("; %d steps with no fitting plan ran full checkpointing", ir->fallbacks);
    char cap[32];
    str_format_bytes(ir->cap, cap, sizeof cap);
    printf("\ncap %s: measured peak per device", cap);
    for (int i = 0; i < ir->ranks; i++) {
        char pk[32];
        str_format_bytes(ir->dev[i].peak_bytes, pk, sizeof pk);
        printf("%s %d: %s", i ? "," : "", ir->dev[i].dev, pk);
    }
    if (ir->over_cap == 0)
        printf("; no step over the cap\n");
    else
        printf("; OVER THE CAP in %d device-steps\n", ir->over_cap);
    if (r->steps > ir->fit_batches)
        printf("predictor (fitted on steps 1-%d): error on the peak per device over steps %d-%d: "
               "%.3f%% max, %.3f%% mean\n",
               ir->fit_batches, ir->fit_batches + 1, r->steps, 100 * ir->err_max,
               100 * ir->err_mean);
}

/* A MoE run's token all-to-alls per rank over the run, beside the simulation's for as many
 * steps (priced in the cost model's dtype, the executor's are fp32). */
static void run_print_a2a(const struct plan *p, const struct interp_result *r)
{
    printf("%6s %6s %10s %14s %16s %s\n", "device", "rank", "exchanges", "a2a measured",
           "a2a simulated", "bytes sent");
    for (int i = 0; i < r->ranks; i++) {
        const struct interp_device *d = &r->dev[i];
        double us = 0, bytes = 0;
        struct mt_err e = {0};
        char sent[32], sim_sent[32] = "-", sim_t[32] = "-";
        str_format_bytes(d->a2a_bytes, sent, sizeof sent);
        if (interp_a2a_simulated(p, d->dev, &us, &bytes, &e) == MT_OK) {
            snprintf(sim_t, sizeof sim_t, "%.3f ms", us * 1e-3 * r->steps);
            str_format_bytes(bytes * r->steps, sim_sent, sizeof sim_sent);
        }
        char meas[32], both[64];
        snprintf(meas, sizeof meas, "%.3f ms", d->a2a_s * 1e3);
        snprintf(both, sizeof both, "%s (sim %s)", sent, sim_sent);
        printf("%6d %6d %10ld %14s %16s %s\n", d->dev, d->rank, d->a2a_calls, meas, sim_t, both);
    }
}

static void run_print_summary(const struct plan *p, const struct run_args *a,
                              const struct interp_result *r, const struct sim_result *sim,
                              const char *trace_note)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    char tokens[32];
    if (a->lengths != NULL)
        snprintf(tokens, sizeof tokens, "%d-%d", a->smp.min_len, a->smp.max_len);
    else
        snprintf(tokens, sizeof tokens, "%d", c->model.seq_length);
    char degrees[64];
    config_degrees_text(c, g->devices, degrees, sizeof degrees);
    printf("%s, %s, %s, %d micro-batches of %d x %s tokens, %s backend, %d ranks\n",
           c->model.name, config_scheme_name(c->scheme), degrees, g->mbs,
           c->micro_batch_size, tokens, a->backend, r->ranks);
    if (r->steps > 0)
        printf("loss %.4f -> %.4f over %d steps; step time %.2f ms (mean of steps %d-%d), "
               "simulated %.2f ms\n",
               r->loss[0], r->loss[r->steps - 1], r->steps, interp_mean_step(r) * 1e3,
               r->steps > 1 ? 2 : 1, r->steps, sim ? sim->step_time * 1e-3 : NAN);
    /* "peak simulated" is the figure compare gives for this plan and its trace */
    printf("%6s %6s %12s %18s %18s %14s %14s\n", "device", "rank", "static", "peak act measured",
           "peak act simulated", "peak measured", "peak simulated");
    for (int i = 0; i < r->ranks; i++) {
        const struct interp_device *d = &r->dev[i];
        char st[32], act[32], pk[32], sa[32] = "-", sp[32] = "-";
        str_format_bytes(d->static_bytes, st, sizeof st);
        str_format_bytes(d->peak_act_bytes, act, sizeof act);
        str_format_bytes(d->peak_bytes, pk, sizeof pk);
        if (sim) {
            str_format_bytes(sim->dev[d->dev].peak_dynamic, sa, sizeof sa);
            str_format_bytes(sim->dev[d->dev].peak_mem, sp, sizeof sp);
        }
        printf("%6d %6d %12s %18s %18s %14s %14s\n", d->dev, d->rank, st, act, sa, pk, sp);
    }
    if (c->model.moe.num_experts > 0)
        run_print_a2a(p, r);
    if (a->have_ir)
        run_print_inputs(p, a, r);
    if (trace_note)
        printf("%s\n", trace_note);
}

/* ---- one rank ---- */

static int run_rank(struct plan *p, struct run_args *a, int argc, char **argv)
{
    struct mt_err e = {0};
    struct flow_rank fr;
    int started = flow_rank_start(p, a->backend, &a->o, &argc, &argv, &fr);
    if (started != 0)
        return started;
    int rank = fr.rank, size = fr.size;
    const char *tty_env = getenv(LAUNCH_ENV_TTY);
    struct run_ui ui = {rank == 0 && !a->json &&
                        (isatty(STDERR_FILENO) || (tty_env && strcmp(tty_env, "1") == 0))};
    struct interp_result res;
    int rc = flow_rank_run(&fr, p, &a->o, a->ia, rank == 0 ? run_progress : NULL, &ui, &res,
                           &a->ir, &a->have_ir, &e);
    int status = rc == MT_OK ? 0 : 1;
    struct capture_rec *all = NULL;
    size_t nall = 0;
    flow_rank_gather(&fr, rc, &e, &res, &all, &nall);
    if (rank == 0) {
        char note[512] = "";
        if (a->trace_out && flow_rank_trace(a->trace_out, p, all, nall, size, a->backend,
                                            rc == MT_OK ? "complete" : e.msg, note,
                                            sizeof note) != MT_OK)
            status = 1;
        /* a variable-length run has no one plan to simulate: its report says what it ran */
        struct sim_result *sim = a->lengths == NULL ? flow_run_simulate(p) : NULL;
        if (a->json) {
            char *text = interp_report_json(&(struct interp_report){
                .plan = p, .backend = a->backend, .o = &a->o, .r = &res, .sim = sim,
                .trace = a->trace_out, .error = rc == MT_OK ? NULL : e.msg,
                .lengths = a->lengths, .smp = &a->smp, .ir = a->have_ir ? &a->ir : NULL});
            puts(text);
            free(text);
        } else {
            run_print_summary(p, a, &res, sim, note[0] ? note : NULL);
        }
        if (sim) {
            sim_result_fini(sim);
            free(sim);
        }
        if (rc != MT_OK)
            fprintf(stderr, "mario-tui run: %s\n", e.msg);
    }
    free(all);
    input_aware_report_fini(&a->ir);
    interp_result_fini(&res);
    flow_rank_done(&fr, rc);
    return status;
}

/* ---- the launcher ---- */

static int run_launch(struct plan *p, struct run_args *a, int argc, char **argv)
{
    struct mt_err e = {0};
    int status = 0;
    if (flow_run_launch(p, a->np, a->backend, &a->o, a->trace_out,
                        isatty(STDERR_FILENO) && !a->json, argc, argv, &status, &e) != MT_OK) {
        int failed = cmd_fail("run", &e);
        return status == 2 ? 2 : failed; /* a plan this executor cannot run is bad input */
    }
    return status;
}

/* ---- the command ---- */

/* --lengths FILE: a config (not a plan: the planner makes every step's plan), then
 * flow_run_inputs. */
static int run_inputs_setup(struct run_args *a, bool steps_given, struct plan **out,
                            struct mt_err *e)
{
    struct config c;
    struct plan *loaded = NULL;
    TRY(cmd_plan_config(&a->cp, &c, &loaded, e));
    if (loaded != NULL) {
        plan_free(loaded);
        return err_set(e, MT_EINVAL,
                       "--lengths: %s is a plan; give a CONFIG (the planner makes each step's "
                       "plan from it)",
                       a->cp.path);
    }
    return flow_run_inputs(&c, a->cp.path, a->lengths, steps_given, &a->o, &a->iao, &a->smp,
                           &a->ia, out, e);
}

static int run_exec(int argc, char **argv)
{
    struct run_args a = {.strategy = -1, .seed = -1};
    struct mt_err e = {0};
    interp_opts_default(&a.o);
    int first, st = cmd_options_parse(&cmd_run_entry, argc, argv, &a, &a.cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    a.backend = cmd_run_backends[a.backend_i];
    bool steps_given = a.steps > 0, strategy_given = a.strategy >= 0;
    bool bucket_given = a.bucket > 0, fit_given = a.fit_batches > 0;
    a.o.steps = steps_given ? a.steps : 10;
    if (a.lr > 0)
        a.o.lr = (float)a.lr;
    if (a.seed >= 0)
        a.o.seed = (uint64_t)a.seed;
    a.iao = (struct input_aware_opts){
        .strategy = strategy_given ? (enum input_aware_strategy)a.strategy : INPUT_AWARE_FULL,
        .width = bucket_given ? a.bucket : 64,
        .fit_batches = fit_given ? a.fit_batches : INPUT_AWARE_FIT_BATCHES};

    if (a.lengths == NULL && (strategy_given || bucket_given || fit_given))
        return cmd_usage_error("run", "--input-aware, --checkpointing, --bucket and --fit-batches "
                                      "go with --lengths FILE");
    struct plan *p = NULL;
    if (a.lengths != NULL) {
        if (run_inputs_setup(&a, steps_given, &p, &e) != MT_OK) {
            input_aware_free(a.ia);
            seqlen_sample_fini(&a.smp);
            return cmd_fail("run", &e);
        }
    } else if (cmd_plan_build(&a.cp, &p, &e) != MT_OK) {
        return cmd_fail("run", &e);
    }
    if (!steps_given && interp_plan_iterations(p) > 1)
        a.o.steps = interp_plan_iterations(p); /* one run of an asynchronous plan */
    int moved = flow_run_prepare(p, a.backend, &e);
    if (moved < 0) {
        plan_free(p);
        return cmd_fail("run", &e);
    }
    /* (after the executor's own checks: a model it cannot run is bad input first) the CPU
     * backend's ranks share this host: refuse up front what its memory cannot hold
     * (GPT3-1.6B's 8 ranks need 27 GiB; the kernel killed them 2 minutes in) */
    struct xformer_dims dims;
    int dims_b, dims_t;
    int unfit = 0; /* 2: a model the executor cannot run is bad input, as its ranks say */
    if (!launch_under_mpi() && strcmp(a.backend, "cpu") == 0)
        unfit = interp_dims(plan_config(p), &dims, &dims_b, &dims_t, &e) != MT_OK ? 2
                : footprint_check_run(p, &e) != MT_OK                      ? 1
                                                                           : 0;
    if (unfit != 0) {
        plan_free(p);
        input_aware_free(a.ia);
        seqlen_sample_fini(&a.smp);
        cmd_fail("run", &e);
        return unfit;
    }
    if (moved > 0 && !launch_under_mpi() && !a.json)
        fprintf(stderr,
                "mario-tui run: %d receive%s moved earlier into the senders' order (NCCL "
                "matches a pair's messages in order)\n",
                moved, moved == 1 ? "" : "s");
    char *data = NULL;
    if (launch_data_path(a.data, &data, &e) != MT_OK) {
        plan_free(p);
        return cmd_fail("run", &e);
    }
    a.o.data_path = data;
    int status = launch_under_mpi() ? run_rank(p, &a, argc, argv) : run_launch(p, &a, argc, argv);
    free(data);
    plan_free(p);
    input_aware_free(a.ia);
    seqlen_sample_fini(&a.smp);
    return status;
}
