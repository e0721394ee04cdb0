#include <config.h>

#include "flow/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/config.h"
#include "model/profile.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "traces/accuracy.h"
#include "traces/align.h"
#include "traces/calibrate.h"
#include "traces/import.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

struct flow_profile_run *flow_profile_runs(const int *layers, int nl, const int *mbs, int nm,
                                           int shared_pp, int *n, int *nmain)
{
    *nmain = nl * 2 * nm * 2;
    *n = *nmain + (shared_pp > 0 ? 2 : 0);
    struct flow_profile_run *runs = xcalloc((size_t)*n, sizeof *runs);
    int k = 0;
    for (int li = 0; li < nl; li++)
        for (int pp = 1; pp <= 2; pp++)
            for (int mi = 0; mi < nm; mi++)
                for (int ck = 0; ck < 2; ck++, k++)
                    runs[k] = (struct flow_profile_run){layers[li], pp, mbs[mi], ck == 1, NULL,
                                                        NAN, false};
    for (int ck = 0; k < *n; k++, ck++)
        runs[k] = (struct flow_profile_run){1, shared_pp, mbs[nm - 1], ck == 1, NULL, NAN, true};
    return runs;
}

int flow_profile_shared_ranks(const char *backend)
{
    long cores = strcmp(backend, "cpu") == 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 0;
    return cores >= 1 && cores <= 8 ? (int)(2 * cores) : 0;
}

