/* tests/unit/test_torch_csv.c: torch's schedule CSV as the tool writes it (sim/plan/plan_csv.c)
 * against torch's own grammar and a hand-worked DualPipeV: the rows of a 2-rank, 4-micro-batch
 * DualPipeV worked by hand from torch's ScheduleDualPipeV._calculate_single_rank_operations
 * (torch/distributed/pipelining/schedules.py: steps 1-8, the overlapped F&B of steps 4 and 5 as
 * "(F;B)OVERLAP_F_B", the last rank's first pair of step 4 not overlapped); every cell read by
 * torch's _Action.from_str grammar (its regex restated below); the CSV read back to the same
 * order; and a checkpointed plan written as the order torch runs under the framework's
 * activation checkpointing (CFW as F, no RC), which is the base plan's CSV, and the framework's
 * plan (pass_framework_ac) equal to apply-checkpoint's. FSDP's UNSHARD / RESHARD /
 * REDUCE_GRAD (sim/plan/plan_csv_fsdp.c): rows worked by hand from torch's lowering
 * (_add_unshard_reshard, _add_reduce_grad) for 1F1B, DualPipeV and 4-chunk interleaving, and
 * from the per-micro-batch rules for reshard_after_forward and ZeRO-2; every scheme's rows
 * run as torch's runtime checks them; read back to the same order; bad cells refused. */
#include <config.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/simulate.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static struct plan *build(enum scheme_id s, int D, int N)
{
    struct config c = test_unit_config(s, D, N, 1, 2, 1);
    c.unit.w = 1;
    c.chunks = 2;
    c.model.num_layers = 64;
    struct mt_err e = {0};
    struct plan *p = NULL;
    if (scheme_build(&c, &p, &e) != MT_OK) {
        fprintf(stderr, "%s D=%d N=%d: %s\n", config_scheme_name(s), D, N, e.msg);
        CHECK(0);
    }
    return p;
}

/* torch's grammar (schedules.py): _action_regex =
 *   r"(\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*)"
 * matched at the start of the stripped cell; an action with sub_actions is
 * "(" + ";".join(sub reprs) + ")" + a _ComputationType value, split at the first ")" and the
 * sub-actions at ";". Here the match is asked to cover the whole cell (stricter than torch's
 * re.match), and the container's type to be OVERLAP_F_B, the only one with sub_actions. */
static regex_t torch_action, torch_group;

static bool torch_accepts(const char *cell, size_t n)
{
    char buf[256];
    if (n == 0)
        return true; /* an idle slot */
    if (n >= sizeof buf)
        return false;
    memcpy(buf, cell, n);
    buf[n] = '\0';
    regmatch_t m[3];
    if (regexec(&torch_action, buf, 0, NULL, 0) == 0)
        return true;
    if (regexec(&torch_group, buf, 3, m, 0) != 0)
        return false;
    buf[m[1].rm_eo] = '\0';
    int subs = 0;
    for (char *save = NULL, *s = strtok_r(buf + m[1].rm_so, ";", &save); s;
         s = strtok_r(NULL, ";", &save), subs++)
        if (regexec(&torch_action, s, 0, NULL, 0) != 0)
            return false;
    return subs == 2; /* DualPipeV's F then B */
}

static void check_grammar(const char *csv)
{
    for (const char *p = csv; *p;) {
        size_t n = strcspn(p, ",\n");
        CHECK(torch_accepts(p, n));
        p += n;
        if (*p)
            p++;
    }
}

