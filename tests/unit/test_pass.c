/* tests/unit/test_pass.c: Mario's four passes (paper §5.1) against values known without the
 * code under test: the paper's Figure 2 (21t, 28t, 25t, 23t, 22t for 1F1B, D = 4, N = 4,
 * F = 1, B = 2, RC = 1) with the instructions each step changes, worked out by hand below;
 * Table 1's Mario column (peak activation memory M_θ for V and X, M_θ/2 for W, plus
 * checkpoints whose size comes from the cost model); and properties over random V, X, W and
 * GPipe configs: outputs validate, passes 2-4 never slow a plan or raise the peak memory of
 * pass 1, a preposed send always travels with its receive, inputs are never touched. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static bool plan_equal(const struct plan *a, const struct plan *b)
{
    if (plan_devices(a) != plan_devices(b))
        return false;
    for (int d = 0; d < plan_devices(a); d++) {
        if (plan_len(a, d) != plan_len(b, d))
            return false;
        for (int i = 0; i < plan_len(a, d); i++) {
            const struct instr *x = plan_at(a, d, i), *y = plan_at(b, d, i);
            if (x->op != y->op || x->mb != y->mb || x->part != y->part || x->stage != y->stage ||
                x->peer != y->peer || x->step != y->step || x->ckpt_layers != y->ckpt_layers)
                return false;
        }
    }
    return true;
}

static int count_ops(const struct plan *p, enum op op)
{
    int n = 0;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            n += plan_at(p, d, i)->op == op;
    return n;
}

static int count_changes(const struct pass_changes *ch, enum pass_change_kind kind, enum op op,
                         int dev)
{
    int n = 0;
    for (int i = 0; i < ch->n; i++)
        n += ch->v[i].kind == kind && ch->v[i].op == op && (dev < 0 || ch->v[i].dev == dev);
    return n;
}

static double start_of(const struct pass_step *st, int dev, enum op op, int mb)
{
    int i = plan_find(st->plan, dev, op, mb, dev);
    return i < 0 ? -1 : st->sim.start[plan_id(st->plan, dev, i)];
}

/* Figure 2, worked by hand (t = 1; "f" a CFW, "r" an RC, "bb" a BW, digits micro-batches).
 *   base: 1F1B = (N + D - 1)(F + B) = 21.
 *   ckpt: every FW is a CFW, RC sits between RG and BW and waits for the gradient: 28.
 *   overlap: RC moves before RG on devices 0-2 (device 3 has no RG): 25.
 *   redundancy: only on device 3 does each CFW meet its BW: FW, no RC (4 + 4 changes): 23.
 *        dev0 ffffr.....bbrbbr.bbrbb
 *        dev1 .fffr...bbfrbbr.bbrbb
 *        dev2 ..ffr.bbfrbbfrbbrbb
 *        dev3 ...FbbFbbFbb.Fbb
 *   prepose: device 1 idles in [5, 8) waiting for RG0; CFW3's input left device 0 at 4 and
 *   the checkpoint fits under the plan's peak (device 0 holds 4 checkpoints + 1 activation),
 *   so CFW3 moves to 5. Device 2 idles at 5 before RG0; CFW2's input arrived at 4: CFW2 moves
 *   to 5, and CFW3 of device 2 then starts at 11 instead of 12: 22. Neither next device
 *   preposes the matching forward, so both sends stay (the paper's case 2). */
