/* tui/cmd_simulate.c: `mario-tui simulate`: build the plan a config asks for, simulate it,
 * and print a row per device (busy, bubble, peak memory) with the step time and throughput,
 * or the same as one JSON object. Exit 1 when a device is over the memory cap. */
#include <config.h>
#include "tui/cmd.h"
#include "tui/cmd_simulate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "sim/plan/footprint.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"
#include "sim/tune/tune.h"
#include "traces/chrome.h"
#include "util/err.h"
#include "util/str.h"

static const char simulate_usage[] =
    "Usage: mario-tui simulate [CONFIG] [plan flags] [--search [--offload]] [--json]\n"
    "                          [--plan-out FILE] [--trace-out FILE] [--quiet]\n"
    "       mario-tui simulate [CONFIG] [plan flags] --costs [--costs-stage N] [--json]\n"
    "Simulate one training iteration of a pipeline plan (K iterations of an Async or PipeDream\n"
    "plan): per-device busy time, bubbles and peak memory, step time and throughput,\n"
    "utilization over the whole step and over the steady state, and for asynchronous plans\n"
    "each stage's weight staleness and PipeDream's stashed weight versions; beside the step,\n"
    "the lower bound of any schedule of the same work and the gap to it. --search simulates\n"
    "the plan the schedule search makes under the memory cap (optimize --search); with\n"
    "--offload it may also offload forwards to host memory (OF/RL) where that is faster.\n"
    "--scheme S,S[,...] (a list) simulates each scheme on the same config: one row each (step,\n"
    "samples/s, peak, bound, fits), the best marked (highest samples/s that fits; ties: the\n"
    "lower peak); --json: an array. --costs prints, instead, a stage's ops in order (the\n"
    "first, a middle and the last stage, or --costs-stage N): kind, per-rank shape, FLOPs,\n"
    "bytes, time of the forward, B and W, kept bytes and share of the stage's time\n"
    "(docs/cost-model.md).\n\n";

struct simulate_opts {
    bool json, search, offload, quiet, costs;
    int costs_stage; /* --costs-stage N; -1 = the first, a middle and the last */
    const char *plan_out, *trace_out;
};

static const struct cmd_option simulate_options[] = {
    {.name = "search", CMD_TO_BOOL(struct simulate_opts, search),
     .help = "simulate the searched plan: Mario's passes, then the search under the cap"},
    {.name = "offload", CMD_TO_BOOL(struct simulate_opts, offload),
     .help = "with --search: the search may offload forwards to host memory (OF/RL)"},
    {.name = "json", CMD_TO_BOOL(struct simulate_opts, json),
     .help = "print one JSON object instead of the table"},
    {.name = "plan-out", .arg = "FILE", CMD_TO_STRING(struct simulate_opts, plan_out),
     .help = "save the plan (mario-plan JSON)"},
    {.name = "trace-out", .arg = "FILE", CMD_TO_STRING(struct simulate_opts, trace_out),
     .help = "save the simulated timeline as a Chrome trace (Perfetto)"},
    {.name = "costs", CMD_TO_BOOL(struct simulate_opts, costs),
     .help = "print the ops of the first, a middle and the last stage instead: kind, shape,\n"
             "FLOPs, bytes, time (fw, B, W), kept bytes and share of the stage's time"},
    {.name = "costs-stage", .arg = "N", CMD_TO_INT(struct simulate_opts, costs_stage, 0, 1 << 20),
     .help = "only stage N (0 = the first; implies --costs)"},
    {.name = "quiet", .letter = 'q', CMD_TO_BOOL(struct simulate_opts, quiet),
     .help = "no progress on stderr for --search (shown only on a terminal, after 0.2 s)"},
    {0},
};

static int simulate_exec(int argc, char **argv);

const struct cmd_entry cmd_simulate_entry = {
    .name = "simulate",
    .summary = "simulate a plan: per-device time, bubbles, memory",
    .usage = simulate_usage,
    .plan_flags = true,
    .options = simulate_options,
    .footer =
        "Exit status: 0 ok, 1 a device is over the memory cap or a file could not be written,\n"
        "2 bad usage or input.\n",
    .args_max = 1,
    .args = "CONFIG",
    .exec = simulate_exec,
};

