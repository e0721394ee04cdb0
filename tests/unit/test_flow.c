/* tests/unit/test_flow.c: the workflows below the commands (flow/, issue 31), called directly:
 *   - compare's align -> accuracy -> replay (flow/compare.h) on 1F1B under unit costs (F = 1,
 *     B = 2, messages free) with its own simulated trace: the closed form (N + D - 1)(F + B) =
 *     15 t on 2 devices and 4 micro-batches, measured (1 t written as 1000 us), simulated and
 *     replayed alike, every instruction matched, no error; the same trace with device 1's
 *     backwards written 1 t longer (as a run that was slower there) replays at 19 t: 4 backwards
 *     on the critical path of the last device, each 1 t longer;
 *   - profile's workflow (flow/profile.h): the runs it decides (3 layer counts x 2 device
 *     counts x 2 micro-batch counts x plain/checkpointed = 24, and 2 of shared cores), a run's
 *     plan (GPipe, 2 layers per stage x 2 devices, 4 micro-batches: 4 FW, 2 BW and the odd
 *     micro-batches' 2 B + 2 W per device; 1 device is 2 replicas), a plan copied under another
 *     config (the same instructions), spawning a run that succeeds, fails or cannot start;
 *   - run's workflow without MPI (flow/run.h): the communicator's layout of a line (device d
 *     holds stage d, 0 and 1 talk both ways) and of looped chunks (device 0 holds stages 0 and
 *     2); NCCL's receives put back in their senders' order (flow_run_prepare); two executor
 *     records written as our trace and read back (two FW of 120 us);
 *   - what a file holds, told by its first bytes (traces/formats.h format_of): a plan, ours,
 *     a config, Chrome's object and bare-array forms, Kineto, torch's PP: ranges, PiPPy's
 *     array form (and its trace in tests/data), gzip, a byte-order mark, torch's CSV by its
 *     cells or its name; a plan given as a trace refused, naming it (format_load_trace). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/capture.h"
#include "flow/compare.h"
#include "flow/profile.h"
#include "flow/run.h"
#include "model/config.h"
#include "model/presets.h"
#include "model/profile.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "traces/chrome.h"
#include "traces/formats.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text, size_t n)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", tmpdir, name);
    FILE *f = fopen(path[k], "wb");
    fwrite(text, 1, n, f);
    fclose(f);
    return path[k];
}

static struct plan *unit_1f1b(void)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    if (presets_model("tiny", &c.model, &e) != MT_OK)
        fprintf(stderr, "tiny: %s\n", e.msg);
    c.scheme = SCHEME_V;
    c.num_device = 2;
    c.num_microbatches = 4;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct plan *p = NULL;
    if (scheme_build(&c, &p, &e) != MT_OK)
        fprintf(stderr, "build: %s\n", e.msg);
    return p;
}

/* Our simulated trace (one line, "dur" before "pid") with device 1's backwards (its 2000 us
 * spans: forwards last 1000) 1000 us longer. */
static char *slower_backwards(const char *text)
{
    static const char from[] = "\"dur\":2000,\"pid\":1,", to[] = "\"dur\":3000,\"pid\":1,";
    char *out = xstrdup(text);
    for (char *q = strstr(out, from); q != NULL; q = strstr(q + 1, from))
        memcpy(q, to, sizeof to - 1);
    return out;
}