static void test_figure2(void)
{
    struct config c = test_unit_config(SCHEME_V, 4, 4, 1, 2, 1);
    struct plan *base = NULL;
    struct mt_err e = {0};
    CHECK(scheme_build(&c, &base, &e) == MT_OK);
    struct plan *copy = plan_clone(base);
    struct pass_pipeline pl;
    int rc = pass_pipeline_run(base, &pl, &e);
    CHECK_EQ_INT(rc, MT_OK);
    if (rc != MT_OK) {
        fprintf(stderr, "  %s\n", e.msg);
        plan_free(base);
        plan_free(copy);
        return;
    }
    CHECK(plan_equal(base, copy));
    const double want[PASS_ROW__COUNT] = {21, 28, 25, 23, 22};
    for (int row = 0; row < PASS_ROW__COUNT; row++) {
        const struct pass_step *st = pass_pipeline_row(&pl, (enum pass_row)row);
        CHECK(st != NULL);
        if (st)
            CHECK_NEAR(st->sim.step_time, want[row], 1e-9);
    }
    const struct pass_step *ck = pass_pipeline_row(&pl, PASS_ROW_CKPT);
    const struct pass_step *ov = pass_pipeline_row(&pl, PASS_ROW_OVERLAP);
    const struct pass_step *rd = pass_pipeline_row(&pl, PASS_ROW_REDUNDANCY);
    const struct pass_step *pp = pass_pipeline_row(&pl, PASS_ROW_PREPOSE);
    CHECK_EQ_INT(count_changes(&ck->changes, PASS_CHANGE_RETYPE, OP_CFW, -1), 16);
    CHECK_EQ_INT(count_changes(&ck->changes, PASS_CHANGE_INSERT, OP_RC, -1), 16);
    CHECK_EQ_INT(count_ops(ck->plan, OP_FW), 0);
    /* Pass 1 puts RC right after the RG of its micro-batch, pass 2 right before it. */
    int rg = plan_find(ck->plan, 1, OP_RG, 2, 1);
    CHECK(rg >= 0 && plan_at(ck->plan, 1, rg + 1)->op == OP_RC &&
          plan_at(ck->plan, 1, rg + 2)->op == OP_BW);
    CHECK_EQ_INT(ov->changes.n, 12);
    CHECK_EQ_INT(count_changes(&ov->changes, PASS_CHANGE_MOVE, OP_RC, 3), 0);
    rg = plan_find(ov->plan, 1, OP_RG, 2, 1);
    CHECK(rg >= 1 && plan_at(ov->plan, 1, rg - 1)->op == OP_RC &&
          plan_at(ov->plan, 1, rg - 1)->mb == 2);
    CHECK_EQ_INT(rd->changes.n, 8);
    CHECK_EQ_INT(count_changes(&rd->changes, PASS_CHANGE_RETYPE, OP_FW, 3), 4);
    CHECK_EQ_INT(count_changes(&rd->changes, PASS_CHANGE_REMOVE, OP_RC, 3), 4);
    CHECK(pass_changes_find(&rd->changes, 3, OP_FW, 2, 3) != NULL);
    /* The first prepose did it all; the next round found nothing better. */
    const struct pass_step *p1 = NULL;
    for (int i = 0; i < pl.n; i++)
        if (pl.step[i].pass == PASS_PREPOSE && p1 == NULL)
            p1 = &pl.step[i];
    CHECK(p1 != NULL);
    if (p1) {
        CHECK_EQ_INT(p1->changes.n, 4);
        CHECK(pass_changes_find(&p1->changes, 1, OP_CFW, 3, 1) != NULL);
        CHECK(pass_changes_find(&p1->changes, 1, OP_RA, 3, 1) != NULL);
        CHECK(pass_changes_find(&p1->changes, 2, OP_CFW, 2, 2) != NULL);
        CHECK(pass_changes_find(&p1->changes, 2, OP_RA, 2, 2) != NULL);
        CHECK_EQ_INT(count_changes(&p1->changes, PASS_CHANGE_MOVE, OP_SA, -1), 0);
    }
    CHECK_NEAR(start_of(pp, 1, OP_CFW, 3), 5, 1e-9);
    CHECK_NEAR(start_of(pp, 2, OP_CFW, 2), 5, 1e-9);
    CHECK_NEAR(start_of(pp, 2, OP_CFW, 3), 11, 1e-9);
    CHECK_NEAR(start_of(rd, 2, OP_CFW, 3), 12, 1e-9);
    /* Memory: device d holds one full activation and the checkpoints in flight. Pass 1: device
     * d keeps D - d checkpoints when RC0 restores mb 0, so 1 + (D - d - 1) c_d; the last device
     * ends at exactly M_θ (FW next to BW). Pass 4 adds one checkpoint on devices 1 and 2. */
    struct cost_model cost;
    CHECK(scheme_costs(&c, &cost, &e) == MT_OK);
    for (int d = 0; d < 4; d++) {
        double cd = cost.stage[d].ckpt;
        CHECK_NEAR(ck->sim.dev[d].peak_dynamic, 1 + (3 - d) * cd, 1e-12);
        double fin = d == 3 ? 1 : d == 0 ? 1 + 3 * cd : 1 + (4 - d) * cd;
        CHECK_NEAR(pp->sim.dev[d].peak_dynamic, fin, 1e-12);
    }
    CHECK(pass_sim_peak_max(&pp->sim) <= pass_sim_peak_max(&ck->sim) + 1e-12);
    cost_model_fini(&cost);
    pass_pipeline_fini(&pl);
    plan_free(base);
    plan_free(copy);
}

