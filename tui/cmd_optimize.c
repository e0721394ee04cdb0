/* tui/cmd_optimize.c: `mario-tui optimize`: Mario's four passes (paper §5.1) on the plan a
 * config asks for, one row per step of the pipeline: base (no checkpointing), ckpt (pass 1),
 * overlap (+ pass 2), redundancy (+ pass 3), prepose (+ pass 4, with passes 2-4 repeated while
 * they shorten the step), and with --lmbs the paper's "larger micro-batch" (§6: twice the
 * micro-batch size at the same global batch, optimized the same way). Each row: step time,
 * throughput, speed against base, per-device peak memory (min, max). Exit 1 when the
 * optimized plan is over the memory cap. */
#include <config.h>
#include "tui/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/footprint.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/str.h"

static const char optimize_usage[] =
    "Usage: mario-tui optimize [CONFIG] [plan flags] [--search [--search-budget N] [--exact[=N]]\n"
    "                          [--offload]] [--lmbs] [--json] [--plan-out FILE] [--quiet]\n"
    "Apply Mario's four graph passes (PPoPP'25 §5.1) to a pipeline plan and show each step:\n"
    "  base        the scheme as given, no checkpointing\n"
    "  ckpt        pass 1, apply-checkpoint: every forward checkpointed, RC before each BW\n"
    "  overlap     + pass 2, overlap-recompute: RC moved before the RG of its micro-batch\n"
    "  redundancy  + pass 3, remove-redundancy: no checkpoint where CFW meets its BW\n"
    "  prepose     + pass 4, prepose-forward: CFW moved into earlier bubbles; passes 2-4\n"
    "              repeat while the step time improves. This is the optimized plan.\n"
    "  search      (--search) the schedule search under the memory cap (--memory; M_theta\n"
    "              under --unit-costs): which forwards to checkpoint and each device's order,\n"
    "              from every step above; never slower than the best of them under the cap;\n"
    "              with --offload a checkpointed forward may be offloaded to host memory\n"
    "              instead (OF after it, RL before its backward) where that is faster\n"
    "  lmbs        (--lmbs) the optimized plan with twice the micro-batch size and half the\n"
    "              micro-batches (same global batch), if the memory cap allows\n"
    "Each row's gap is its step over the lower bound of any schedule of the same work.\n"
    "\n";

struct optimize_opts {
    bool json, search, offload, quiet;
    int search_budget, exact;
    const char *plan_out;
    struct pass_lmbs lm;
};

static const struct cmd_option optimize_options[] = {
    {.name = "search", CMD_TO_BOOL(struct optimize_opts, search),
     .help = "add the search step: the schedule search under the memory cap"},
    {.name = "search-budget", .arg = "N",
     CMD_TO_INT(struct optimize_opts, search_budget, 1, 100000000),
     .help = "schedules the search evaluates (default: by the plan's size)"},
    {.name = "offload", CMD_TO_BOOL(struct optimize_opts, offload),
     .help = "with --search: offload forwards to host memory where faster (OF/RL)"},
    {.name = "exact", .arg = "N", .optional = true, .dflt = 2000000,
     CMD_TO_INT(struct optimize_opts, exact, 1, 2000000000),
     .help = "with --search: branch and bound for the optimum (small cases), at most N\n"
             "nodes (default 2,000,000); says how far the search is from it"},
    {.name = "lmbs", CMD_TO_BOOL(struct optimize_opts, lm.asked),
     .help = "add the larger-micro-batch row"},
    {.name = "json", CMD_TO_BOOL(struct optimize_opts, json),
     .help = "print one JSON object instead of the table"},
    {.name = "plan-out", .arg = "FILE", CMD_TO_STRING(struct optimize_opts, plan_out),
     .help = "save the optimized plan (mario-plan JSON)"},
    {.name = "quiet", .letter = 'q', CMD_TO_BOOL(struct optimize_opts, quiet),
     .help = "no progress on stderr (shown only on a terminal, for runs over 0.2 s)"},
    {0},
};

static int optimize_exec(int argc, char **argv);

const struct cmd_entry cmd_optimize_entry = {
    .name = "optimize",
    .summary = "Mario's four passes and the search, step by step: time, memory, bound",
    .usage = optimize_usage,
    .plan_flags = true,
    .options = optimize_options,
    .footer =
        "Exit status: 0 ok, 1 the optimized plan is over the memory cap or a file could not be\n"
        "written, 2 bad usage or input.\n",
    .args_max = 1,
    .args = "CONFIG",
    .exec = optimize_exec,
};

static void optimize_mem(bool unit, double v, char *buf, size_t n)
{
    if (unit)
        snprintf(buf, n, "%.4g M_θ", v);
    else
        str_format_bytes(v, buf, n);
}