static void test_compare(void)
{
    struct plan *p = unit_1f1b();
    CHECK(p != NULL);
    if (p == NULL)
        return;
    struct sim_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
    CHECK_NEAR(r.step_time, 15, 1e-9);
    char *text = chrome_from_sim(p, &r);
    struct trace *t = NULL;
    struct trace_opts o = {NULL, 0};
    CHECK_EQ_INT(trace_load_mem(text, strlen(text), "sim.json", &o, &t, &e), MT_OK);
    struct align_opts ao = {-1, true};
    struct flow_compare fc;
    if (t != NULL) {
        CHECK_EQ_INT(flow_compare_run(p, &r, t, &ao, &fc, &e), MT_OK);
        CHECK_EQ_INT(fc.m.matched, fc.m.total);
        CHECK_NEAR(fc.m.step_time_us, 15000, 1e-6);
        CHECK_NEAR(fc.a.step_err_pct, 0, 1e-9);
        CHECK(fc.replayed);
        CHECK_NEAR(fc.rp.step_us, 15000, 1e-6);
        CHECK_STR_CONTAINS(fc.why, "");
        flow_compare_fini(&fc);
    }
    trace_free(t);
    t = NULL;
    char *slow = slower_backwards(text);
    CHECK(strcmp(slow, text) != 0);
    CHECK_EQ_INT(trace_load_mem(slow, strlen(slow), "slow.json", &o, &t, &e), MT_OK);
    if (t != NULL) {
        CHECK_EQ_INT(flow_compare_run(p, &r, t, &ao, &fc, &e), MT_OK);
        CHECK(fc.replayed);
        CHECK_NEAR(fc.rp.step_us, 19000, 1e-6);
        /* the explorer's call: the same replay */
        struct replay_result again = {0};
        char why[64];
        CHECK(flow_replay(p, &r, t, &fc.m, &again, why, sizeof why));
        CHECK_NEAR(again.step_us, fc.rp.step_us, 0);
        CHECK_EQ_INT((int)strlen(why), 0);
        replay_fini(&again);
        flow_compare_fini(&fc);
    }
    trace_free(t);
    free(slow);
    free(text);
    sim_result_fini(&r);
    plan_free(p);
}

static void test_sniff(void)
{
    struct plan *p = unit_1f1b();
    char path[600];
    snprintf(path, sizeof path, "%s/plan.json", tmpdir);
    struct mt_err e = {0};
    CHECK(p != NULL && plan_save(p, path, &e) == MT_OK);
    CHECK_EQ_INT(format_of(path)->id, FORMAT_PLAN);
    CHECK_EQ_INT(format_of(path)->kind, FILE_KIND_PLAN);
    /* our own trace of the same plan, as simulate --trace-out writes it */
    struct sim_result r;
    CHECK(p != NULL && sim_run(p, &r, &e) == MT_OK);
    char *ours = p ? chrome_from_sim(p, &r) : NULL;
    CHECK(ours != NULL);
    if (ours) {
        CHECK_EQ_INT(format_of(write_tmp("ours.json", ours, strlen(ours)))->id, FORMAT_OURS);
        free(ours);
    }
    if (p)
        sim_result_fini(&r);
    /* a trace named as one is read; a plan named as one is refused, saying what it is */
    struct trace *t = NULL;
    const char *pp = path;
    CHECK_EQ_INT(format_load_trace(&pp, 1, &(struct trace_opts){NULL, 0}, &t, &e), MT_EINVAL);
    CHECK(t == NULL && strstr(e.msg, "plan.json: a plan file, not a trace") != NULL);
    plan_free(p);
    static const char cfg[] = "{\"model\": \"tiny\", \"scheme\": \"V\"}\n";
    CHECK_EQ_INT(format_of(write_tmp("c.json", cfg, sizeof cfg - 1))->id, FORMAT_CONFIG);
    static const char obj[] = "{\"traceEvents\": []}";
    CHECK_EQ_INT(format_of(write_tmp("o.json", obj, sizeof obj - 1))->id, FORMAT_CHROME);
    static const char kin[] = "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0}, "
                              "\"traceEvents\": [{\"ph\": \"X\", \"name\": \"aten::mm\"}]}";
    CHECK_EQ_INT(format_of(write_tmp("k.json", kin, sizeof kin - 1))->id, FORMAT_KINETO);
    static const char pp_[] = "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", "
                              "\"name\": \"PP:1F0\"}]}";
    CHECK_EQ_INT(format_of(write_tmp("pp.json", pp_, sizeof pp_ - 1))->id, FORMAT_TORCH_PP);
    static const char arr[] = "\n  [{\"name\": \"F_0,0\", \"ph\": \"B\"}";
    CHECK_EQ_INT(format_of(write_tmp("a.json", arr, sizeof arr - 1))->id, FORMAT_PIPPY);
    static const char arr2[] = "[{\"name\": \"fwd\", \"ph\": \"X\"}]";
    CHECK_EQ_INT(format_of(write_tmp("a2.json", arr2, sizeof arr2 - 1))->id, FORMAT_CHROME_ARRAY);
    static const char bom[] = "\xEF\xBB\xBF[]";
    CHECK_EQ_INT(format_of(write_tmp("b.json", bom, sizeof bom - 1))->kind, FILE_KIND_TRACE);
    static const char gz[] = "\x1f\x8b\x08\x00";
    CHECK_EQ_INT(format_of(write_tmp("g.json.gz", gz, sizeof gz - 1))->id, FORMAT_GZIP);
    /* torch's CSV by its cells whatever the name, or by a .csv name whatever it holds */
    static const char csv[] = "0F0,0F1,,0B0,0B1\n1F0,1B0,1F1,1B1\n";
    CHECK_EQ_INT(format_of(write_tmp("order.txt", csv, sizeof csv - 1))->id, FORMAT_TORCH_CSV);
    static const char notcsv[] = "hello, world\n";
    CHECK_EQ_INT(format_of(write_tmp("n.txt", notcsv, sizeof notcsv - 1))->id, FORMAT_CONFIG);
    CHECK_EQ_INT(format_of(write_tmp("n.csv", notcsv, sizeof notcsv - 1))->id, FORMAT_TORCH_CSV);
    CHECK_EQ_INT(format_of(write_tmp("n.csv", notcsv, sizeof notcsv - 1))->kind, FILE_KIND_PLAN);
    snprintf(path, sizeof path, "%s/absent.json", tmpdir);
    CHECK_EQ_INT(format_of(path)->id, FORMAT_CONFIG); /* the config reader says why */
    /* PiPPy's measured trace in the tree */
    snprintf(path, sizeof path, "%s/tests/data/pippy-4stage-skewed.json",
             getenv("top_srcdir") ? getenv("top_srcdir") : ".");
    CHECK_EQ_INT(format_of(path)->id, FORMAT_PIPPY);
}