/* Table 1, Mario column: after the passes each device keeps one full activation of a stage
 * (M_θ for V and X; a chunk, M_θ/2, for W with 2 chunks) plus checkpoints. The checkpoint
 * allowance is the in-flight bound of the scheme's baseline (Table 1: D micro-batches for 1F1B
 * and Chimera; 3D - 1 chunks for interleaving, counted by hand in test_sim.c) minus the one
 * held in full, times the largest checkpoint of any stage in the cost model. */
static void test_table1_mario(void)
{
    int Ds[] = {4, 8, 16};
    enum scheme_id schemes[] = {SCHEME_V, SCHEME_X, SCHEME_W};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            int D = Ds[i];
            enum scheme_id s = schemes[k];
            struct config c = test_unit_config(s, D, 2 * D, 1, 2, 1);
            c.chunks = 2;
            double m_theta = s == SCHEME_W ? 0.5 : 1;
            int inflight = s == SCHEME_W ? 3 * D - 1 : D;
            struct plan *base = NULL;
            struct mt_err e = {0};
            struct cost_model cost;
            CHECK(scheme_build(&c, &base, &e) == MT_OK);
            CHECK(scheme_costs(&c, &cost, &e) == MT_OK);
            double ckpt = 0;
            for (int st = 0; st < cost.num_stages; st++)
                ckpt = cost.stage[st].ckpt > ckpt ? cost.stage[st].ckpt : ckpt;
            CHECK(ckpt > 0 && ckpt < 0.05 * m_theta);
            struct pass_pipeline pl;
            int rc = pass_pipeline_run(base, &pl, &e);
            CHECK_EQ_INT(rc, MT_OK);
            if (rc == MT_OK) {
                const struct pass_step *f = pass_pipeline_final(&pl);
                for (int d = 0; d < f->sim.devices; d++) {
                    double m = f->sim.dev[d].peak_dynamic;
                    CHECK(m >= m_theta - 1e-9);
                    CHECK(m <= m_theta + (inflight - 1) * ckpt + 1e-9);
                    if (m < m_theta - 1e-9 || m > m_theta + (inflight - 1) * ckpt + 1e-9)
                        fprintf(stderr, "  %s D=%d device %d: %.6f M_θ\n", config_scheme_name(s), D,
                                d, m);
                }
                /* 1F1B exactly: device 0 holds D checkpoints of stage 0 when RC0 restores
                 * micro-batch 0, and pass 4 never raises the plan's peak. */
                if (s == SCHEME_V) {
                    double c0 = cost.stage[0].ckpt;
                    CHECK_NEAR(pass_sim_peak_max(&f->sim), 1 + (D - 1) * c0, 1e-12);
                    CHECK_NEAR(f->sim.dev[D - 1].peak_dynamic, 1, 1e-12);
                }
                /* The baseline's activations grow with D; Mario's do not. */
                const struct pass_step *b0 = pass_pipeline_row(&pl, PASS_ROW_BASE);
                CHECK(pass_sim_peak_max(&b0->sim) >= (D / 2 + 1) * m_theta - 1e-9);
                pass_pipeline_fini(&pl);
            }
            cost_model_fini(&cost);
            plan_free(base);
        }
}