/* The plan the search makes from p (the passes' steps its starts), in place of p; its progress
 * on stderr unless quiet (cmd_progress). */
static int simulate_search(struct plan **p, bool offload, bool quiet, struct mt_err *e)
{
    struct pass_pipeline pl;
    struct cmd_progress pr;
    cmd_progress_start(&pr, "simulate", quiet);
    struct pass_watch watch = {cmd_progress_pass, &pr};
    int rc = pass_pipeline_run_watched(*p, &watch, &pl, e);
    if (rc != MT_OK) {
        cmd_progress_end(&pr);
        return rc;
    }
    struct search_opts so;
    search_opts_default(&so, plan_config(*p));
    so.progress = cmd_progress_search;
    so.progress_ctx = &pr;
    so.offload = offload;
    rc = pass_pipeline_search(&pl, &so, e);
    cmd_progress_end(&pr);
    if (rc == MT_OK) {
        plan_free(*p);
        *p = plan_clone(pass_pipeline_final(&pl)->plan);
    }
    pass_pipeline_fini(&pl);
    return rc;
}

/* How simulate makes its plan: as given, searched, or searched with offload allowed. */
enum simulate_mode { SIMULATE_AS_GIVEN, SIMULATE_SEARCH, SIMULATE_SEARCH_OFFLOAD };

/* The plan's figures into *r. An Async config whose figures alone are asked for (no plan or
 * trace to write) is simulated straight from the config (sim_run_direct: the same figures,
 * without building millions of instructions); *p then gets the plan's geometry only, which is
 * all the report reads. Anything else is built (cmd_plan_finish) and simulated. */
static int simulate_plan(const struct cmd_plan *cp, bool figures_only, enum simulate_mode mode,
                         bool quiet, struct plan **p, struct sim_result *r, struct mt_err *e)
{
    struct config c;
    struct plan *loaded = NULL;
    struct plan_geom g;
    *p = NULL;
    TRY(cmd_plan_config(cp, &c, &loaded, e));
    if (figures_only && mode == SIMULATE_AS_GIVEN && loaded == NULL && c.scheme == SCHEME_ASYNC) {
        int rc = sim_run_direct(&c, r, e);
        if (rc == MT_OK && (rc = scheme_geom(&c, &g, e)) != MT_OK)
            sim_result_fini(r);
        if (rc == MT_OK)
            *p = plan_new(&c, &g);
        if (rc != MT_EUNSUPPORTED)
            return rc;
    }
    struct cmd_plan used = *cp; /* --search: the passes and the search's memory */
    used.use = mode != SIMULATE_AS_GIVEN ? FOOTPRINT_SEARCH : FOOTPRINT_SIMULATE;
    TRY(cmd_plan_finish(&used, &c, loaded, p, e));
    if (mode != SIMULATE_AS_GIVEN)
        TRY(simulate_search(p, mode == SIMULATE_SEARCH_OFFLOAD, quiet, e));
    return sim_run(*p, r, e);
}

static enum simulate_mode simulate_mode_of(const struct simulate_opts *o)
{
    return !o->search ? SIMULATE_AS_GIVEN : o->offload ? SIMULATE_SEARCH_OFFLOAD : SIMULATE_SEARCH;
}

/* One scheme's row of `simulate --scheme A,B,...`: a tune_candidate (step, throughput, peak,
 * bound; status OK when it fits, OOM when not, INVALID with why when it could not be made). */
static void simulate_row_run(const struct cmd_plan *cp, enum simulate_mode mode,
                             struct tune_candidate *k, struct config *cfg)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    struct sim_result r;
    if (simulate_plan(cp, true, mode, true, &p, &r, &e) != MT_OK) {
        k->status = TUNE_INVALID;
        snprintf(k->why, sizeof k->why, "%.250s", e.msg);
        plan_free(p);
        return;
    }
    double ts = r.unit ? 1 : 1e-6;
    *cfg = *plan_config(p);
    k->step_time = r.step_time * ts;
    k->throughput = r.throughput;
    k->status = r.oom_device < 0 ? TUNE_OK : TUNE_OOM;
    for (int d = 0; d < r.devices; d++)
        if (r.dev[d].peak_mem > k->peak_mem)
            k->peak_mem = r.dev[d].peak_mem;
    struct bound_result b;
    if (plan_config(p)->scheme != SCHEME_ASYNC && plan_total(p) > 0 &&
        bound_plan(p, &b, &e) == MT_OK)
        k->lower_bound = bound_value(&b, r.oom_device < 0) * ts;
    sim_result_fini(&r);
    plan_free(p);
}