/* printf pads by bytes: widen the field by the UTF-8 continuation bytes of s (the θ). */
static int optimize_width(const char *s, int cols)
{
    for (; *s; s++)
        cols += ((unsigned char)*s & 0xC0) == 0x80;
    return cols;
}

static void optimize_print_row(const struct pass_summary *row, const struct pass_summary *base,
                               bool unit)
{
    char lo[32], hi[32];
    optimize_mem(unit, row->mem_min, lo, sizeof lo);
    optimize_mem(unit, row->mem_max, hi, sizeof hi);
    char gap[16] = "-";
    if (row->lower_bound > 0)
        snprintf(gap, sizeof gap, "%.1f%%", row->gap_pct);
    printf("%-11s %12.3f %12.*f %8.3fx %*s %*s %8d %7s%s\n", row->name,
           unit ? row->step_time : row->step_time * 1e-3, unit ? 4 : 2, row->throughput,
           base->throughput > 0 ? row->throughput / base->throughput : 0, optimize_width(lo, 12),
           lo, optimize_width(hi, 12), hi, row->changes, gap, row->over_cap ? "  OVER CAP" : "");
}

static void optimize_print_table(const struct plan *p, const struct pass_pipeline *pl,
                                 const struct pass_summary *rows, const struct pass_lmbs *lm,
                                 const struct bound_result *b)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    bool unit = c->unit.enabled;
    char model[96], degrees[64];
    presets_model_display(&c->model, model, sizeof model);
    config_degrees_text(c, g->devices, degrees, sizeof degrees);
    printf("%s, %s, %s, %d micro-batches of %d x %d tokens, %s  [%s]\n", model,
           config_scheme_name(c->scheme), degrees, g->mbs, c->micro_batch_size,
           c->model.seq_length, unit ? "unit costs" : c->cluster.device.name, c->source);
    printf("%-11s %12s %12s %9s %12s %12s %8s %7s\n", "step", unit ? "step (t)" : "step (ms)",
           unit ? "samples/t" : "samples/s", "vs base", "peak min", "peak max", "changes", "gap");
    int n_rows = PASS_ROW__COUNT + (pass_pipeline_row(pl, PASS_ROW_SEARCH) != NULL);
    for (int k = 0; k < n_rows; k++)
        optimize_print_row(&rows[k], &rows[0], unit);
    if (lm->made)
        optimize_print_row(&lm->row, &rows[0], unit);
    int rounds = 0;
    for (int i = 0; i < pl->n; i++)
        rounds += pl->step[i].pass == PASS_PREPOSE;
    printf("passes 2-4 ran %d round%s", rounds, rounds == 1 ? "" : "s");
    if (pl->searched) {
        const struct search_stats *st = &pl->search;
        printf("; search: %s, from %s (%ld schedules evaluated)",
               !st->fits ? "nothing fits the cap" : st->improved ? "faster" : "no faster schedule",
               st->seed_name, st->evals);
        if (pl->offloaded > 0)
            printf("; %d forward%s offloaded to host memory (OF/RL)", pl->offloaded,
                   pl->offloaded == 1 ? "" : "s");
    }
    if (c->memory_per_device > 0) {
        char cap[96];
        config_cap_text(c, cap, sizeof cap);
        printf("; memory cap %s per device", cap);
    }
    printf("\n");
    if (b) {
        double ts = unit ? 1 : 1e-3;
        const char *tu = unit ? "t" : "ms";
        char bt[48], cpt[48], dt[48], mt[48], rt[48];
        printf("lower bound %s %s for any schedule of this work (critical path %s, device "
               "%d %s)", str_format_number(b->time * ts, 4, bt, sizeof bt), tu,
               str_format_number(b->critical_path * ts, 4, cpt, sizeof cpt), b->device_at,
               str_format_number(b->device * ts, 4, dt, sizeof dt));
        if (b->cap_infeasible)
            printf("; no schedule fits the cap (device %d)", b->memory_at);
        else if (b->memory > 0)
            printf(", %s %s under the cap (device %d recomputes >= %s %s)",
                   str_format_number(b->memory * ts, 4, mt, sizeof mt), tu, b->memory_at,
                   str_format_number(b->forced_rc * ts, 4, rt, sizeof rt), tu);
        const struct pass_step *fin = pass_pipeline_final(pl);
        if (bound_optimal(b, fin->sim.step_time, fin->sim.oom_device < 0))
            printf("; the %s plan is optimal", fin->name);
        printf("\n");
    }
    if (lm->asked && lm->note[0])
        printf("lmbs: %s\n", lm->note);
}