/* Every change record names an instruction that is (or, for REMOVE, is no longer) there. */
static int changes_consistent(const struct plan *out, const struct pass_changes *ch)
{
    int bad = 0;
    for (int i = 0; i < ch->n; i++) {
        const struct pass_change *c = &ch->v[i];
        int at = plan_find(out, c->dev, c->op, c->mb, c->stage);
        bad += c->kind == PASS_CHANGE_REMOVE ? at >= 0 : at < 0;
    }
    return bad;
}

/* The paper's rule for a preposed send (case 1): it moves only with the matching receive. */
static int sends_paired(const struct pass_changes *ch)
{
    int bad = 0;
    for (int i = 0; i < ch->n; i++) {
        const struct pass_change *c = &ch->v[i];
        if (c->kind != PASS_CHANGE_MOVE || c->op != OP_SA)
            continue;
        bool found = false;
        for (int j = 0; j < ch->n && !found; j++)
            found = ch->v[j].kind == PASS_CHANGE_MOVE && ch->v[j].op == OP_RA &&
                    ch->v[j].mb == c->mb && ch->v[j].stage == c->stage + 1;
        bad += !found;
    }
    return bad;
}

/* Every channel keeps its order: the sends from a to b, in a's order, are the receives on b
 * from a, in b's order (the baseline plans are built that way; blocking p2p relies on it). */
static int fifo_violations(const struct plan *p)
{
    int D = plan_devices(p), bad = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b)
                continue;
            int i = 0, j = 0, na = plan_len(p, a), nb = plan_len(p, b);
            for (;;) {
                while (i < na &&
                       !((plan_at(p, a, i)->op == OP_SA || plan_at(p, a, i)->op == OP_SG) &&
                         plan_at(p, a, i)->peer == b))
                    i++;
                while (j < nb &&
                       !((plan_at(p, b, j)->op == OP_RA || plan_at(p, b, j)->op == OP_RG) &&
                         plan_at(p, b, j)->peer == a))
                    j++;
                if (i >= na || j >= nb) {
                    bad += (i < na) != (j < nb);
                    break;
                }
                const struct instr *s = plan_at(p, a, i), *r = plan_at(p, b, j);
                bad += s->mb != r->mb || (s->op == OP_SA) != (r->op == OP_RA);
                i++;
                j++;
            }
        }
    return bad;
}

