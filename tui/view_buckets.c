/* tui/view_buckets.c: the explorer's bucket list for input-aware checkpointing (issue 12;
 * sim/inputs/ckpt_plan.h, Mimose on Mario's plans). 'a' plans every length bucket of the config's
 * sequence lengths (its model.seq_length: one number, a distribution or a lengths file) and
 * lists them: lengths, batches, peak, step time, throughput and the layers each stage
 * checkpoints; Enter shows the selected bucket's plan in the Gantt chart in place of the pass
 * step, n/p go back to the passes. The list is made once per config: an edit drops it. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "model/seqlen.h"
#include "render/paint_cells.h"
#include "sim/inputs/ckpt_plan.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "tui/curses_compat.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

#define VIEW_BUCKETS_WIDTH 64 /* tokens per bucket, as `mario-tui plan-inputs` */

void explore_buckets_fini(struct explore *x)
{
    if (x->buckets != NULL) {
        ckpt_plan_report_fini(x->buckets);
        free(x->buckets);
    }
    ckpt_plan_free(x->bucket_planner);
    if (x->bucket_step.plan != NULL) {
        if (x->bound_of == x->bucket_step.plan)
            x->bound_of = NULL;
        plan_free(x->bucket_step.plan);
        sim_result_fini(&x->bucket_step.sim);
        pass_changes_fini(&x->bucket_step.changes);
    }
    x->shown_gen++; /* the bucket's plan is gone */
    x->buckets = NULL;
    x->bucket_planner = NULL;
    x->bucket_on = false;
    x->bucket_sel = 0;
    memset(&x->bucket_step, 0, sizeof x->bucket_step);
}

int explore_buckets_open(struct explore *x)
{
    if (x->buckets == NULL) {
        struct mt_err e = {0};
        struct seqlen_sample smp;
        struct ckpt_plan *cp = NULL;
        struct ckpt_plan_report *r = xcalloc(1, sizeof *r);
        int rc = seqlen_sample_load(&x->cfg, &smp, &e);
        if (rc == MT_OK) {
            rc = ckpt_plan_new(&x->cfg, smp.max_len, &cp, &e);
            if (rc == MT_OK)
                rc = ckpt_plan_report_build(cp, &smp, VIEW_BUCKETS_WIDTH, false, r, &e);
            seqlen_sample_fini(&smp);
        }
        if (rc != MT_OK) {
            ckpt_plan_free(cp);
            free(r);
            snprintf(x->status, sizeof x->status, "input-aware: %s", e.msg);
            x->status_err = true;
            return R_REDRAW;
        }
        x->bucket_planner = cp;
        x->buckets = r;
        x->bucket_sel = r->n - 1; /* the longest: the one the cap binds */
    }
    x->mode = MODE_BUCKETS;
    x->status_err = false;
    snprintf(x->status, sizeof x->status,
             "input-aware buckets: up/down select   Enter: show its plan   Esc: back");
    return R_REDRAW;
}

/* Puts the selected bucket's plan in bucket_step and shows it. */
static void view_buckets_show(struct explore *x)
{
    const struct ckpt_plan_bucket *b = &x->buckets->b[x->bucket_sel];
    struct mt_err e = {0};
    struct sim_result r;
    if (ckpt_plan_simulate(x->bucket_planner, b->s, b->k, &r, &e) != MT_OK) {
        snprintf(x->status, sizeof x->status, "input-aware: %s", e.msg);
        x->status_err = true;
        return;
    }
    if (x->bucket_step.plan != NULL) {
        plan_free(x->bucket_step.plan);
        sim_result_fini(&x->bucket_step.sim);
        pass_changes_fini(&x->bucket_step.changes);
    }
    x->bound_of = NULL; /* another plan, maybe where the last one was */
    x->bucket_step.name = "input-aware";
    x->bucket_step.pass = -1;
    x->bucket_step.round = 0;
    x->bucket_step.plan = ckpt_plan_apply(x->bucket_planner, b->s, b->k);
    x->bucket_step.sim = r;
    pass_changes_init(&x->bucket_step.changes);
    x->bucket_on = true;
    x->mode = MODE_GANTT;
    explore_refresh(x);
    char peak[32];
    str_format_bytes(b->peak[CKPT_PLAN_INPUT_AWARE], peak, sizeof peak);
    x->status_err = false;
    snprintf(x->status, sizeof x->status,
             "input-aware plan for %d-%d tokens (planned at %d): peak %s, step %.4f s   "
             "a: buckets   n/p: back to the passes",
             b->lo + 1, b->s, b->s, peak, b->step_time[CKPT_PLAN_INPUT_AWARE] * 1e-6);
}

