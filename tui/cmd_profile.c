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

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/config.h"
#include "model/presets.h"
#include "model/profile.h"
#include "sim/pass.h"
#include "sim/plan.h"
#include "sim/scheme.h"
#include "sim/simulate.h"
#include "traces/accuracy.h"
#include "traces/align.h"
#include "traces/calibrate.h"
#include "traces/import.h"
#include "traces/mapping.h"
#include "traces/trace.h"
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
    "the stages' layer counts, and the p2p latency; the device from deviceProperties.\n\n";

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
};

static int profile_counts_opt(void *opts, const struct cmd_option *o, const char *arg,
                              struct mt_err *e);

static const struct cmd_option profile_options[] = {
    {.name = "backend", .arg = "B", CMD_TO_CHOICE(struct profile_opts, backend, cmd_run_backends),
     .heading = "  (without CONFIG and --model the model is the tiny preset)\n",
     .help = "executor backend: cpu (default), cuda, nccl"},
    {.name = "out", .arg = "FILE", CMD_TO_STRING(struct profile_opts, out),
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

struct profile_run {
    int layers, pp, mbs;
    bool ckpt;
    struct plan *plan;
    double step_us; /* measured */
    bool shared;    /* more ranks than cores: only its messages are taken (sim/share.h) */
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

/* What the calibration was measured on. */
static void profile_device_name(const char *backend, char *buf, size_t n)
{
    snprintf(buf, n, "%s", backend);
    if (strcmp(backend, "cpu") == 0) {
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256], model[160] = "unknown CPU";
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                const char *v = strchr(line, ':');
                if (v) {
                    v += strspn(v + 1, " \t") + 1;
                    snprintf(model, sizeof model, "%.*s", (int)strcspn(v, "\n"), v);
                }
                break;
            }
        if (f)
            fclose(f);
        snprintf(buf, n, "cpu: %s (%ld cores)", model, sysconf(_SC_NPROCESSORS_ONLN));
        return;
    }
    FILE *p = popen("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null", "r");
    char line[160];
    if (p && fgets(line, sizeof line, p))
        snprintf(buf, n, "%.*s", (int)strcspn(line, "\n"), line);
    if (p)
        pclose(p);
}

/* Runs `mario-tui run PLAN ...` with its output in log; MT_EDEVICE names the run's last
 * words when it fails. */
static int profile_spawn(const char *self, const char *plan, const char *trace, const char *log,
                         const char *backend, int steps, struct mt_err *e)
{
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    char *argv[] = {(char *)self, "run",           (char *)plan,  "--steps",     steps_s,
                    "--backend",  (char *)backend, "--trace-out", (char *)trace, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return err_set(e, MT_EIO, "cannot start %s: %s", self, strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return err_set(e, MT_EIO, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return MT_OK;
    char *text = NULL;
    size_t len = 0;
    char last[300] = "(no output)";
    if (str_read_file(log, 1 << 20, &text, &len, NULL) == MT_OK && len > 0) {
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            len--;
        size_t start = len;
        while (start > 0 && text[start - 1] != '\n')
            start--;
        snprintf(last, sizeof last, "%.*s", (int)(len - start), text + start);
    }
    free(text);
    if (WIFEXITED(status))
        return err_set(e, MT_EDEVICE, "`mario-tui run %s` exited with %d: %s (log: %s)", plan,
                       WEXITSTATUS(status), last, log);
    return err_set(e, MT_EDEVICE, "`mario-tui run %s` was killed by signal %d: %s (log: %s)", plan,
                   WTERMSIG(status), last, log);
}

/* The plan of one run: GPipe over pp devices, n layers each, N micro-batches, the odd ones'
 * backwards split into B and W. Every run has
 * two ranks, so that each is measured as the runs it predicts run (two ranks computing at
 * once share the machine's caches, memory bandwidth and clock boost): one device is two
 * data-parallel replicas, which also measures the gradient allreduce. */
static int profile_plan(const struct config *base, struct profile_run *r, struct mt_err *e)
{
    struct config c = *base;
    c.scheme = SCHEME_GPIPE;
    c.cluster.dp = r->pp == 1 ? 2 : 1;
    c.num_device = r->pp * c.cluster.dp;
    c.model.num_layers = r->layers * r->pp;
    c.num_microbatches = r->mbs;
    c.global_batch_size = r->mbs * c.micro_batch_size * c.cluster.dp;
    c.chunks = 1;
    c.iterations = 1;
    c.update_interval = 1;
    c.unit.enabled = false;
    c.profile.enabled = false;
    struct plan *p = NULL;
    TRY(scheme_build(&c, &p, e));
    if (r->ckpt) {
        struct plan *q = NULL;
        struct pass_changes ch;
        pass_changes_init(&ch);
        int rc = pass_run(PASS_CHECKPOINT, p, &q, &ch, e);
        pass_changes_fini(&ch);
        plan_free(p);
        TRY(rc);
        p = q;
    }
    /* odd micro-batches' backwards split, B then W, so that every run measures BW, B and W
     * (and what B keeps for W) on the same stages */
    struct plan *q = plan_new(plan_config(p), plan_geom(p));
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            struct instr in = *plan_at(p, d, i);
            if (in.op == OP_BW && in.mb % 2 == 1) {
                in.op = OP_B;
                plan_append(q, d, in);
                in.op = OP_W;
            }
            plan_append(q, d, in);
        }
    plan_free(p);
    r->plan = q;
    return MT_OK;
}

/* The run's plan with another profile (for the self-check). */
static double profile_predict(const struct plan *p, const struct profile *pr)
{
    struct config c = *plan_config(p);
    c.profile = *pr;
    struct plan *q = plan_new(&c, plan_geom(p));
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            plan_append(q, d, *plan_at(p, d, i));
    struct sim_result r;
    double t = NAN;
    if (sim_run(q, &r, NULL) == MT_OK) {
        t = r.step_time;
        sim_result_fini(&r);
    }
    plan_free(q);
    return t;
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

static void profile_cleanup(const char *dir, int nruns)
{
    static const char *const what[] = {"plan.json", "trace.json", "log"};
    for (int i = 0; i < nruns; i++)
        for (int k = 0; k < 3; k++) {
            char path[1100];
            snprintf(path, sizeof path, "%s/run-%02d.%s", dir, i, what[k]);
            unlink(path);
        }
    rmdir(dir);
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
    struct trace *t = NULL, *all = NULL;
    struct plan *p = NULL;
    struct calibrate *cal = calibrate_new();
    int status = 0;
    struct trace_opts to = {map, 0};
    struct import_opts io = {-1, cp->n_over > 0, cmd_plan_given(cp, CMD_PLAN_DEVICE)};
    struct import_info info;
    int rc = trace_load(files, nfiles, &to, &t, &e);
    if (rc == MT_OK)
        rc = import_plan(t, files, nfiles, &base, &io, &p, &info, &e);
    if (rc == MT_OK) { /* the plan's own costs: the calibration is what is being made */
        struct config c = *plan_config(p);
        c.profile.enabled = false;
        struct plan *q = plan_new(&c, plan_geom(p));
        for (int d = 0; d < plan_devices(p); d++)
            for (int i = 0; i < plan_len(p, d); i++)
                plan_append(q, d, *plan_at(p, d, i));
        plan_free(p);
        p = q;
        rc = calibrate_add_run(cal, p, t, &e);
    }
    if (rc == MT_OK && trace_info(t)->replicas > 1) {
        struct trace_opts every = {map, -1};
        rc = trace_load(files, nfiles, &every, &all, &e);
        if (rc == MT_OK)
            rc = calibrate_add_allreduce(cal, p, all, &e);
    }
    struct profile prof;
    if (rc == MT_OK)
        rc = calibrate_fit(cal, plan_config(p), &prof, &e);
    if (rc != MT_OK) {
        status = cmd_fail("profile", &e);
        goto done;
    }
    const struct trace_info *ti = trace_info(t);
    snprintf(prof.backend, sizeof prof.backend, "%s", ti->backend[0] ? ti->backend : ti->source);
    if (ti->device_name[0])
        snprintf(prof.device, sizeof prof.device, "%s", ti->device_name);
    else
        snprintf(prof.device, sizeof prof.device, "%s (from %.60s)",
                 ti->backend[0] ? ti->backend : "unknown device", files[0]);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(prof.created, sizeof prof.created, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    /* the self-check: the run simulated with the calibration against what it measured */
    struct align_result m;
    struct align_opts ao = {.step = -1};
    double meas = NAN, sim = profile_predict(p, &prof);
    if (align_run(p, t, &ao, &m, NULL) == MT_OK) {
        meas = m.step_time_us;
        align_result_fini(&m);
    }
    if (profile_save(o->out, &prof, calibrate_observations_json(cal), &e) != MT_OK) {
        status = cmd_fail("profile", &e);
        goto done;
    }
    if (o->json) {
        char *text = NULL;
        size_t len = 0;
        if (str_read_file(o->out, PROFILE_MAX_BYTES, &text, &len, &e) == MT_OK)
            fwrite(text, 1, len, stdout);
        free(text);
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
    trace_free(all);
    mapping_free(map);
    calibrate_free(cal);
    return status;
}

static int profile_exec(int argc, char **argv)
{
    struct profile_opts o = {.out = "calibration.json",
                             .layers = {{1, 2, 3}, 3},
                             .mbs = {{2, 4}, 2},
                             .steps = 4};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_profile_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
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

    char self[4096];
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sn <= 0) {
        err_set(&e, MT_EIO, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
        return cmd_fail("profile", &e);
    }
    self[sn] = '\0';
    char dir[1024];
    if (o.keep) {
        if (mkdir(o.keep, 0755) != 0 && errno != EEXIST) {
            err_set(&e, MT_EIO, "%s: cannot create: %s", o.keep, strerror(errno));
            return cmd_fail("profile", &e);
        }
        snprintf(dir, sizeof dir, "%s", o.keep);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/mario-profile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            err_set(&e, MT_EIO, "%s: cannot create a temporary directory: %s", dir,
                    strerror(errno));
            return cmd_fail("profile", &e);
        }
    }

    /* on a CPU of a few cores, two runs of twice as many ranks as cores more: the messages of
     * ranks that share cores (sim/share.h) */
    long cores = strcmp(backend, "cpu") == 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 0;
    int shared_pp = cores >= 1 && cores <= 8 ? (int)(2 * cores) : 0;
    int nruns = o.layers.n * 2 * o.mbs.n * 2, nmain = nruns;
    if (shared_pp > 0)
        nruns += 2;
    struct profile_run *runs = xcalloc((size_t)nruns, sizeof *runs);
    struct calibrate *cal = calibrate_new();
    int status = 0, k = 0;
    struct timespec t_start;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    for (int li = 0; li < o.layers.n; li++)
        for (int pp = 1; pp <= 2; pp++)
            for (int mi = 0; mi < o.mbs.n; mi++)
                for (int ck = 0; ck < 2; ck++, k++)
                    runs[k] = (struct profile_run){o.layers.v[li], pp, o.mbs.v[mi], ck == 1,
                                                   NULL, NAN, false};
    for (int ck = 0; k < nruns; k++, ck++)
        runs[k] = (struct profile_run){1, shared_pp, o.mbs.v[o.mbs.n - 1], ck == 1, NULL, NAN,
                                       true};
    for (k = 0; k < nruns; k++) {
        struct profile_run *r = &runs[k];
        char plan_path[1100], trace_path[1100], log_path[1100];
        snprintf(plan_path, sizeof plan_path, "%s/run-%02d.plan.json", dir, k);
        snprintf(trace_path, sizeof trace_path, "%s/run-%02d.trace.json", dir, k);
        snprintf(log_path, sizeof log_path, "%s/run-%02d.log", dir, k);
        if (!o.json)
            fprintf(stderr,
                    "\rmario-tui profile: run %d of %d: %d layer%s x %d device%s, %d "
                    "micro-batches%s   ",
                    k + 1, nruns, r->layers, r->layers > 1 ? "s" : "", r->pp, r->pp > 1 ? "s" : "",
                    r->mbs, r->ckpt ? ", checkpointed" : "");
        struct trace *t = NULL;
        int rc = profile_plan(&base, r, &e);
        if (rc == MT_OK)
            rc = plan_save(r->plan, plan_path, &e);
        if (rc == MT_OK)
            rc = profile_spawn(self, plan_path, trace_path, log_path, backend, o.steps, &e);
        if (rc == MT_OK) {
            const char *paths[] = {trace_path};
            rc = trace_load(paths, 1, NULL, &t, &e);
        }
        if (rc == MT_OK)
            rc = r->shared ? calibrate_add_shared_run(cal, r->plan, t, &e)
                           : calibrate_add_run(cal, r->plan, t, &e);
        if (rc == MT_OK && plan_config(r->plan)->cluster.dp > 1) {
            /* the allreduce from every replica's events */
            const char *paths[] = {trace_path};
            struct trace_opts all = {NULL, -1};
            struct trace *ta = NULL;
            rc = trace_load(paths, 1, &all, &ta, &e);
            if (rc == MT_OK)
                rc = calibrate_add_allreduce(cal, r->plan, ta, &e);
            trace_free(ta);
        }
        if (rc == MT_OK) {
            struct align_result m;
            struct align_opts ao = {.step = -1};
            if (align_run(r->plan, t, &ao, &m, NULL) == MT_OK) {
                r->step_us = m.step_time_us;
                align_result_fini(&m);
            }
        }
        trace_free(t);
        if (rc != MT_OK) {
            if (!o.json)
                fputc('\n', stderr);
            err_wrap(&e, "run %d (%d layers x %d devices, %d micro-batches%s)", k + 1, r->layers,
                     r->pp, r->mbs, r->ckpt ? ", checkpointed" : "");
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
    if (calibrate_fit(cal, &base, &prof, &e) != MT_OK) {
        status = cmd_fail("profile", &e);
        goto done;
    }
    snprintf(prof.backend, sizeof prof.backend, "%s", backend);
    profile_device_name(backend, prof.device, sizeof prof.device);
    if (strcmp(backend, "cpu") == 0) /* its ranks share this machine's cores (sim/share.h) */
        prof.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(prof.created, sizeof prof.created, "%Y-%m-%dT%H:%M:%SZ", &tmv);

    /* the self-check: the runs predicted without and with the calibration */
    double *meas = xmalloc((size_t)nruns * sizeof(double));
    double *before = xmalloc((size_t)nruns * sizeof(double));
    double *after = xmalloc((size_t)nruns * sizeof(double));
    struct profile none = {0};
    for (k = 0; k < nruns; k++) {
        meas[k] = runs[k].step_us;
        before[k] = profile_predict(runs[k].plan, &none);
        after[k] = profile_predict(runs[k].plan, &prof);
    }
    double mape_before = accuracy_mape(before, meas, nmain);
    double mape_after = accuracy_mape(after, meas, nmain);
    double mape_shared = accuracy_mape(after + nmain, meas + nmain, nruns - nmain);
    free(meas);
    free(before);
    free(after);

    if (profile_save(o.out, &prof, calibrate_observations_json(cal), &e) != MT_OK) {
        status = cmd_fail("profile", &e);
        goto done;
    }
    if (o.json) {
        char *text = NULL;
        size_t len = 0;
        if (str_read_file(o.out, PROFILE_MAX_BYTES, &text, &len, &e) == MT_OK)
            fwrite(text, 1, len, stdout);
        free(text);
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
            printf("; and %d runs of %d ranks on these %ld cores, for the messages of ranks that "
                   "share cores",
                   nruns - nmain, shared_pp, cores);
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
        profile_cleanup(dir, nruns);
    else if (!o.keep) /* what failed stays for a look */
        fprintf(stderr, "mario-tui profile: the runs' plans, traces and logs are in %s\n", dir);
    return status;
}