static void simulate_rows_print(const struct config *c, const struct tune_candidate *w, int n,
                                int best)
{
    bool unit = c->unit.enabled;
    char cap[96];
    config_cap_text(c, cap, sizeof cap);
    printf("%s on %d x %s, dp %d, tp %d, global batch %d, cap %s: %d schemes\n", c->model.name,
           c->num_device, unit ? "unit-cost devices" : c->cluster.device.name, c->cluster.dp,
           c->cluster.tp, config_global_batch(c), cap, n);
    printf("%-13s %12s %12s %12s %12s  %s\n", "scheme", unit ? "step (t)" : "step (s)",
           unit ? "samples/t" : "samples/s", "peak mem", unit ? "bound (t)" : "bound (s)", "fits");
    for (int i = 0; i < n; i++) {
        const struct tune_candidate *k = &w[i];
        if (k->status == TUNE_INVALID) {
            printf("%-13s %s\n", config_scheme_name(k->scheme), k->why);
            continue;
        }
        char mem[32], bound[32] = "-";
        if (unit)
            snprintf(mem, sizeof mem, "%.3g M_θ", k->peak_mem);
        else
            str_format_bytes(k->peak_mem, mem, sizeof mem);
        if (k->lower_bound > 0)
            snprintf(bound, sizeof bound, "%.4f", k->lower_bound);
        printf("%-13s %12.4f %12.*f %12s %12s  %-3s%s\n", config_scheme_name(k->scheme),
               k->step_time, unit ? 4 : 2, k->throughput, mem, bound, k->status == TUNE_OK ? "yes" : "no",
               i == best ? "  best" : "");
    }
    if (best >= 0)
        printf("best: %s, %.*f %s\n", config_scheme_name(w[best].scheme), unit ? 4 : 2,
               w[best].throughput,
               unit ? "samples/t" : "samples/s");
    else
        printf("best: none fits the memory cap\n");
}

/* --scheme A,B,...: each scheme on the same config and flags (the list's place among the flags
 * kept), a row each. Exit 0 when one fits, 1 when none does, 2 when none could be simulated. */
static int simulate_schemes(const struct cmd_plan *cp, int at, const struct simulate_opts *o)
{
    struct mt_err e = {0};
    unsigned mask;
    if (tune_schemes_parse(cp->over[at].arg, &mask, &e) != MT_OK)
        return cmd_usage_error("simulate", "--scheme: %s", e.msg);
    if (o->plan_out || o->trace_out)
        return cmd_usage_error("simulate", "%s: one scheme at a time (got the list %s)",
                               o->plan_out ? "--plan-out" : "--trace-out", cp->over[at].arg);
    struct tune_candidate w[SCHEME__COUNT];
    int n = 0, best = -1, simulated = 0;
    struct config c, one_cfg; /* the header's: the first scheme that simulated */
    for (int s = 0; s < SCHEME__COUNT; s++) {
        if (!(mask >> s & 1u))
            continue;
        struct cmd_plan one = *cp;
        one.over[at].arg = config_scheme_name((enum scheme_id)s);
        w[n] = (struct tune_candidate){.scheme = (enum scheme_id)s, .oom_device = -1};
        simulate_row_run(&one, simulate_mode_of(o), &w[n], &one_cfg);
        if (w[n].status != TUNE_INVALID && simulated++ == 0)
            c = one_cfg;
        if (w[n].status == TUNE_OK && (best < 0 || tune_ranks_above(&w[n], &w[best])))
            best = n;
        n++;
    }
    if (o->json) {
        char *text = tune_rows_json(w, n, best);
        puts(text);
        free(text);
    } else if (simulated > 0) {
        simulate_rows_print(&c, w, n, best);
    } else {
        for (int i = 0; i < n; i++)
            fprintf(stderr, "mario-tui simulate: %s: %s\n", config_scheme_name(w[i].scheme),
                    w[i].why);
    }
    return simulated == 0 ? 2 : best < 0 ? 1 : 0;
}

