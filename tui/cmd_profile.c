/* tui/cmd_profile.c: `mario-tui profile`: the paper's lightweight profiling (§5.2) as a
 * command (issue 8). It makes small GPipe plans of the config's model and batch shape, on 1
 * device (two data-parallel replicas) and 2 devices, over a few layer counts per stage and
 * micro-batch counts, with and without checkpointing; runs each for a few steps on the
 * executor (`mario-tui run --trace-out`, a child process per run); reads the traces back and
 * fits them (traces/calibrate.h) into a calibration file (model/profile.h) that every
 * plan-making command takes with --calibration. It ends by simulating its own runs with the
 * calibration: the step-time error left on the data it was fitted to. */
#include <config.h>
#include "tui/cmd.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/profile.h"
#include "model/config.h"
#include "model/presets.h"
#include "model/profile.h"
#include "sim/plan/plan.h"
#include "traces/calibrate.h"
#include "traces/import.h"
#include "traces/mapping.h"
#include "traces/trace.h"
#include "tui/cmd_profile_micro.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

extern char **environ;

#define PROFILE_MAX_COUNTS 8

static const char profile_usage[] =
    "Usage: mario-tui profile [CONFIG] [plan flags] [--backend cpu|cuda|nccl] [--out FILE]\n"
    "                         [--layer-counts L,...] [--mb-counts N,...] [--steps K]\n"
    "                         [--keep DIR] [--json]\n"
    "       mario-tui profile --from-trace TRACE... [--map FILE] [plan flags] [--out FILE]\n"
    "       mario-tui profile --from-nccl-tests FILE... [--collective C] [--link L]\n"
    "                         [--in-place] [--out FILE]\n"
    "       mario-tui profile --micro [--backend cpu|cuda|nccl] [--gemm-sizes N,...]\n"
    "                         [--ranks N,...] [--max-bytes B] [--seconds S] [--out FILE]\n"
    "The paper's lightweight profiling (§5.2): short executor runs of GPipe pipelines on 1\n"
    "device (two data-parallel replicas) and 2 devices, always two ranks, with the config's\n"
    "model and batch shape, over a few layer counts per stage and micro-batch counts, with\n"
    "and without checkpointing; least-squares fits y = a·n + b of forward, backward and\n"
    "recompute time (medians per run), optimizer step and allreduce (by parameters), static\n"
    "and dynamic memory, message buffers and p2p latency, written as a calibration that every\n"
    "command takes with --calibration FILE.\n"
    "The calibration records the device it was measured on.\n"
    "With --from-trace the calibration comes from a measured run instead (ours, or a PyTorch\n"
    "profiler trace, as `mario-tui import` reads it): per-op medians per stage, fitted over\n"
    "the stages' layer counts, and the p2p latency; the device from deviceProperties.\n"
    "--from-nccl-tests and --micro make micro-benchmark tables instead (docs/traces.md):\n"
    "GEMM rates by shape, copy bandwidth, collective bus bandwidth by size, ranks and link,\n"
    "from nccl-tests' output as it prints it, or measured here (sgemm, memcpy and MPI\n"
    "collectives under mpirun on a CPU; cuBLAS, device copies and NCCL on a GPU).\n\n";

struct profile_counts {
    int v[PROFILE_MAX_COUNTS], n;
};

struct profile_opts {
    int backend; /* in cmd_run_backends */
    const char *out, *keep, *map;
    bool from_trace;
    struct profile_counts layers, mbs;
    int steps;
    bool json;
    /* micro-benchmark tables */
    bool from_nccl_tests, micro, in_place;
    int coll, link; /* -1: from the files */
    struct profile_counts gemm_sizes, ranks;
    double max_bytes, min_bytes, seconds;
};

static const char *const profile_colls[] = {"all_reduce", "all_gather", "reduce_scatter",
                                            "all_to_all", "send_recv", NULL};