static void test_dualpipev_hand(void)
{
    struct plan *p = build(SCHEME_DUALPIPEV, 2, 4);
    struct mt_err e = {0};
    char *csv = plan_to_torch_csv(p, &e);
    CHECK(csv != NULL);
    /* rank 0 holds stages 0 and 3: step 1 2 x F0, step 2 (F0, F1), step 3 (I1, W, F1), step 4
     * (F0&B1, F1&B0), step 5 (B1, F1&B0), step 6 (B1, I0: even rank, zero bubble after the
     * pair's first), step 7 (W, I0), step 8 W. Rank 1 (stages 1, 2): step 2 twice, step 4 twice
     * with its first F0, B1 not overlapped, step 6 (B1, B0), then (I1, I0: odd rank switches at
     * the middle round), step 8 two Ws. */
    const char *want = "0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,(3F2;0B0)OVERLAP_F_B,"
                       "3B2,(3F3;0B1)OVERLAP_F_B,3B3,0I2,0W2,0I3,0W3\n"
                       "1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0)OVERLAP_F_B,(1F3;2B1)OVERLAP_F_B,"
                       "(2F3;1B1)OVERLAP_F_B,2B2,1B2,2I3,1I3,2W3,1W3\n";
    CHECK(csv && strcmp(csv, want) == 0);
    if (csv && strcmp(csv, want) != 0)
        fprintf(stderr, "got:\n%s", csv);
    check_grammar(csv ? csv : "");
    /* read back: the same scheme, the same instructions in the same order, the same step */
    struct plan *q = NULL;
    CHECK(csv && plan_load_torch_csv(csv, strlen(csv), "t.csv", plan_config(p), &q, &e) ==
                     MT_OK);
    if (q != NULL) {
        CHECK_EQ_INT(plan_geom(q)->scheme, SCHEME_DUALPIPEV);
        for (int d = 0; d < plan_devices(p); d++) {
            CHECK_EQ_INT(plan_len(q, d), plan_len(p, d));
            for (int i = 0; i < plan_len(p, d) && i < plan_len(q, d); i++)
                CHECK(plan_at(q, d, i)->op == plan_at(p, d, i)->op &&
                      plan_at(q, d, i)->mb == plan_at(p, d, i)->mb &&
                      plan_at(q, d, i)->stage == plan_at(p, d, i)->stage);
        }
        struct sim_result a, b;
        CHECK(sim_run(p, &a, &e) == MT_OK && sim_run(q, &b, &e) == MT_OK);
        CHECK_NEAR(a.step_time, b.step_time, 1e-9);
        sim_result_fini(&a);
        sim_result_fini(&b);
    }
    plan_free(q);
    free(csv);
    /* a cell torch would not read is refused on reading: a group of another type */
    CHECK(plan_load_torch_csv("(0F0;1B0)UNSHARD\n", 17, "t.csv", plan_config(p), &q, &e) ==
          MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "t.csv:1:1");
    plan_free(p);
    /* larger DualPipeVs and the other schemes torch names: every cell in torch's grammar, and
     * an OVERLAP_F_B only in DualPipeV */
    enum scheme_id ids[SCHEME__COUNT];
    int n = test_sync_schemes(ids, false);
    for (int k = 0; k < n; k++) {
        const struct scheme_record *r = scheme_registry_get(ids[k]);
        if (r->torch_none != NULL)
            continue;
        struct plan *x = build(ids[k], 4, 8);
        char *s = plan_to_torch_csv(x, &e);
        CHECK(s != NULL);
        if (s) {
            check_grammar(s);
            CHECK((strstr(s, "OVERLAP_F_B") != NULL) == (ids[k] == SCHEME_DUALPIPEV));
        }
        free(s);
        plan_free(x);
    }
}

/* Plan p of scheme s (unit costs) under dp 2 with ZeRO stage `zero` and the FSDP reshard
 * policy: ops_fsdp_of reads only the config, so the order stays the unit-cost plan's. */
static struct plan *with_zero(const struct plan *p, int zero, enum fsdp_reshard reshard)
{
    struct config c = *plan_config(p);
    c.cluster.dp = 2;
    c.num_device = 2 * plan_devices(p);
    c.cluster.zero_stage = zero;
    c.cluster.reshard_after_forward = reshard;
    return plan_with_config(p, &c);
}

static void check_csv(const struct plan *p, const char *want, const char *what)
{
    struct mt_err e = {0};
    char *csv = plan_to_torch_csv(p, &e);
    CHECK(csv && strcmp(csv, want) == 0);
    if (!csv || strcmp(csv, want) != 0)
        fprintf(stderr, "%s: got:\n%s\nwant:\n%s", what, csv ? csv : e.msg, want);
    check_grammar(csv ? csv : "");
    free(csv);
}

/* A row run as torch's _PipelineScheduleRuntime would: an UNSHARD of a sharded stage, a
 * RESHARD of a gathered one, every action on a gathered stage when the plan gathers, all
 * resharded at the end, and the REDUCE_GRADs a stage gets (1 a step, or 1 a B / W). */