/* What the calibration was measured on. */
void flow_profile_device_name(const char *backend, char *buf, size_t n)
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
int flow_profile_spawn(const char *self, const char *plan, const char *trace, const char *log,
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
int flow_profile_plan(const struct config *base, struct flow_profile_run *r, struct mt_err *e)
{
    struct config c = *base;
    c.scheme = SCHEME_GPIPE;
    c.cluster.dp = r->pp == 1 ? 2 : 1;
    c.cluster.tp = 1; /* the executor runs no tensor parallelism: a rank is one device */
    config_set_pp(&c, r->pp);
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

int flow_profile_measure(struct calibrate *cal, struct flow_profile_run *r,
                         const char *trace_path, struct mt_err *e)
{
    const char *paths[] = {trace_path};
    struct trace *t = NULL;
    TRY(trace_load(paths, 1, NULL, &t, e));
    int rc = r->shared ? calibrate_add_shared_run(cal, r->plan, t, e)
                       : calibrate_add_run(cal, r->plan, t, e);
    if (rc == MT_OK && plan_config(r->plan)->cluster.dp > 1) {
        /* the allreduce from every replica's events */
        struct trace_opts all = {NULL, -1};
        struct trace *ta = NULL;
        rc = trace_load(paths, 1, &all, &ta, e);
        if (rc == MT_OK)
            rc = calibrate_add_allreduce(cal, r->plan, ta, e);
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
    return rc;
}

int flow_profile_from_trace(const char *const *files, int nfiles, const struct mapping *map,
                            const struct config *base, const struct import_opts *io,
                            struct calibrate *cal, struct trace **t, struct plan **p,
                            struct import_info *info, struct mt_err *e)
{
    *t = NULL;
    *p = NULL;
    struct trace_opts to = {map, 0};
    TRY(trace_load(files, nfiles, &to, t, e));
    struct plan *imported = NULL;
    TRY(import_plan(*t, files, nfiles, base, io, &imported, info, e));
    struct config c = *plan_config(imported); /* the plan's own costs */
    c.profile.enabled = false;
    *p = plan_with_config(imported, &c);
    plan_free(imported);
    TRY(calibrate_add_run(cal, *p, *t, e));
    if (trace_info(*t)->replicas > 1) {
        struct trace_opts every = {map, -1};
        struct trace *all = NULL;
        int rc = trace_load(files, nfiles, &every, &all, e);
        if (rc == MT_OK)
            rc = calibrate_add_allreduce(cal, *p, all, e);
        trace_free(all);
        TRY(rc);
    }
    return MT_OK;
}

void flow_profile_stamp(struct profile *prof)
{
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(prof->created, sizeof prof->created, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

/* The run's plan with another profile (for the self-check). */
double flow_profile_predict(const struct plan *p, const struct profile *pr)
{
    struct config c = *plan_config(p);
    c.profile = *pr;
    struct plan *q = plan_with_config(p, &c);
    struct sim_result r;
    double t = NAN;
    if (sim_run(q, &r, NULL) == MT_OK) {
        t = r.step_time;
        sim_result_fini(&r);
    }
    plan_free(q);
    return t;
}

void flow_profile_check(const struct flow_profile_run *runs, int n, int nmain,
                        const struct profile *prof, double *before, double *after,
                        double *shared)
{
    double *meas = xmalloc((size_t)n * sizeof(double));
    double *b = xmalloc((size_t)n * sizeof(double));
    double *a = xmalloc((size_t)n * sizeof(double));
    struct profile none = {0};
    for (int k = 0; k < n; k++) {
        meas[k] = runs[k].step_us;
        b[k] = flow_profile_predict(runs[k].plan, &none);
        a[k] = flow_profile_predict(runs[k].plan, prof);
    }
    *before = accuracy_mape(b, meas, nmain);
    *after = accuracy_mape(a, meas, nmain);
    *shared = accuracy_mape(a + nmain, meas + nmain, n - nmain);
    free(meas);
    free(b);
    free(a);
}

int flow_profile_setup(const char *keep, char *self, size_t self_n, char *dir, size_t dir_n,
                       struct mt_err *e)
{
    ssize_t sn = readlink("/proc/self/exe", self, self_n - 1);
    if (sn <= 0)
        return err_set(e, MT_EIO, "cannot find this executable (/proc/self/exe): %s",
                       strerror(errno));
    self[sn] = '\0';
    if (keep) {
        if (mkdir(keep, 0755) != 0 && errno != EEXIST)
            return err_set(e, MT_EIO, "%s: cannot create: %s", keep, strerror(errno));
        snprintf(dir, dir_n, "%s", keep);
        return MT_OK;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dir_n, "%s/mario-profile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        return err_set(e, MT_EIO, "%s: cannot create a temporary directory: %s", dir,
                       strerror(errno));
    return MT_OK;
}

void flow_profile_cleanup(const char *dir, int nruns)
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

int flow_profile_do_run(const char *self, const char *dir, int k, const struct config *base,
                        struct flow_profile_run *r, const char *backend, int steps,
                        struct calibrate *cal, struct mt_err *e)
{
    char plan_path[1100], trace_path[1100], log_path[1100];
    snprintf(plan_path, sizeof plan_path, "%s/run-%02d.plan.json", dir, k);
    snprintf(trace_path, sizeof trace_path, "%s/run-%02d.trace.json", dir, k);
    snprintf(log_path, sizeof log_path, "%s/run-%02d.log", dir, k);
    int rc = flow_profile_plan(base, r, e);
    if (rc == MT_OK)
        rc = plan_save(r->plan, plan_path, e);
    if (rc == MT_OK)
        rc = flow_profile_spawn(self, plan_path, trace_path, log_path, backend, steps, e);
    if (rc == MT_OK)
        rc = flow_profile_measure(cal, r, trace_path, e);
    if (rc != MT_OK)
        err_wrap(e, "run %d (%d layers x %d devices, %d micro-batches%s)", k + 1, r->layers,
                 r->pp, r->mbs, r->ckpt ? ", checkpointed" : "");
    return rc;
}

int flow_profile_fit(struct calibrate *cal, const struct config *base, const char *backend,
                     struct profile *prof, struct mt_err *e)
{
    TRY(calibrate_fit(cal, base, prof, e));
    snprintf(prof->backend, sizeof prof->backend, "%s", backend);
    flow_profile_device_name(backend, prof->device, sizeof prof->device);
    if (strcmp(backend, "cpu") == 0) /* its ranks share this machine's cores (sim/core/share.h) */
        prof->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    flow_profile_stamp(prof);
    return MT_OK;
}

int flow_profile_fit_trace(struct calibrate *cal, const struct plan *p, const struct trace *t,
                           const char *file, struct profile *prof, double *sim_us,
                           double *meas_us, struct mt_err *e)
{
    TRY(calibrate_fit(cal, plan_config(p), prof, e));
    const struct trace_info *ti = trace_info(t);
    snprintf(prof->backend, sizeof prof->backend, "%s", ti->backend[0] ? ti->backend : ti->source);
    if (ti->device_name[0])
        snprintf(prof->device, sizeof prof->device, "%s", ti->device_name);
    else
        snprintf(prof->device, sizeof prof->device, "%s (from %.60s)",
                 ti->backend[0] ? ti->backend : "unknown device", file);
    flow_profile_stamp(prof);
    /* the self-check: the run simulated with the calibration against what it measured */
    struct align_result m;
    struct align_opts ao = {.step = -1};
    *meas_us = NAN;
    *sim_us = flow_profile_predict(p, prof);
    if (align_run(p, t, &ao, &m, NULL) == MT_OK) {
        *meas_us = m.step_time_us;
        align_result_fini(&m);
    }
    return MT_OK;
}