static void test_random_properties(void)
{
    srand(2025);
    int runs = 0, preposed = 0, sa_moved = 0;
    for (int trial = 0; trial < 400; trial++) {
        enum scheme_id s = (enum scheme_id)(rand() % 4);
        int D = 1 + rand() % 8, N = 1 + rand() % 16;
        struct config c =
            test_unit_config(s, D, N, 0.5 + rand() % 3, 0.5 + rand() % 5, 0.5 * (rand() % 4));
        c.unit.enabled = rand() % 3 != 0;
        c.cluster.dp = 1 + rand() % 2;
        c.blocking_send = rand() % 8 == 0;
        if (s == SCHEME_X) {
            D += D % 2;
            N += N % 2;
        }
        if (s == SCHEME_W) {
            D = D < 2 ? 2 : D;
            c.chunks = 2 + rand() % 3;
            N = D * (1 + rand() % 3);
        }
        c.num_device = D * c.cluster.dp;
        c.num_microbatches = N;
        struct plan *base = NULL;
        struct mt_err e = {0};
        if (scheme_build(&c, &base, &e) != MT_OK) {
            CHECK(0);
            fprintf(stderr, "  trial %d: %s\n", trial, e.msg);
            continue;
        }
        if (validate_plan(base, &e) != MT_OK) { /* e.g. 1F1B under rendezvous sends */
            struct pass_pipeline pl;
            CHECK_EQ_INT(pass_pipeline_run(base, &pl, &e), MT_EINFEASIBLE);
            plan_free(base);
            continue;
        }
        struct plan *copy = plan_clone(base);
        struct pass_pipeline pl;
        int rc = pass_pipeline_run(base, &pl, &e);
        CHECK_EQ_INT(rc, MT_OK);
        if (rc != MT_OK) {
            fprintf(stderr, "  trial %d %s D=%d N=%d: %s\n", trial, config_scheme_name(s), D, N,
                    e.msg);
            plan_free(base);
            plan_free(copy);
            continue;
        }
        runs++;
        CHECK(plan_equal(base, copy));
        double ckpt_peak = pass_sim_peak_max(&pass_pipeline_row(&pl, PASS_ROW_CKPT)->sim);
        int bad = 0;
        for (int i = 1; i < pl.n; i++) {
            const struct pass_step *st = &pl.step[i], *prev = &pl.step[i - 1];
            bad += validate_plan(st->plan, &e) != MT_OK;
            bad += changes_consistent(st->plan, &st->changes);
            bad += fifo_violations(st->plan);
            bad += st->changes.kept_input && st->changes.n != 0;
            bad += strncmp(st->changes.note, "invalid", 7) == 0;
            bad += fabs(st->changes.step_in - prev->sim.step_time) > 1e-9 * prev->sim.step_time;
            bad += fabs(st->changes.step_out - st->sim.step_time) > 1e-9 * st->sim.step_time;
            if (st->pass != PASS_CHECKPOINT) {
                bad += st->sim.step_time > prev->sim.step_time * (1 + 1e-9);
                bad += pass_sim_peak_max(&st->sim) > ckpt_peak * (1 + 1e-12);
            }
            if (st->pass == PASS_PREPOSE) {
                bad += sends_paired(&st->changes);
                preposed += st->changes.n > 0;
                sa_moved += count_changes(&st->changes, PASS_CHANGE_MOVE, OP_SA, -1);
            }
        }
        /* Pass 1: every forward checkpointed, one RC each. */
        const struct pass_step *ck = pass_pipeline_row(&pl, PASS_ROW_CKPT);
        const struct plan_geom *g = plan_geom(base);
        bad += count_ops(ck->plan, OP_FW) != 0;
        bad += count_ops(ck->plan, OP_RC) != g->mbs * g->stages;
        CHECK_EQ_INT(bad, 0);
        if (bad)
            fprintf(stderr, "  trial %d %s D=%d N=%d unit=%d blocking=%d\n", trial,
                    config_scheme_name(s), D, N, c.unit.enabled, c.blocking_send);
        /* Each pass alone leaves its input as it was. */
        const struct pass_step *last = pass_pipeline_final(&pl);
        for (int id = 0; id < PASS__COUNT; id++) {
            struct plan *before = plan_clone(last->plan), *out = NULL;
            struct pass_changes ch;
            pass_changes_init(&ch);
            CHECK_EQ_INT(pass_run((enum pass_id)id, last->plan, &out, &ch, &e), MT_OK);
            CHECK(plan_equal(before, last->plan));
            CHECK(out != NULL && out != last->plan);
            plan_free(out);
            plan_free(before);
            pass_changes_fini(&ch);
        }
        pass_pipeline_fini(&pl);
        plan_free(base);
        plan_free(copy);
    }
    printf("random: %d pipelines, %d with a prepose, %d sends preposed with their receive\n", runs,
           preposed, sa_moved);
    CHECK(runs > 300);
    CHECK(preposed > 20);
}