static void check_runtime(const char *csv, bool gathers, int reduces_per_stage)
{
    char row[1 << 16];
    for (const char *p = csv; *p;) {
        size_t n = strcspn(p, "\n");
        CHECK(n < sizeof row);
        if (n >= sizeof row)
            return;
        memcpy(row, p, n);
        row[n] = '\0';
        p += n + (p[n] != '\0');
        bool gathered[64] = {false}, held[64] = {false};
        int reduced[64] = {0};
        for (char *save = NULL, *c = strtok_r(row, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
            int stage = -1, used = 0;
            char name[16] = "";
            if (c[0] == '(') { /* (aF m;bB m)OVERLAP_F_B: both leaves computed */
                int a, b;
                CHECK(sscanf(c, "(%dF%*d;%dB%*d)OVERLAP_F_B", &a, &b) == 2);
                CHECK(!gathers || (gathered[a] && gathered[b]));
                held[a] = held[b] = true;
                continue;
            }
            CHECK(sscanf(c, "%d%15[A-Z_]%n", &stage, name, &used) == 2);
            CHECK(stage >= 0 && stage < 64);
            if (strcmp(name, "UNSHARD") == 0) {
                CHECK(!gathered[stage]);
                gathered[stage] = true;
            } else if (strcmp(name, "RESHARD") == 0) {
                CHECK(gathered[stage]);
                gathered[stage] = false;
            } else if (strcmp(name, "REDUCE_GRAD") == 0) {
                reduced[stage]++;
            } else {
                CHECK(!gathers || gathered[stage]);
                held[stage] = true;
            }
        }
        for (int s = 0; s < 64; s++) {
            CHECK(!gathered[s]);
            CHECK(held[s] || reduced[s] == 0);
            if (held[s] && reduces_per_stage > 0)
                CHECK_EQ_INT(reduced[s], reduces_per_stage);
        }
    }
}

/* FSDP's actions (sim/plan/plan_csv_fsdp.c), rows worked by hand from torch's lowering
 * (_add_unshard_reshard with max_active_stages 3, then _add_reduce_grad) and from ops_fsdp_of's
 * per-micro-batch rules; a plan without ZeRO-2/3 (or its compute_only form) has none; the
 * file reads back to the same order and step; bad FSDP cells are refused where they are. */
static void test_fsdp(void)
{
    struct mt_err e = {0};
    struct plan *v = build(SCHEME_V, 2, 2);
    /* 1F1B on 2 ranks, 2 micro-batches: 0F0,0F1,0B0,0B1 and 1F0,1B0,1F1,1B1. FSDP under PP
     * (torchtitan's default, reshard_after_forward off): the one stage a rank holds is in
     * torch's window from the first action, gathered before it; REDUCE_GRAD after the
     * second B; RESHARD after the row. */
    struct plan *f = with_zero(v, 3, FSDP_RESHARD_DEFAULT);
    check_csv(f,
              "0UNSHARD,0F0,0F1,0B0,0B1,0REDUCE_GRAD,0RESHARD\n"
              "1UNSHARD,1F0,1B0,1F1,1B1,1REDUCE_GRAD,1RESHARD\n",
              "V FSDP");
    /* read back (under the unit-cost config, which the 2021 estimate's ZeRO-3 refusal
     * spares; the cells are left either way): the same order and step, and written again
     * under FSDP the same file */
    char *csv = plan_to_torch_csv(f, &e);
    struct plan *q = NULL;
    CHECK(csv && plan_load_torch_csv(csv, strlen(csv), "f.csv", plan_config(v), &q, &e) == MT_OK);
    if (q != NULL) {
        for (int d = 0; d < plan_devices(f); d++) {
            CHECK_EQ_INT(plan_len(q, d), plan_len(f, d));
            for (int i = 0; i < plan_len(f, d) && i < plan_len(q, d); i++)
                CHECK(plan_at(q, d, i)->op == plan_at(f, d, i)->op &&
                      plan_at(q, d, i)->mb == plan_at(f, d, i)->mb &&
                      plan_at(q, d, i)->stage == plan_at(f, d, i)->stage);
        }
        struct sim_result a, b;
        CHECK(sim_run(v, &a, &e) == MT_OK && sim_run(q, &b, &e) == MT_OK);
        CHECK_NEAR(a.step_time, b.step_time, 1e-9);
        sim_result_fini(&a);
        sim_result_fini(&b);
        struct plan *qf = with_zero(q, 3, FSDP_RESHARD_DEFAULT);
        char *again = plan_to_torch_csv(qf, &e);
        CHECK(again && strcmp(again, csv) == 0);
        free(again);
        plan_free(qf);
    }
    plan_free(q);
    q = NULL;
    free(csv);
    /* compute_only: the plain rows, as without FSDP */
    struct plan_csv_opts co = {.compute_only = true};
    char *plain = plan_to_torch_csv_opts(f, &co, &e), *nofsdp = plan_to_torch_csv(v, &e);
    CHECK(plain && nofsdp && strcmp(plain, nofsdp) == 0 &&
          strcmp(nofsdp, "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n") == 0);
    free(plain);
    free(nofsdp);
    plan_free(f);
    /* reshard_after_forward always: gathered before each F and each B, freed after each (so
     * that torch's runtime never unshards a stage twice); one REDUCE_GRAD a step */
    f = with_zero(v, 3, FSDP_RESHARD_ALWAYS);
    check_csv(f,
              "0UNSHARD,0F0,0RESHARD,0UNSHARD,0F1,0RESHARD,0UNSHARD,0B0,0RESHARD,0UNSHARD,0B1,"
              "0REDUCE_GRAD,0RESHARD\n"
              "1UNSHARD,1F0,1RESHARD,1UNSHARD,1B0,1RESHARD,1UNSHARD,1F1,1RESHARD,1UNSHARD,1B1,"
              "1REDUCE_GRAD,1RESHARD\n",
              "V FSDP always");
    plan_free(f);
    /* ZeRO-2: parameters not sharded, gradients reduce-scattered after every backward */
    f = with_zero(v, 2, FSDP_RESHARD_DEFAULT);
    check_csv(f,
              "0F0,0F1,0B0,0REDUCE_GRAD,0B1,0REDUCE_GRAD\n"
              "1F0,1B0,1REDUCE_GRAD,1F1,1B1,1REDUCE_GRAD\n",
              "V ZeRO-2");
    plan_free(f);
    /* ZeRO-1: nothing */
    f = with_zero(v, 1, FSDP_RESHARD_DEFAULT);
    check_csv(f, "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "V ZeRO-1");
    plan_free(f);
    plan_free(v);

    /* DualPipeV's rows (test_dualpipev_hand's) under FSDP: a rank's two stages both in the
     * window before its first action, gathered in the order they come; stage 3's fourth B/W
     * is 3B3 (3W0, the pair's 3B1, 3B2, 3B3): its REDUCE_GRAD there, and from 0I2 on only
     * stage 0 is ahead, so 3 is resharded before it. Rank 1: 2W3 and 1W3 end theirs. */
    struct plan *dpv = build(SCHEME_DUALPIPEV, 2, 4);
    f = with_zero(dpv, 3, FSDP_RESHARD_DEFAULT);
    check_csv(f,
              "0UNSHARD,3UNSHARD,0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,"
              "(3F2;0B0)OVERLAP_F_B,3B2,(3F3;0B1)OVERLAP_F_B,3B3,3REDUCE_GRAD,3RESHARD,0I2,0W2,"
              "0I3,0W3,0REDUCE_GRAD,0RESHARD\n"
              "1UNSHARD,2UNSHARD,1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0)OVERLAP_F_B,"
              "(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2B2,1B2,2I3,1I3,2W3,2REDUCE_GRAD,"
              "2RESHARD,1W3,1REDUCE_GRAD,1RESHARD\n",
              "DualPipeV FSDP");
    plan_free(f);
    plan_free(dpv);

    /* Interleaved, 4 chunks on 2 ranks, 2 micro-batches: rank 0 runs 0F0,0F1,2F0,2F1,4F0,4F1,
     * 6F0,6F1,6B0,6B1,4B0,4B1,2B0,2B1,0B0,0B1. Torch's window of 3: 0, 2, 4 gathered first;
     * before 2F0 the next three are 2, 4, 6: 0 out, 6 in; before 4B0 they are 4, 2, 0: 6 out
     * (after its REDUCE_GRAD), 0 in again; then 4 out before 2B0, 2 before 0B0. */
    struct config c = test_unit_config(SCHEME_W, 2, 2, 1, 2, 1);
    c.chunks = 4;
    c.model.num_layers = 64;
    struct plan *w = NULL;
    CHECK(scheme_build(&c, &w, &e) == MT_OK);
    f = w ? with_zero(w, 3, FSDP_RESHARD_DEFAULT) : NULL;
    if (f)
        check_csv(f,
                  "0UNSHARD,2UNSHARD,4UNSHARD,0F0,0F1,0RESHARD,6UNSHARD,2F0,2F1,4F0,4F1,6F0,"
                  "6F1,6B0,6B1,6REDUCE_GRAD,6RESHARD,0UNSHARD,4B0,4B1,4REDUCE_GRAD,4RESHARD,2B0,"
                  "2B1,2REDUCE_GRAD,2RESHARD,0B0,0B1,0REDUCE_GRAD,0RESHARD\n"
                  "1UNSHARD,3UNSHARD,5UNSHARD,1F0,1F1,1RESHARD,7UNSHARD,3F0,3F1,5F0,5F1,7F0,"
                  "7B0,7F1,7B1,7REDUCE_GRAD,7RESHARD,1UNSHARD,5B0,5B1,5REDUCE_GRAD,5RESHARD,3B0,"
                  "3B1,3REDUCE_GRAD,3RESHARD,1B0,1B1,1REDUCE_GRAD,1RESHARD\n",
                  "W x4 FSDP");
    plan_free(f);
    plan_free(w);

    /* every scheme torch names, under each policy: rows torch's runtime runs */
    enum scheme_id ids[SCHEME__COUNT];
    int n = test_sync_schemes(ids, false);
    for (int k = 0; k < n; k++) {
        if (scheme_registry_get(ids[k])->torch_none != NULL)
            continue;
        struct plan *x = build(ids[k], 4, 8);
        const struct { int zero; enum fsdp_reshard reshard; bool gathers; int reduces; } pol[] = {
            {3, FSDP_RESHARD_DEFAULT, true, 1},
            {3, FSDP_RESHARD_ALWAYS, true, 1},
            {2, FSDP_RESHARD_DEFAULT, false, 8},
        };
        for (size_t i = 0; i < sizeof pol / sizeof pol[0]; i++) {
            struct plan *y = with_zero(x, pol[i].zero, pol[i].reshard);
            char *s = plan_to_torch_csv(y, &e);
            CHECK(s != NULL);
            if (s) {
                check_grammar(s);
                check_runtime(s, pol[i].gathers, pol[i].reduces);
                struct plan *r = NULL;
                /* read under the unit plan's config: the cells are left either way */
                int rc = plan_load_torch_csv(s, strlen(s), "t.csv", plan_config(x), &r, &e);
                CHECK(rc == MT_OK);
                if (rc != MT_OK)
                    fprintf(stderr, "%s: %s\n", config_scheme_name(ids[k]), e.msg);
                plan_free(r);
            }
            free(s);
            plan_free(y);
        }
        plan_free(x);
    }

    /* refused where they are: a micro-batch after FSDP's name, no stage, a stage the row
     * does not compute, one inside OVERLAP_F_B, torch's case only */
    struct config base = test_unit_config(SCHEME_V, 2, 2, 1, 2, 1);
    static const struct { const char *csv, *where; } bad[] = {
        {"0UNSHARD,0F0,0F1,0B0,0B1\n1UNSHARD3,1F0,1B0,1F1,1B1\n", "t.csv:2:1: '1UNSHARD3'"},
        {"UNSHARD,0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "t.csv:1:1: 'UNSHARD'"},
        {"0F0,0F1,0B0,0B1\n1F0,1B0,9RESHARD,1F1,1B1\n",
         "t.csv:2:9: 9RESHARD names stage 9, which rank 1 does not compute"},
        {"0F0,0F1,0B0,0B1,1REDUCE_GRAD\n1F0,1B0,1F1,1B1\n",
         "t.csv:1:17: 1REDUCE_GRAD names stage 1, which rank 0 does not compute"},
        {"(0UNSHARD;0F1)OVERLAP_F_B,0F0,0B0,0B1\n1F0,1B0,1F1,1B1\n", "t.csv:1:1:"},
        {"0unshard,0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "t.csv:1:1: '0unshard'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct plan *r = NULL;
        CHECK(plan_load_torch_csv(bad[i].csv, strlen(bad[i].csv), "t.csv", &base, &r, &e) !=
              MT_OK);
        CHECK(r == NULL);
        CHECK_STR_CONTAINS(e.msg, bad[i].where);
    }
}

static void test_checkpointed(void)
{
    struct plan *p = build(SCHEME_V, 4, 8), *ck = NULL, *fw = NULL;
    struct mt_err e = {0};
    struct pass_changes ch;
    pass_changes_init(&ch);
    CHECK(pass_run(PASS_CHECKPOINT, p, &ck, &ch, &e) == MT_OK);
    /* torch's grammar has no recompute: refused unless the framework's AC is asked for */
    char *none = plan_to_torch_csv(ck, &e);
    CHECK(none == NULL && e.code == MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "checkpointing (CFW/RC)");
    struct plan_csv_opts o = {.checkpoints_as_ac = true};
    char *a = plan_to_torch_csv_opts(ck, &o, &e), *b = plan_to_torch_csv(p, &e);
    CHECK(a && b && strcmp(a, b) == 0); /* CFW as F, no RC: the base plan's order */
    check_grammar(a ? a : "");
    /* apply-checkpoint is what the framework's full AC runs: the same plan and step */
    struct pass_framework_ac r;
    CHECK(pass_framework_ac(ck, &fw, &r, &e) == MT_OK);
    CHECK_EQ_INT(r.checkpoints, 32); /* 8 micro-batches x 4 stages */
    CHECK_EQ_INT(r.recomputes, 32);
    CHECK_EQ_INT(r.recomputes_moved, 0);
    CHECK_EQ_INT(r.forwards_kept, 0);
    struct sim_result s1, s2;
    CHECK(fw && sim_run(ck, &s1, &e) == MT_OK && sim_run(fw, &s2, &e) == MT_OK);
    CHECK_NEAR(s1.step_time, s2.step_time, 1e-9);
    sim_result_fini(&s1);
    sim_result_fini(&s2);
    plan_free(fw);
    fw = NULL;
    /* overlap-recompute moves every RC before its gradient's receive: the framework's plan puts
     * them back, and is the apply-checkpoint step again (unit costs: 4 x (F + RC + B) + the
     * fill and drain, the same in both) */
    struct plan *ov = NULL;
    CHECK(pass_run(PASS_OVERLAP, ck, &ov, &ch, &e) == MT_OK);
    CHECK(ov && pass_framework_ac(ov, &fw, &r, &e) == MT_OK);
    CHECK_EQ_INT(r.recomputes, 32);
    CHECK(r.recomputes_moved > 0);
    CHECK(fw && sim_run(ck, &s1, &e) == MT_OK && sim_run(fw, &s2, &e) == MT_OK);
    CHECK_NEAR(s1.step_time, s2.step_time, 1e-9);
    sim_result_fini(&s1);
    sim_result_fini(&s2);
    plan_free(fw);
    plan_free(ov);
    /* checkpoints of 2 of a stage's layers (Megatron's block 2): the framework's plan keeps
     * the count, on every forward, with an RC of the same count right before each backward */
    struct plan *two = plan_new(plan_config(ck), plan_geom(ck));
    for (int d = 0; d < plan_devices(ck); d++)
        for (int i = 0; i < plan_len(ck, d); i++) {
            struct instr x = *plan_at(ck, d, i);
            if (x.op == OP_CFW || x.op == OP_RC)
                x.ckpt_layers = 2;
            plan_append(two, d, x);
        }
    CHECK(pass_framework_ac(two, &fw, &r, &e) == MT_OK);
    CHECK_EQ_INT(r.ckpt_layers, 2);
    CHECK(!r.mixed);
    int cfw = 0, rcs = 0;
    for (int d = 0; fw && d < plan_devices(fw); d++)
        for (int i = 0; i < plan_len(fw, d); i++) {
            const struct instr *x = plan_at(fw, d, i);
            cfw += x->op == OP_CFW && x->ckpt_layers == 2;
            rcs += x->op == OP_RC && x->ckpt_layers == 2 && i + 1 < plan_len(fw, d) &&
                   plan_op_is_backward(plan_at(fw, d, i + 1)->op);
        }
    CHECK_EQ_INT(cfw, 32);
    CHECK_EQ_INT(rcs, 32);
    plan_free(fw);
    plan_free(two);
    free(a);
    free(b);
    pass_changes_fini(&ch);
    plan_free(ck);
    plan_free(p);
}

int main(void)
{
    CHECK(regcomp(&torch_action,
                  "^[0-9]+(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)"
                  "[0-9]*$",
                  REG_EXTENDED | REG_NOSUB) == 0);
    CHECK(regcomp(&torch_group, "^\\(([^)]*)\\)(OVERLAP_F_B)$", REG_EXTENDED) == 0);
    test_dualpipev_hand();
    test_checkpointed();
    test_fsdp();
    regfree(&torch_action);
    regfree(&torch_group);
    return check_report("test_torch_csv");
}