static const char *const profile_links[] = {"nvlink", "network", "pcie", NULL};
static int profile_bytes_opt(void *opts, const struct cmd_option *o, const char *arg,
                             struct mt_err *e);

static int profile_counts_opt(void *opts, const struct cmd_option *o, const char *arg,
                              struct mt_err *e);

static const struct cmd_option profile_options[] = {
    {.name = "backend", .arg = "B", CMD_TO_CHOICE(struct profile_opts, backend, cmd_run_backends),
     .heading = "  (without CONFIG and --model the model is the tiny preset)\n",
     .help = "executor backend: cpu (default), cuda, nccl"},
    {.name = "out", .letter = 'o', .arg = "FILE", CMD_TO_STRING(struct profile_opts, out),
     .help = "where to write the calibration (default calibration.json)"},
    {.name = "layer-counts", .arg = "L,...", CMD_TO_CALL(profile_counts_opt, 64),
     .at = CMD_AT(struct profile_opts, layers, struct profile_counts),
     .help = "layers per stage (default 1,2,3)"},
    {.name = "mb-counts", .arg = "N,...", CMD_TO_CALL(profile_counts_opt, 256),
     .at = CMD_AT(struct profile_opts, mbs, struct profile_counts),
     .help = "micro-batches per run (default 2,4)"},
    {.name = "steps", .arg = "K", CMD_TO_INT(struct profile_opts, steps, 2, 1000),
     .help = "steps per run; the first warms up and is not counted\n(default 4)"},
    {.name = "keep", .arg = "DIR", CMD_TO_STRING(struct profile_opts, keep),
     .help = "keep the runs' plans, traces and logs in DIR"},
    {.name = "json", CMD_TO_BOOL(struct profile_opts, json),
     .help = "print the calibration (with its observations) instead of the\ntable"},
    {.name = "from-trace", CMD_TO_BOOL(struct profile_opts, from_trace),
     .heading = "Calibrate from a measured run:\n",
     .help = "the arguments are traces of one run (one file, or one per rank):\n"
             "fit them instead of running the executor"},
    {.name = "map", .arg = "FILE", CMD_TO_STRING(struct profile_opts, map),
     .help = "with --from-trace: a mapping of foreign event names (docs/traces.md)"},
    {.name = "from-nccl-tests", CMD_TO_BOOL(struct profile_opts, from_nccl_tests),
     .heading = "Micro-benchmark tables (docs/traces.md):\n",
     .help = "the arguments are nccl-tests outputs (all_reduce_perf, all_gather_perf,\n"
             "reduce_scatter_perf, alltoall_perf, sendrecv_perf): their busbw by size"},
    {.name = "collective", .arg = "C", CMD_TO_CHOICE(struct profile_opts, coll, profile_colls),
     .help = "with --from-nccl-tests: the collective, for files of nccl-tests before\n"
             "2.15 that do not name it: all_reduce, all_gather, reduce_scatter,\n"
             "all_to_all, send_recv"},
    {.name = "link", .arg = "L", CMD_TO_CHOICE(struct profile_opts, link, profile_links),
     .help = "with --from-nccl-tests: the link (default: nvlink when the Rank lines\n"
             "name one host, network when several): nvlink, network, pcie"},
    {.name = "in-place", CMD_TO_BOOL(struct profile_opts, in_place),
     .help = "with --from-nccl-tests: the in-place columns (default out-of-place)"},
    {.name = "micro", CMD_TO_BOOL(struct profile_opts, micro),
     .help = "measure this machine: a GEMM grid (sgemm, one thread; on --backend\n"
             "cuda/nccl cuBLAS bf16 and fp32), copies, and collectives (MPI under\n"
             "mpirun --oversubscribe; NCCL with --backend nccl)"},
    {.name = "gemm-sizes", .arg = "N,...", CMD_TO_CALL(profile_counts_opt, 16384),
     .at = CMD_AT(struct profile_opts, gemm_sizes, struct profile_counts),
     .help = "with --micro: GEMMs of every (m, n, k) of these (default 64,256,1024)"},
    {.name = "ranks", .arg = "N,...", CMD_TO_CALL(profile_counts_opt, 64),
     .at = CMD_AT(struct profile_opts, ranks, struct profile_counts),
     .help = "with --micro: the collectives' rank counts, an mpirun job each\n(default 2,4)"},
    {.name = "max-bytes", .arg = "B", CMD_TO_CALL(profile_bytes_opt, 0),
     .at = CMD_AT(struct profile_opts, max_bytes, double),
     .help = "with --micro: the largest copy and collective (default 64M)"},
    {.name = "min-bytes", .arg = "B", CMD_TO_CALL(profile_bytes_opt, 0),
     .at = CMD_AT(struct profile_opts, min_bytes, double),
     .help = "with --micro: the smallest collective, then x4 (default 1K)"},
    {.name = "seconds", .arg = "S", CMD_TO_DOUBLE(struct profile_opts, seconds, 0.001, 60),
     .help = "with --micro: repetitions of at least S seconds a measurement\n(default 0.05)"},
    {0},
};