/* ---- profile's workflow (flow/profile.h) ------------------------------------------------------ */

static void test_profile_runs(void)
{
    static const int layers[] = {1, 2, 3}, mbs[] = {2, 4};
    int n, nmain;
    struct flow_profile_run *runs = flow_profile_runs(layers, 3, mbs, 2, 4, &n, &nmain);
    CHECK_EQ_INT(nmain, 24); /* 3 layer counts x 2 device counts x 2 mb counts x 2 */
    CHECK_EQ_INT(n, 26);
    CHECK(runs[0].layers == 1 && runs[0].pp == 1 && runs[0].mbs == 2 && !runs[0].ckpt);
    CHECK(runs[1].ckpt && runs[2].mbs == 4 && runs[4].pp == 2 && runs[8].layers == 2);
    CHECK(runs[24].shared && runs[24].pp == 4 && runs[24].mbs == 4 && !runs[24].ckpt);
    CHECK(runs[25].shared && runs[25].ckpt && !runs[23].shared);
    free(runs);
    runs = flow_profile_runs(layers, 1, mbs, 1, 0, &n, &nmain);
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT(nmain, 4);
    free(runs);
}

static void count_ops(const struct plan *p, int d, int *fw, int *bw, int *b, int *w)
{
    *fw = *bw = *b = *w = 0;
    for (int i = 0; i < plan_len(p, d); i++) {
        const struct instr *in = plan_at(p, d, i);
        *fw += in->op == OP_FW;
        *bw += in->op == OP_BW && in->mb % 2 == 0;
        *b += in->op == OP_B && in->mb % 2 == 1;
        *w += in->op == OP_W && in->mb % 2 == 1;
    }
}

