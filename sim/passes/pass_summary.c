/* sim/passes/pass_summary.c: a pass pipeline summed up row by row (`mario-tui optimize`: each step's
 * time, throughput, peak memory range and changes) and the paper's lmbs variant (twice the
 * micro-batch size at the same global batch). */
#include <config.h>
#include "sim/passes/pass.h"

#include <stdio.h>

#include "model/config.h"
#include "sim/core/bound.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "util/err.h"

static struct pass_summary pass_summary_of(const char *name, const struct plan *p,
                                           const struct sim_result *r, int changes,
                                           const struct bound_result *b)
{
    struct pass_summary row = {
        .name = name,
        .step_time = r->step_time,
        .throughput = r->throughput,
        .changes = changes,
        .over_cap = r->oom_device >= 0,
        .micro_batch_size = plan_config(p)->micro_batch_size,
        .microbatches = plan_geom(p)->mbs,
    };
    if (b) {
        row.lower_bound = bound_value(b, r->oom_device < 0);
        row.gap_pct = bound_gap_pct(r->step_time, row.lower_bound);
    }
    row.mem_min = r->devices ? r->dev[0].peak_mem : 0;
    for (int d = 0; d < r->devices; d++) {
        double m = r->dev[d].peak_mem;
        row.mem_min = m < row.mem_min ? m : row.mem_min;
        row.mem_max = m > row.mem_max ? m : row.mem_max;
    }
    return row;
}

/* The summary rows of a pipeline; the prepose row counts the changes of every round. */
int pass_summaries(const struct pass_pipeline *pl, const struct bound_result *b,
                   struct pass_summary *rows)
{
    for (int k = 0; k < PASS_ROW__COUNT; k++) {
        const struct pass_step *st = pass_pipeline_row(pl, (enum pass_row)k);
        int changes = st->changes.n;
        if (k == PASS_ROW_PREPOSE) {
            changes = 0;
            for (int i = 0; i < pl->n; i++)
                if (pl->step[i].pass == PASS_PREPOSE)
                    changes += pl->step[i].changes.n;
        }
        rows[k] =
            pass_summary_of(pass_row_name((enum pass_row)k), st->plan, &st->sim, changes, b);
    }
    const struct pass_step *st = pass_pipeline_row(pl, PASS_ROW_SEARCH);
    if (st == NULL)
        return PASS_ROW__COUNT;
    rows[PASS_ROW_SEARCH] = pass_summary_of("search", st->plan, &st->sim, st->changes.n, b);
    return PASS_ROW__COUNT + 1;
}

/* The paper's lmbs: twice the micro-batch size, half the micro-batches, same global batch. */
void pass_lmbs(const struct config *c, struct pass_lmbs *out)
{
    struct config big = *c;
    struct mt_err e = {0};
    int n = config_microbatches(c);
    if (c->unit.enabled) {
        snprintf(out->note, sizeof out->note,
                 "needs the analytic costs: unit costs do not grow with the micro-batch size");
        return;
    }
    if (n % 2 != 0) {
        snprintf(out->note, sizeof out->note,
                 "%d micro-batches cannot be halved at the same global batch", n);
        return;
    }
    big.micro_batch_size = c->micro_batch_size * 2;
    if (big.num_microbatches > 0)
        big.num_microbatches = n / 2;
    struct plan *p = NULL;
    struct pass_pipeline pl;
    if (scheme_build(&big, &p, &e) != MT_OK || pass_pipeline_run(p, &pl, &e) != MT_OK) {
        snprintf(out->note, sizeof out->note, "micro-batch size %d: %.200s", big.micro_batch_size,
                 e.msg);
        plan_free(p);
        return;
    }
    const struct pass_step *f = pass_pipeline_final(&pl);
    out->made = true;
    struct bound_result b;
    bool have_b = bound_plan(f->plan, &b, &e) == MT_OK;
    out->row = pass_summary_of("lmbs", f->plan, &f->sim, 0, have_b ? &b : NULL);
    if (out->row.over_cap)
        snprintf(out->note, sizeof out->note,
                 "micro-batch size %d does not fit the memory cap (device %d)",
                 big.micro_batch_size, f->sim.oom_device);
    pass_pipeline_fini(&pl);
    plan_free(p);
}