static int profile_exec(int argc, char **argv);

const struct cmd_entry cmd_profile_entry = {
    .name = "profile",
    .summary = "measure this machine on the executor: a calibration for --calibration",
    .usage = profile_usage,
    .plan_flags = true,
    .options = profile_options,
    .footer = "Exit status: 0 ok, 1 a run or the fit failed, 2 bad usage or input.\n",
    .args_max = -1,
    .args = "CONFIG (or, with --from-trace, TRACE...)",
    .exec = profile_exec,
};

/* --layer-counts, --mb-counts: a comma list of up to PROFILE_MAX_COUNTS numbers in
 * [1, o->value], into the struct profile_counts at o->at. */
static int profile_counts_opt(void *opts, const struct cmd_option *o, const char *arg,
                              struct mt_err *e)
{
    struct profile_counts *c = (void *)((char *)opts + o->at);
    c->n = 0;
    for (const char *s = arg; *s;) {
        char num[16];
        size_t len = strcspn(s, ",");
        long v;
        snprintf(num, sizeof num, "%.*s", (int)(len < sizeof num ? len : sizeof num - 1), s);
        if (len >= sizeof num || cmd_options_int(num, 1, o->value, &v, NULL) != MT_OK)
            return err_set(e, MT_EINVAL,
                           "expected numbers in [1, %d] separated by commas, got '%s'",
                           o->value, arg);
        if (c->n == PROFILE_MAX_COUNTS)
            return err_set(e, MT_EINVAL, "at most %d values", PROFILE_MAX_COUNTS);
        c->v[c->n++] = (int)v;
        s += len + (s[len] == ',');
    }
    return c->n > 0 ? MT_OK : err_set(e, MT_EINVAL, "no values");
}

/* --max-bytes, --min-bytes: a size ("64M", "1K", bytes) in [1 KiB, 4 GiB]. */
static int profile_bytes_opt(void *opts, const struct cmd_option *o, const char *arg,
                             struct mt_err *e)
{
    double *v = (void *)((char *)opts + o->at);
    TRY(str_parse_bytes(arg, v, e));
    if (*v < 1024 || *v > 4294967296.0)
        return err_set(e, MT_EINVAL, "expected a size from 1K to 4G, got '%s'", arg);
    return MT_OK;
}

static void profile_print_fit(const char *name, const struct profile_fit *f, bool bytes)
{
    if (f->points == 0) {
        printf("  %-13s %14s\n", name, "(not measured: analytic)");
        return;
    }
    if (bytes)
        printf("  %-13s %14.0f %14.0f %12.0f %12.0f %7.4f %6d\n", name, f->a, f->b, f->embed,
               f->head, f->r2, f->points);
    else
        printf("  %-13s %14.2f %14.2f %12.2f %12.2f %7.4f %6d\n", name, f->a, f->b, f->embed,
               f->head, f->r2, f->points);
}