static void test_profile_plan(void)
{
    struct config base;
    config_default(&base);
    struct mt_err e = {0};
    CHECK_EQ_INT(presets_model("tiny", &base.model, &e), MT_OK);
    struct flow_profile_run r = {2, 2, 4, false, NULL, NAN, false};
    CHECK_EQ_INT(flow_profile_plan(&base, &r, &e), MT_OK);
    if (r.plan != NULL) {
        const struct config *c = plan_config(r.plan);
        CHECK(c->scheme == SCHEME_GPIPE && c->model.num_layers == 4 && c->cluster.dp == 1);
        CHECK_EQ_INT(plan_devices(r.plan), 2);
        for (int d = 0; d < 2; d++) { /* even micro-batches whole, odd ones B then W */
            int fw, bw, b, w;
            count_ops(r.plan, d, &fw, &bw, &b, &w);
            CHECK(fw == 4 && bw == 2 && b == 2 && w == 2);
        }
        /* under another config: the same instructions; with no calibration, the same time */
        struct config c2 = *c;
        c2.micro_batch_size = 2 * c->micro_batch_size;
        struct plan *q = plan_with_config(r.plan, &c2);
        CHECK_EQ_INT(plan_config(q)->micro_batch_size, 2 * c->micro_batch_size);
        for (int d = 0; d < 2; d++) {
            CHECK_EQ_INT(plan_len(q, d), plan_len(r.plan, d));
            for (int i = 0; i < plan_len(q, d) && i < plan_len(r.plan, d); i++)
                CHECK(memcmp(plan_at(q, d, i), plan_at(r.plan, d, i), sizeof(struct instr)) == 0);
        }
        plan_free(q);
        struct sim_result sr;
        struct profile none = {0};
        CHECK_EQ_INT(sim_run(r.plan, &sr, &e), MT_OK);
        CHECK_NEAR(flow_profile_predict(r.plan, &none), sr.step_time, 0);
        sim_result_fini(&sr);
        plan_free(r.plan);
    }
    struct flow_profile_run one = {1, 1, 2, true, NULL, NAN, false};
    CHECK_EQ_INT(flow_profile_plan(&base, &one, &e), MT_OK);
    if (one.plan != NULL) { /* one device: two replicas, checkpointed */
        CHECK(plan_config(one.plan)->cluster.dp == 2 && plan_config(one.plan)->num_device == 2);
        int cfw = 0;
        for (int i = 0; i < plan_len(one.plan, 0); i++)
            cfw += plan_at(one.plan, 0, i)->op == OP_CFW;
        CHECK_EQ_INT(cfw, 2);
        plan_free(one.plan);
    }
}

static void test_profile_spawn(void)
{
    char log[600];
    snprintf(log, sizeof log, "%s/run.log", tmpdir);
    struct mt_err e = {0};
    CHECK_EQ_INT(flow_profile_spawn("/bin/true", "p.json", "t.json", log, "cpu", 2, &e), MT_OK);
    CHECK_EQ_INT(flow_profile_spawn("/bin/false", "p.json", "t.json", log, "cpu", 2, &e),
                 MT_EDEVICE);
    CHECK_STR_CONTAINS(e.msg, "`mario-tui run p.json` exited with 1: (no output)");
    e = (struct mt_err){0};
    /* a program that is not there: posix_spawn says so (glibc), or the child cannot exec it
     * and exits (valgrind's emulation): an error either way */
    int rc = flow_profile_spawn("/nonexistent/mario", "p.json", "t.json", log, "cpu", 2, &e);
    CHECK(rc == MT_EIO || rc == MT_EDEVICE);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/keep", tmpdir);
    char self[4096], got[1024];
    CHECK_EQ_INT(flow_profile_setup(dir, self, sizeof self, got, sizeof got, &e), MT_OK);
    CHECK(strcmp(got, dir) == 0 && strstr(self, "test_flow") != NULL);
    flow_profile_cleanup(got, 1);
    CHECK(access(dir, F_OK) != 0);
}

/* ---- run's workflow (flow/run.h), what needs no MPI --------------------------------------------- */