/* --costs: the config's per-stage costs op by op (tui/cmd_costs.c), no simulation */
static int simulate_costs(const struct cmd_plan *cp, const struct simulate_opts *o)
{
    struct mt_err e = {0};
    struct config c;
    struct plan *loaded = NULL;
    if (cmd_plan_config(cp, &c, &loaded, &e) != MT_OK)
        return cmd_fail("simulate", &e);
    plan_free(loaded);
    if (c.unit.enabled) {
        err_set(&e, MT_EINVAL, "--costs: unit costs (--unit-costs) have no ops to list");
        return cmd_fail("simulate", &e);
    }
    struct cost_model m;
    if (scheme_costs(&c, &m, &e) != MT_OK)
        return cmd_fail("simulate", &e);
    int only = o->costs_stage; /* -1: the first, a middle and the last */
    if (only >= m.num_stages) {
        err_set(&e, MT_EINVAL, "--costs-stage: %d but the plan has stages 0-%d", only,
                m.num_stages - 1);
        cost_model_fini(&m);
        return cmd_fail("simulate", &e);
    }
    int rc = cmd_costs_print(&c, &m, only, o->json);
    cost_model_fini(&m);
    return rc;
}

static int simulate_exec(int argc, char **argv)
{
    struct simulate_opts o = {.costs_stage = -1};
    struct cmd_plan cp = {0};
    int first, status = cmd_options_parse(&cmd_simulate_entry, argc, argv, &o, &cp, &first);
    if (status != CMD_OPTIONS_RUN)
        return status;
    if (o.costs || o.costs_stage >= 0)
        return simulate_costs(&cp, &o);
    for (int i = cp.n_over - 1; i >= 0; i--) /* the last --scheme is the one that counts */
        if (cp.over[i].opt == CMD_PLAN_SCHEME) {
            if (strchr(cp.over[i].arg, ','))
                return simulate_schemes(&cp, i, &o);
            break;
        }

    struct mt_err e = {0};
    struct plan *p = NULL;
    struct sim_result r;
    int rc = simulate_plan(&cp, o.plan_out == NULL && o.trace_out == NULL, simulate_mode_of(&o),
                           o.quiet, &p, &r, &e);
    if (rc != MT_OK) {
        plan_free(p);
        return cmd_fail("simulate", &e);
    }
    status = 0;
    /* The bound needs the instructions, which an Async config walked directly does not build:
     * Async reports none either way, so both ways print the same figures. */
    struct bound_result bound, *b = NULL;
    if (plan_config(p)->scheme != SCHEME_ASYNC && plan_total(p) > 0 &&
        bound_plan(p, &bound, &e) == MT_OK)
        b = &bound;
    if (b != NULL && o.search && o.offload) /* schedules that may offload: no forced recompute */
        bound_allow_offload(b);
    if (o.json) {
        char *text = sim_report_json(p, &r, b);
        puts(text);
        free(text);
    } else {
        simulate_print_table(p, &r, b);
    }
    if (r.oom_device >= 0) {
        char over[32], cap[96];
        simulate_mem(&r, r.dev[r.oom_device].peak_mem - r.cap, over, sizeof over);
        config_cap_text(plan_config(p), cap, sizeof cap); /* r.cap, and its reserve */
        fprintf(stderr, "mario-tui simulate: device %d is over the %s memory cap by %s\n",
                r.oom_device, cap, over);
        status = 1;
    }
    if (r.host_oom_device >= 0) {
        char over[32], cap[32];
        simulate_mem(&r, r.dev[r.host_oom_device].host_peak - r.host_cap, over, sizeof over);
        simulate_mem(&r, r.host_cap, cap, sizeof cap);
        fprintf(stderr,
                "mario-tui simulate: device %d's offloaded activations are over its host memory "
                "(host_memory_per_node: %s a GPU) by %s\n",
                r.host_oom_device, cap, over);
        status = 1;
    }
    if (o.plan_out && plan_save(p, o.plan_out, &e) != MT_OK)
        status = cmd_fail("simulate", &e);
    if (o.trace_out && chrome_write_sim(o.trace_out, p, &r, &e) != MT_OK)
        status = cmd_fail("simulate", &e);
    sim_result_fini(&r);
    plan_free(p);
    return status;
}