/* "exact: the optimum is 36 t, the search 2.78% above it (2705460 nodes)". */
static void optimize_print_exact(const struct pass_pipeline *pl,
                                 const struct search_exact_result *xr, bool unit)
{
    double step = pass_pipeline_final(pl)->sim.step_time, ts = unit ? 1 : 1e-3;
    const char *tu = unit ? "t" : "ms";
    char bt[48];
    str_format_number(xr->best * ts, 6, bt, sizeof bt);
    if (!xr->finished && xr->found)
        printf("exact: stopped after %ld nodes; the best it found: %s %s\n", xr->nodes, bt, tu);
    else if (!xr->finished)
        printf("exact: stopped after %ld nodes, nothing faster than the search found\n",
               xr->nodes);
    else if (xr->best > 0)
        printf("exact: the optimum is %s %s, the search %.2f%% above it (%ld nodes)\n", bt, tu, 100 * (step - xr->best) / xr->best, xr->nodes);
    else
        printf("exact: no schedule fits the cap (%ld nodes)\n", xr->nodes);
}

static int optimize_exec(int argc, char **argv)
{
    struct optimize_opts o = {0};
    struct cmd_plan cp = {0};
    int first, st = cmd_options_parse(&cmd_optimize_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;

    struct mt_err e = {0};
    struct plan *p = NULL;
    struct pass_pipeline pl;
    cp.use = o.search ? FOOTPRINT_SEARCH : FOOTPRINT_PASSES;
    if (cmd_plan_build(&cp, &p, &e) != MT_OK)
        return cmd_fail("optimize", &e);
    struct cmd_progress pr;
    cmd_progress_start(&pr, "optimize", o.quiet);
    struct pass_watch watch = {cmd_progress_pass, &pr};
    int rc = pass_pipeline_run_watched(p, &watch, &pl, &e);
    if (rc == MT_OK && o.search) {
        struct search_opts so;
        search_opts_default(&so, plan_config(p));
        so.budget = o.search_budget;
        so.progress = cmd_progress_search;
        so.progress_ctx = &pr;
        so.offload = o.offload;
        if ((rc = pass_pipeline_search(&pl, &so, &e)) != MT_OK)
            pass_pipeline_fini(&pl);
    }
    cmd_progress_end(&pr);
    if (rc != MT_OK) {
        plan_free(p);
        return cmd_fail("optimize", &e);
    }
    struct bound_result bound, *b = NULL;
    if (bound_plan(p, &bound, &e) == MT_OK)
        b = &bound;
    if (b != NULL && o.search && o.offload) /* schedules that may offload: no forced recompute */
        bound_allow_offload(b);
    struct search_exact_result xr = {0};
    if (o.exact > 0 && pl.searched) {
        struct search_opts so;
        search_opts_default(&so, plan_config(p));
        so.budget = o.exact;
        const struct pass_step *fin = pass_pipeline_final(&pl);
        double ub = pl.search.fits ? fin->sim.step_time : 0;
        if (search_exact(p, &so, ub, NULL, &xr, &e) != MT_OK) {
            pass_pipeline_fini(&pl);
            plan_free(p);
            return cmd_fail("optimize", &e);
        }
        if (!xr.found && xr.finished) /* nothing faster than the search: it is the optimum */
            xr.best = ub;
    }
    struct pass_summary rows[PASS_ROW__COUNT + 1];
    pass_summaries(&pl, b, rows);
    if (o.lm.asked)
        pass_lmbs(plan_config(p), &o.lm);
    if (o.json) {
        char *text = pass_report_json(p, &pl, rows, &o.lm, b, o.exact > 0 && pl.searched ? &xr
                                                                                      : NULL);
        puts(text);
        free(text);
    } else {
        optimize_print_table(p, &pl, rows, &o.lm, b);
        if (o.exact > 0 && pl.searched)
            optimize_print_exact(&pl, &xr, plan_config(p)->unit.enabled);
    }
    int status = 0;
    const struct pass_step *fin = pass_pipeline_final(&pl);
    if (fin->sim.oom_device >= 0) {
        char over[32], cap[32];
        optimize_mem(fin->sim.unit, fin->sim.dev[fin->sim.oom_device].peak_mem - fin->sim.cap,
                     over, sizeof over);
        optimize_mem(fin->sim.unit, fin->sim.cap, cap, sizeof cap);
        fprintf(stderr,
                "mario-tui optimize: the optimized plan is over the %s memory cap by %s on "
                "device %d\n",
                cap, over, fin->sim.oom_device);
        status = 1;
    }
    if (o.plan_out && plan_save(fin->plan, o.plan_out, &e) != MT_OK)
        status = cmd_fail("optimize", &e);
    pass_pipeline_fini(&pl);
    plan_free(p);
    return status;
}