static void test_run_layout(void)
{
    struct plan *p = unit_1f1b(); /* a line: device d holds stage d */
    bool *holds = NULL, *talks = NULL;
    if (p != NULL) {
        struct comm_layout l = flow_run_layout(p, &holds, &talks);
        CHECK(l.pp == 2 && l.dp == 1 && l.stages == 2);
        CHECK(holds[0 * 2 + 0] && !holds[0 * 2 + 1] && !holds[1 * 2 + 0] && holds[1 * 2 + 1]);
        CHECK(!talks[0] && talks[1] && talks[2] && !talks[3]); /* 0 -> 1 and 1 -> 0 only */
        free(holds);
        free(talks);
        plan_free(p);
    }
    /* interleaved, 2 chunks on 2 devices: looped, device 0 holds stages 0 and 2 */
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    CHECK_EQ_INT(presets_model("tiny", &c.model, &e), MT_OK);
    c.scheme = SCHEME_W;
    c.num_device = 2;
    c.num_microbatches = 4;
    c.chunks = 2;
    p = NULL;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    if (p != NULL) {
        struct comm_layout l = flow_run_layout(p, &holds, &talks);
        CHECK_EQ_INT(l.stages, 4);
        CHECK(holds[0] && !holds[1] && holds[2] && !holds[3]);
        CHECK(!holds[4] && holds[5] && !holds[6] && holds[7]);
        CHECK(talks[1] && talks[2]);
        free(holds);
        free(talks);
        plan_free(p);
    }
}

/* flow_run_prepare: device 1 of a 1F1B plan made to receive micro-batch 1's activation
 * before micro-batch 0's: NCCL's backend gets RA0 moved back before RA1 (device 0 sends them
 * in that order); the CPU backend (tagged MPI messages) leaves the plan as it is. */
static void test_run_prepare(void)
{
    struct plan *p = unit_1f1b();
    if (p == NULL)
        return;
    int ra0 = plan_find(p, 1, OP_RA, 0, 1), ra1 = plan_find(p, 1, OP_RA, 1, 1);
    CHECK(ra0 >= 0 && ra1 > ra0);
    plan_move(p, 1, ra1, ra0); /* RA1 first */
    CHECK(plan_find(p, 1, OP_RA, 1, 1) < plan_find(p, 1, OP_RA, 0, 1));
    struct mt_err e = {0};
    CHECK_EQ_INT(flow_run_prepare(p, "cpu", &e), 0);
    CHECK(plan_find(p, 1, OP_RA, 1, 1) < plan_find(p, 1, OP_RA, 0, 1));
    CHECK(flow_run_prepare(p, "nccl", &e) > 0);
    CHECK(plan_find(p, 1, OP_RA, 0, 1) < plan_find(p, 1, OP_RA, 1, 1));
    CHECK_EQ_INT(flow_run_prepare(p, "nccl", &e), 0); /* in order now */
    plan_free(p);
}

static void test_run_trace(void)
{
    struct plan *p = unit_1f1b();
    if (p == NULL)
        return;
    /* two ranks' first forwards, as the executor records them */
    struct capture_rec rec[2] = {
        {0, 120, 0, CAPTURE_INSTR, 0, OP_FW, 0, 0, 0, -1, 0},
        {130, 250, 0, CAPTURE_INSTR, 1, OP_FW, 0, 0, 1, -1, 0},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/run.json", tmpdir);
    struct mt_err e = {0};
    CHECK_EQ_INT(flow_run_write_trace(path, p, rec, 2, 2, "cpu", "complete", &e), MT_OK);
    const char *paths[] = {path};
    struct trace *t = NULL;
    CHECK_EQ_INT(trace_load(paths, 1, NULL, &t, &e), MT_OK);
    if (t != NULL) {
        size_t n;
        const struct trace_event *ev = trace_events(t, &n);
        CHECK_EQ_INT((int)n, 2);
        CHECK(strcmp(trace_info(t)->source, "measured") == 0);
        for (size_t i = 0; i < n; i++) {
            CHECK(ev[i].op == OP_FW && ev[i].mb == 0 && ev[i].stage == ev[i].dev);
            CHECK_NEAR(ev[i].end_us - ev[i].start_us, 120, 1e-9);
        }
        trace_free(t);
    }
    char note[128];
    CHECK_EQ_INT(flow_rank_trace(path, p, rec, 2, 2, "cpu", "complete", note, sizeof note), MT_OK);
    CHECK_STR_CONTAINS(note, "(2 records from 2 ranks)");
    plan_free(p);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/mt-flow-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_compare();
    test_sniff();
    test_profile_runs();
    test_profile_plan();
    test_profile_spawn();
    test_run_layout();
    test_run_prepare();
    test_run_trace();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_report("test_flow");
}