static void test_table_and_errors(void)
{
    CHECK(pass_get(PASS_CHECKPOINT) && strcmp(pass_get(PASS_CHECKPOINT)->name, "ckpt") == 0);
    CHECK(pass_find("prepose-forward") == pass_get(PASS_PREPOSE));
    CHECK(pass_find("OVERLAP") == pass_get(PASS_OVERLAP));
    CHECK(pass_find("remove-redundancy") == pass_get(PASS_REDUNDANCY));
    CHECK(pass_find("nope") == NULL);
    CHECK(strcmp(pass_row_name(PASS_ROW_REDUNDANCY), "redundancy") == 0);
    /* A plan that does not run is refused with the simulator's message. */
    struct config c = test_unit_config(SCHEME_V, 2, 2, 1, 2, 1);
    struct plan *p = NULL, *out = NULL;
    struct mt_err e = {0};
    CHECK(scheme_build(&c, &p, &e) == MT_OK);
    int sa = plan_find(p, 0, OP_SA, 0, 0), rg = plan_find(p, 0, OP_RG, 0, 0);
    plan_move(p, 0, rg, sa);
    struct pass_pipeline pl;
    CHECK_EQ_INT(pass_pipeline_run(p, &pl, &e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "deadlock");
    CHECK_EQ_INT(pl.n, 0);
    struct pass_changes ch;
    pass_changes_init(&ch);
    CHECK_EQ_INT(pass_run(PASS_OVERLAP, p, &out, &ch, &e), MT_EINFEASIBLE);
    CHECK(out == NULL);
    /* Pass 1 on a plan already checkpointed changes nothing. */
    plan_free(p);
    CHECK(scheme_build(&c, &p, &e) == MT_OK);
    CHECK_EQ_INT(pass_run(PASS_CHECKPOINT, p, &out, &ch, &e), MT_OK);
    struct plan *again = NULL;
    CHECK_EQ_INT(pass_run(PASS_CHECKPOINT, out, &again, &ch, &e), MT_OK);
    CHECK_EQ_INT(ch.n, 0);
    CHECK(again && plan_equal(again, out));
    pass_changes_fini(&ch);
    plan_free(again);
    plan_free(out);
    plan_free(p);
}

/* pass_changes_find over thousands of changes (hashed): each key finds its first record,
 * absent keys none, and after a clear nothing until added again. */
static void test_changes_index(void)
{
    struct pass_changes ch;
    pass_changes_init(&ch);
    CHECK(pass_changes_find(&ch, 0, OP_FW, 0, 0) == NULL);
    for (int round = 0; round < 2; round++) {
        for (int mb = 0; mb < 5000; mb++) {
            struct instr in = {OP_CFW, mb, 0, mb % 7, -1, 0, 0, 0};
            pass_changes_add(&ch, PASS_CHANGE_RETYPE, mb % 3, &in, OP_FW);
            in.op = OP_RC; /* inserted, then moved: the first record is the one found */
            pass_changes_add(&ch, PASS_CHANGE_INSERT, mb % 3, &in, OP_RC);
            pass_changes_add(&ch, PASS_CHANGE_MOVE, mb % 3, &in, OP_RC);
        }
        CHECK(ch.n == 15000);
        int bad = 0;
        for (int mb = 0; mb < 5000; mb++) {
            const struct pass_change *c = pass_changes_find(&ch, mb % 3, OP_CFW, mb, mb % 7);
            bad += c == NULL || c->kind != PASS_CHANGE_RETYPE || c->mb != mb;
            c = pass_changes_find(&ch, mb % 3, OP_RC, mb, mb % 7);
            bad += c == NULL || c->kind != PASS_CHANGE_INSERT || c->mb != mb;
            bad += pass_changes_find(&ch, (mb + 1) % 3, OP_CFW, mb, mb % 7) != NULL;
            bad += pass_changes_find(&ch, mb % 3, OP_FW, mb, mb % 7) != NULL;
        }
        CHECK(bad == 0);
        pass_changes_clear(&ch);
        CHECK(ch.n == 0 && pass_changes_find(&ch, 0, OP_CFW, 0, 0) == NULL);
    }
    pass_changes_fini(&ch);
}

/* The pipeline's watch (pass_pipeline_run_watched) on Figure 2: it is asked before each step
 * after base, with the steps so far, in the pipeline's order (ckpt, then overlap, redundancy,
 * prepose per round); never stopping, the pipeline is pass_pipeline_run's; stopped before the
 * third step, base, ckpt and overlap are kept (21t, 28t, 25t as above) and the rest is absent. */
struct watch_log {
    int calls, stop_at;
    char names[16][16];
    int rounds[16], steps_before[16];
};

static bool watch_step(void *ctx, const struct pass_pipeline *pl, const char *next, int round)
{
    struct watch_log *w = ctx;
    if (w->calls < 16) {
        snprintf(w->names[w->calls], sizeof w->names[0], "%s", next);
        w->rounds[w->calls] = round;
        w->steps_before[w->calls] = pl->n;
    }
    return ++w->calls != w->stop_at;
}

static void test_watch(void)
{
    struct config c = test_unit_config(SCHEME_V, 4, 4, 1, 2, 1);
    struct plan *base = NULL;
    struct mt_err e = {0};
    CHECK(scheme_build(&c, &base, &e) == MT_OK);
    struct pass_pipeline ref, pl;
    CHECK(pass_pipeline_run(base, &ref, &e) == MT_OK);
    struct watch_log log = {0};
    struct pass_watch w = {watch_step, &log};
    CHECK(pass_pipeline_run_watched(base, &w, &pl, &e) == MT_OK);
    CHECK(!pl.stopped && pl.n == ref.n && log.calls == ref.n - 1);
    for (int i = 1; i < ref.n && i < pl.n; i++) {
        CHECK(plan_equal(pl.step[i].plan, ref.step[i].plan));
        CHECK(strcmp(log.names[i - 1], ref.step[i].name) == 0);
        CHECK_EQ_INT(log.rounds[i - 1], ref.step[i].round);
        CHECK_EQ_INT(log.steps_before[i - 1], i);
    }
    CHECK(strcmp(log.names[0], "ckpt") == 0 && strcmp(log.names[1], "overlap") == 0 &&
          strcmp(log.names[2], "redundancy") == 0 && strcmp(log.names[3], "prepose") == 0);
    pass_pipeline_fini(&pl);
    log = (struct watch_log){.stop_at = 3};
    CHECK(pass_pipeline_run_watched(base, &w, &pl, &e) == MT_OK);
    CHECK(pl.stopped);
    CHECK_EQ_INT(pl.n, 3);
    const double want[3] = {21, 28, 25};
    for (int row = 0; row < 3; row++) {
        const struct pass_step *st = pass_pipeline_row(&pl, (enum pass_row)row);
        CHECK(st != NULL && st->sim.step_time == want[row]);
    }
    CHECK(pass_pipeline_row(&pl, PASS_ROW_REDUNDANCY) == NULL);
    CHECK(pass_pipeline_row(&pl, PASS_ROW_PREPOSE) == NULL);
    pass_pipeline_fini(&pl);
    log = (struct watch_log){.stop_at = 1}; /* before ckpt: base alone */
    CHECK(pass_pipeline_run_watched(base, &w, &pl, &e) == MT_OK);
    CHECK(pl.stopped && pl.n == 1 && pass_pipeline_row(&pl, PASS_ROW_CKPT) == NULL);
    pass_pipeline_fini(&pl);
    pass_pipeline_fini(&ref);
    plan_free(base);
}

int main(void)
{
    test_changes_index();
    test_table_and_errors();
    test_figure2();
    test_watch();
    test_table1_mario();
    test_random_properties();
    return check_report("test_pass");
}