static void profile_print_fits(const struct profile *prof)
{
    /* the widths count bytes: "·" and "²" take two */
    printf("  %-13s %15s %14s %12s %12s %8s %6s\n", "fit y =", "a·n (per layer)", "+ b (stage)",
           "+ embed", "+ head", "R²", "points");
    static const struct {
        const char *name;
        size_t off;
        bool bytes;
    } rows[] = {
        {"FW (us)", offsetof(struct profile, fw), false},
        {"BW (us)", offsetof(struct profile, bw), false},
        {"RC (us)", offsetof(struct profile, rc), false},
        {"B (us)", offsetof(struct profile, b), false},
        {"W (us)", offsetof(struct profile, w), false},
        {"OS (us)", offsetof(struct profile, os), false},
        {"AR (us)", offsetof(struct profile, ar), false},
        {"p2p (us)", offsetof(struct profile, p2p), false},
        {"act (B)", offsetof(struct profile, act), true},
        {"ckpt (B)", offsetof(struct profile, ckpt), true},
        {"static (B)", offsetof(struct profile, static_bytes), true},
        {"FW work (B)", offsetof(struct profile, fw_work_bytes), true},
        {"CFW peak (B)", offsetof(struct profile, cfw_peak_bytes), true},
        {"BW work (B)", offsetof(struct profile, bw_work_bytes), true},
        {"message (B)", offsetof(struct profile, msg_bytes), true},
        {"W keeps (B)", offsetof(struct profile, w_keep_bytes), true},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        profile_print_fit(rows[i].name,
                          (const struct profile_fit *)((const char *)prof + rows[i].off),
                          rows[i].bytes);
}

/* --json: the calibration file as written. */
static void profile_print_file(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (str_read_file(path, PROFILE_MAX_BYTES, &text, &len, NULL) == MT_OK)
        fwrite(text, 1, len, stdout);
    free(text);
}

/* `profile --from-trace`: the plan the trace ran (traces/import.h), its observations
 * (calibrate_add_run, and the allreduce over every replica of ours), the fits. */
static int profile_from_trace(const struct profile_opts *o, const struct cmd_plan *cp,
                              const char *const *files, int nfiles)
{
    struct mt_err e = {0};
    if (nfiles < 1)
        return cmd_usage_error("profile", "--from-trace needs the trace files");
    struct cmd_plan flags = *cp; /* the arguments are traces: the flags over the default */
    flags.path = NULL;
    struct config base;
    if (cmd_plan_config_raw(&flags, &base, &e) != MT_OK)
        return cmd_fail("profile", &e);
    base.profile.enabled = false;
    struct mapping *map = NULL;
    if (o->map && mapping_load(o->map, &map, &e) != MT_OK)
        return cmd_fail("profile", &e);
    struct trace *t = NULL;
    struct plan *p = NULL;
    struct calibrate *cal = calibrate_new();
    int status = 0;
    struct import_opts io = {-1, cp->n_over > 0, cmd_plan_given(cp, CMD_PLAN_DEVICE)};
    struct import_info info;
    int rc = flow_profile_from_trace(files, nfiles, map, &base, &io, cal, &t, &p, &info, &e);
    struct profile prof;
    double meas = NAN, sim = NAN;
    if (rc == MT_OK)
        rc = flow_profile_fit_trace(cal, p, t, files[0], &prof, &sim, &meas, &e);
    if (rc == MT_OK)
        rc = profile_save(o->out, &prof, calibrate_observations_json(cal), &e);
    if (rc != MT_OK) {
        status = cmd_fail("profile", &e);
        goto done;
    }
    if (o->json) {
        profile_print_file(o->out);
    } else {
        const struct config *c = plan_config(p);
        printf("calibration of %s (hidden %d, sequence %d, micro-batch %d) on %s [%s], from "
               "%s%s: %s, %d devices, %d stages, %d micro-batches, the steps after the first\n\n",
               c->model.name, c->model.hidden_size, c->model.seq_length, c->micro_batch_size,
               prof.device, prof.backend, files[0], nfiles > 1 ? " ..." : "",
               config_scheme_name(c->scheme), info.devices, info.stages, info.mbs);
        profile_print_fits(&prof);
        printf("\nstep time of the run, simulated with the calibration: %.3f ms, measured %.3f ms "
               "(%+.1f %%)\n",
               sim * 1e-3, meas * 1e-3, 100 * (sim - meas) / meas);
        printf("wrote %s (use it with --calibration %s)\n", o->out, o->out);
    }
done:
    plan_free(p);
    trace_free(t);
    mapping_free(map);
    calibrate_free(cal);
    return status;
}

static int profile_exec(int argc, char **argv)
{
    struct profile_opts o = {.out = "calibration.json",
                             .layers = {{1, 2, 3}, 3},
                             .mbs = {{2, 4}, 2},
                             .steps = 4,
                             .coll = -1,
                             .link = -1,
                             .max_bytes = 64 << 20,
                             .min_bytes = 1024,
                             .seconds = 0.05};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_profile_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    if (o.from_trace + o.from_nccl_tests + o.micro > 1)
        return cmd_usage_error("profile", "one of --from-trace, --from-nccl-tests, --micro");
    if ((o.coll >= 0 || o.link >= 0 || o.in_place) && !o.from_nccl_tests)
        return cmd_usage_error("profile", "--collective, --link and --in-place go with "
                                          "--from-nccl-tests");
    struct cmd_profile_micro mo = {o.out,         o.json,         o.backend,    o.coll,
                                   o.link,        o.in_place,     o.gemm_sizes.v, o.gemm_sizes.n,
                                   o.ranks.v,     o.ranks.n,      o.max_bytes,  o.min_bytes,
                                   o.seconds};
    if (o.from_nccl_tests)
        return cmd_profile_from_nccl_tests(&mo, (const char *const *)&argv[first], argc - first);
    if (o.micro) {
        if (argc - first > 0)
            return cmd_usage_error("profile", "--micro takes no arguments");
        return cmd_profile_run_micro(&mo, argc, argv);
    }
    if (o.gemm_sizes.n || o.ranks.n)
        return cmd_usage_error("profile", "--gemm-sizes and --ranks go with --micro");
    if (o.from_trace)
        return profile_from_trace(&o, &cp, (const char *const *)&argv[first], argc - first);
    if (argc - first > 1)
        return cmd_usage_error("profile", "one CONFIG at most (traces go with --from-trace)");
    if (o.map)
        return cmd_usage_error("profile", "--map goes with --from-trace");
    const char *backend = cmd_run_backends[o.backend];

    struct config base;
    if (cmd_plan_config_raw(&cp, &base, &e) != MT_OK)
        return cmd_fail("profile", &e);
    if (cp.path == NULL && !cmd_plan_given(&cp, CMD_PLAN_MODEL) &&
        presets_model("tiny", &base.model, &e) != MT_OK)
        return cmd_fail("profile", &e);
    base.profile.enabled = false;

    char self[4096], dir[1024];
    if (flow_profile_setup(o.keep, self, sizeof self, dir, sizeof dir, &e) != MT_OK)
        return cmd_fail("profile", &e);

    /* on a CPU of a few cores, two runs of twice as many ranks as cores more: the messages of
     * ranks that share cores (sim/core/share.h) */
    int shared_pp = flow_profile_shared_ranks(backend), nruns, nmain;
    struct flow_profile_run *runs =
        flow_profile_runs(o.layers.v, o.layers.n, o.mbs.v, o.mbs.n, shared_pp, &nruns, &nmain);
    struct calibrate *cal = calibrate_new();
    int status = 0, k;
    struct timespec t_start;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    for (k = 0; k < nruns; k++) {
        struct flow_profile_run *r = &runs[k];
        if (!o.json)
            fprintf(stderr,
                    "\rmario-tui profile: run %d of %d: %d layer%s x %d device%s, %d "
                    "micro-batches%s   ",
                    k + 1, nruns, r->layers, r->layers > 1 ? "s" : "", r->pp, r->pp > 1 ? "s" : "",
                    r->mbs, r->ckpt ? ", checkpointed" : "");
        if (flow_profile_do_run(self, dir, k, &base, r, backend, o.steps, cal, &e) != MT_OK) {
            if (!o.json)
                fputc('\n', stderr);
            status = cmd_fail("profile", &e);
            goto done;
        }
    }
    struct timespec t_end;
    clock_gettime(CLOCK_MONOTONIC, &t_end);
    double secs =
        (double)(t_end.tv_sec - t_start.tv_sec) + 1e-9 * (t_end.tv_nsec - t_start.tv_nsec);
    if (!o.json)
        fprintf(stderr, "\rmario-tui profile: %d runs in %.1f s%40s\n", nruns, secs, "");

    struct profile prof;
    double mape_before = NAN, mape_after = NAN, mape_shared = NAN;
    int rc = flow_profile_fit(cal, &base, backend, &prof, &e);
    if (rc == MT_OK) /* the self-check: the runs predicted without and with the calibration */
        flow_profile_check(runs, nruns, nmain, &prof, &mape_before, &mape_after, &mape_shared);
    if (rc == MT_OK)
        rc = profile_save(o.out, &prof, calibrate_observations_json(cal), &e);
    if (rc != MT_OK) {
        status = cmd_fail("profile", &e);
        goto done;
    }
    if (o.json) {
        profile_print_file(o.out);
    } else {
        const struct model_spec *m = &base.model;
        printf("calibration of %s (hidden %d, sequence %d, micro-batch %d) on %s [%s]\n", m->name,
               m->hidden_size, m->seq_length, base.micro_batch_size, prof.device, backend);
        printf("%d runs of %d steps (the first not counted), two ranks each: GPipe on 1 device "
               "(dp 2) and 2 devices, layers per stage",
               nmain, o.steps);
        for (int i = 0; i < o.layers.n; i++)
            printf("%s%d", i ? "," : " ", o.layers.v[i]);
        printf(", micro-batches");
        for (int i = 0; i < o.mbs.n; i++)
            printf("%s%d", i ? "," : " ", o.mbs.v[i]);
        printf(", with and without checkpointing");
        if (nruns > nmain)
            printf("; and %d runs of %d ranks on these %d cores, for the messages of ranks that "
                   "share cores",
                   nruns - nmain, shared_pp, shared_pp / 2);
        printf("\n\n");
        profile_print_fits(&prof);
        profile_print_fit("p2p shared", &prof.p2p_shared, false);
        profile_print_fit("recv shared", &prof.recv_shared, false);
        profile_print_fit("gap shared", &prof.gap_shared, false);
        printf("\nstep time of these runs, simulated against measured: MAPE %.1f %% analytic, "
               "%.1f %% calibrated\n",
               mape_before, mape_after);
        if (nruns > nmain)
            printf("the %d-rank runs, calibrated, their cores shared: MAPE %.1f %%\n", shared_pp,
                   mape_shared);
        printf("wrote %s (use it with --calibration %s)\n", o.out, o.out);
    }
done:
    for (k = 0; k < nruns; k++)
        plan_free(runs[k].plan);
    free(runs);
    calibrate_free(cal);
    if (!o.keep && status == 0)
        flow_profile_cleanup(dir, nruns);
    else if (!o.keep) /* what failed stays for a look */
        fprintf(stderr, "mario-tui profile: the runs' plans, traces and logs are in %s\n", dir);
    return status;
}