int explore_buckets_key(struct explore *x, int key)
{
    int n = x->buckets != NULL ? x->buckets->n : 0;
    switch (key) {
    case 27:
    case 'q': x->mode = MODE_GANTT; explore_status_shown(x); return R_REDRAW;
    case KEY_UP:
    case 'k':
        if (x->bucket_sel > 0)
            x->bucket_sel--;
        return R_REDRAW;
    case KEY_DOWN:
    case 'j':
        if (x->bucket_sel + 1 < n)
            x->bucket_sel++;
        return R_REDRAW;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (n > 0)
            view_buckets_show(x);
        return R_REDRAW;
    default: return R_NONE;
    }
}

void view_buckets_draw(struct explore *x, struct cells *g, int top, int height)
{
    const struct ckpt_plan_report *r = x->buckets;
    if (r == NULL)
        return;
    const double *t = r->throughput;
    cells_printf(g, 1, top, g->w - 2, PAL_TEXT, PAL_BG, CELL_BOLD,
                 "input-aware checkpointing: %d bucket%s of %d tokens; expected %.2f samples/s, "
                 "full ckpt %.2f, static %.2f   (Enter: show  Esc: back)",
                 r->n, r->n == 1 ? "" : "s", r->width, t[CKPT_PLAN_INPUT_AWARE], t[CKPT_PLAN_FULL], t[CKPT_PLAN_STATIC]);
    cells_printf(g, 1, top + 1, g->w - 2, PAL_TEXT_DIM, PAL_BG, CELL_UNDERLINE,
                 "%-11s %8s %11s %9s %10s  %s", "tokens", "batches", "peak", "step (s)",
                 "samples/s", "layers checkpointed per stage");
    double dp_eff = x->cfg.cluster.dp > 1 ? x->cfg.cluster.dp_efficiency : 1.0;
    int rows = height - 2;
    int first = x->bucket_sel >= rows ? x->bucket_sel - rows + 1 : 0;
    x->list_first = first;
    for (int i = 0; i < rows && first + i < r->n; i++) {
        const struct ckpt_plan_bucket *b = &r->b[first + i];
        char range[32], peak[32], ks[512];
        snprintf(range, sizeof range, "%d-%d", b->lo + 1, b->s);
        str_format_bytes(b->peak[CKPT_PLAN_INPUT_AWARE], peak, sizeof peak);
        size_t used = 0;
        ks[0] = '\0';
        for (int j = 0; j < r->stages && used + 8 < sizeof ks; j++)
            used += (size_t)snprintf(ks + used, sizeof ks - used, "%s%d", j ? " " : "", b->k[j]);
        double st = b->step_time[CKPT_PLAN_INPUT_AWARE];
        bool sel = first + i == x->bucket_sel;
        cells_printf(g, 1, top + 2 + i, g->w - 2, PAL_TEXT, PAL_BG, sel ? CELL_REVERSE : 0,
                     "%-11s %8.0f %11s %9.4f %10.2f  %s", range, b->weight, peak, st * 1e-6,
                     st > 0 ? r->samples / (st * 1e-6) * dp_eff : 0, ks);
    }
}
