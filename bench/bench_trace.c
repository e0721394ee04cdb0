/* bench/bench_trace.c: loading a large trace (issue 8: "a 50 MB trace loads in seconds with
 * bounded memory"). With no arguments it writes a measured trace in our format of about
 * 50 MB (a 2-device V pipeline, 4 micro-batches, step after step, with memory counters), plain
 * and gzip, then times trace_load + align_run on each and reports the peak resident memory
 * the load added (getrusage before and after; this binary links no MPI, BLAS or CUDA, so the
 * base is small). `bench_trace PLAN TRACE...` times the given files against a plan instead. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "traces/align.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

static double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long bench_maxrss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Writes about mb megabytes of measured trace for plan p (simulated as r). */
static int bench_write(const char *path, bool gz, const struct plan *p, const struct sim_result *r,
                       double mb)
{
    gzFile f = gzopen(path, gz ? "wb6" : "wbT");
    if (f == NULL)
        return -1;
    gzprintf(f, "{\"traceEvents\": [\n");
    double target = mb * 1e6, n = 0;
    unsigned seed = 1;
    bool first = true;
    for (int step = 0; n < target; step++)
        for (int d = 0; d < plan_devices(p); d++)
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                int id = plan_id(p, d, i);
                seed = seed * 1103515245u + 12345u;
                double jitter = 0.9 + 0.2 * ((seed >> 8) & 0xffff) / 65535.0;
                double ts = step * 1e5 + r->start[id] * jitter;
                n += gzprintf(f,
                              "%s{\"name\": \"%s%d\", \"cat\": \"compute\", \"ph\": \"X\", \"ts\": "
                              "%.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": 0, \"args\": {\"op\": "
                              "\"%s\", \"mb\": %d, \"part\": %d, \"stage\": %d, \"step\": %d}},\n"
                              "{\"name\": \"memory\", \"ph\": \"C\", \"ts\": %.3f, \"pid\": %d, "
                              "\"args\": {\"bytes\": %u}}",
                              first ? "" : ",\n", plan_op_name(in->op), in->mb, ts,
                              (r->end[id] - r->start[id]) * jitter, d, plan_op_name(in->op), in->mb,
                              in->part, in->stage, step, ts, d, 3500000u + (seed >> 12) % 2000000u);
                first = false;
            }
    gzprintf(f, "\n], \"otherData\": {\"source\": \"measured\"}}\n");
    return gzclose(f) == Z_OK ? 0 : -1;
}

static int bench_load(const struct plan *p, const char *path)
{
    struct mt_err e = {0};
    long rss0 = bench_maxrss_kib();
    double t0 = bench_now_s();
    struct trace *t = NULL;
    if (trace_load(&path, 1, NULL, &t, &e) != MT_OK) {
        fprintf(stderr, "bench_trace: %s\n", e.msg);
        return 1;
    }
    double t1 = bench_now_s();
    struct align_result m;
    struct align_opts ao = {.step = -1};
    int rc = align_run(p, t, &ao, &m, &e);
    double t2 = bench_now_s();
    if (rc != MT_OK) {
        fprintf(stderr, "bench_trace: %s\n", e.msg);
        trace_free(t);
        return 1;
    }
    size_t n, nm;
    trace_events(t, &n);
    trace_mems(t, &nm);
    FILE *f = fopen(path, "rb");
    long size = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fclose(f);
    }
    printf("%-40s %7.1f MB on disk: load %.2f s, align %.2f s, %zu events + %zu memory samples, "
           "%d steps; peak RSS %ld MiB (+%ld MiB for the load)\n",
           path, size / 1e6, t1 - t0, t2 - t1, n, nm, m.steps_in_trace, bench_maxrss_kib() / 1024,
           (bench_maxrss_kib() - rss0) / 1024);
    align_result_fini(&m);
    trace_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    struct mt_err e = {0};
    if (argc >= 3) {
        struct plan *p = NULL;
        if (plan_load(argv[1], &p, &e) != MT_OK) {
            fprintf(stderr, "bench_trace: %s\n", e.msg);
            return 1;
        }
        int rc = 0;
        for (int i = 2; i < argc && rc == 0; i++)
            rc = bench_load(p, argv[i]);
        plan_free(p);
        return rc;
    }
    struct config c;
    config_default(&c);
    presets_model("tiny", &c.model, &e);
    c.num_device = 2;
    c.num_microbatches = 4;
    struct plan *p = NULL;
    struct sim_result r;
    if (scheme_build(&c, &p, &e) != MT_OK || sim_run(p, &r, &e) != MT_OK) {
        fprintf(stderr, "bench_trace: %s\n", e.msg);
        return 1;
    }
    char dir[] = "/tmp/bench_trace.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    char plain[64], gz[64];
    snprintf(plain, sizeof plain, "%s/t.json", dir);
    snprintf(gz, sizeof gz, "%s/t.json.gz", dir);
    int rc = bench_write(plain, false, p, &r, 50) || bench_write(gz, true, p, &r, 50);
    if (rc == 0)
        rc = bench_load(p, plain) || bench_load(p, gz);
    unlink(plain);
    unlink(gz);
    rmdir(dir);
    sim_result_fini(&r);
    plan_free(p);
    return rc;
}
