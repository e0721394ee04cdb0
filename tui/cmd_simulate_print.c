/* tui/cmd_simulate_print.c: simulate's table: a row per device (busy, bubble, static,
 * activations, peak), the step time and throughput, the lower bound and its gap, host memory
 * for offload, utilization, and for asynchronous plans staleness and stashed versions. */
#include <config.h>
#include "tui/cmd_simulate.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/core/bound.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "util/str.h"

void simulate_mem(const struct sim_result *r, double v, char *buf, size_t n)
{
    if (r->unit)
        snprintf(buf, n, "%.3g M_θ", v);
    else
        str_format_bytes(v, buf, n);
}

/* Utilization always; for async plans the iterations, the staleness of each stage and the
 * stashed weight versions (PipeDream). */
static void simulate_print_async(const struct plan *p, const struct sim_result *r)
{
    const struct config *c = plan_config(p);
    double ts = r->unit ? 1 : 1e-3;
    char t0[48], t1[48];
    printf("utilization %.1f%%   steady state %.1f%% over [%s, %s] %s\n",
           100 * r->utilization, 100 * r->steady_utilization,
           str_format_number(r->steady_t0 * ts, 4, t0, sizeof t0),
           str_format_number(r->steady_t1 * ts, 4, t1, sizeof t1), r->unit ? "t" : "ms");
    if (r->a2a_hidden != NULL) { /* the experts' lane (sim/core/overlap.h) */
        double hid = 0, exp_ = 0;
        for (int d = 0; d < r->devices; d++)
            hid += r->dev[d].a2a_hidden, exp_ += r->dev[d].a2a_exposed;
        printf("expert all-to-all %s %s hidden in F&B pairs, %s %s exposed (all devices)\n",
               str_format_number(hid * ts, 4, t0, sizeof t0), r->unit ? "t" : "ms",
               str_format_number(exp_ * ts, 4, t1, sizeof t1), r->unit ? "t" : "ms");
    }
    if (!config_scheme_async(c->scheme))
        return;
    printf("%d iterations of %d micro-batches, an optimizer step every %d backward%s per stage\n",
           c->iterations, config_microbatches(c), c->update_interval,
           c->update_interval == 1 ? "" : "s");
    printf("staleness (updates between forward and backward) per stage:");
    for (int s = 0; s < r->stages; s++)
        printf(" %d", r->staleness[s]);
    printf("\n");
    if (c->scheme != SCHEME_PIPEDREAM)
        return;
    printf("stashed weight versions per device (most at once, in the activations column):");
    for (int d = 0; d < r->devices; d++) {
        char b[32];
        simulate_mem(r, r->dev[d].peak_stash, b, sizeof b);
        printf(" %d (%s)", r->dev[d].max_stashed, b);
    }
    printf("\n");
}

/* "host memory (offloaded): 0.5 0.25 ..." per device, for a plan that offloads. */
static void simulate_print_host(const struct sim_result *r)
{
    bool any = false;
    for (int d = 0; d < r->devices; d++)
        any |= r->dev[d].host_peak > 0;
    if (!any)
        return;
    printf("host memory (offloaded, peak per device):");
    for (int d = 0; d < r->devices; d++) {
        char b[32];
        simulate_mem(r, r->dev[d].host_peak, b, sizeof b);
        printf(" %s%s", b, r->host_cap > 0 && r->dev[d].host_peak > r->host_cap ? " OVER" : "");
    }
    printf("\n");
}

/* "lower bound 21 t (gap 4.76%): fill, drain and work of device 3"; at the bound under the
 * cap, "(gap 0.00%, optimal)". */
static void simulate_print_bound(const struct sim_result *r, const struct bound_result *b)
{
    if (b == NULL)
        return;
    bool under = r->oom_device < 0;
    double lb = bound_value(b, under), ts = r->unit ? 1 : 1e-3;
    enum bound_kind k = bound_binding(b, under);
    char lbt[48], rct[48];
    printf("lower bound %s %s (gap %.2f%%%s): ", str_format_number(lb * ts, 4, lbt, sizeof lbt),
           r->unit ? "t" : "ms",
           bound_gap_pct(r->step_time, lb),
           bound_optimal(b, r->step_time, under) ? ", optimal" : "");
    if (k == BOUND_CRITICAL_PATH)
        printf("the critical path\n");
    else if (k == BOUND_DEVICE)
        printf("fill, drain and work of device %d\n", b->device_at);
    else if (b->cap_infeasible)
        printf("device %d cannot hold one stage's activations under the cap\n", b->memory_at);
    else
        printf("recompute forced by the memory cap on device %d (%s %s)\n", b->memory_at,
               str_format_number(b->forced_rc * ts, 4, rct, sizeof rct), r->unit ? "t" : "ms");
}

void simulate_print_table(const struct plan *p, const struct sim_result *r,
                                 const struct bound_result *b)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    char chunks[32] = "";
    if (config_scheme_uses_chunks(c->scheme))
        snprintf(chunks, sizeof chunks, ", %d chunks", g->parts);
    char model[96], degrees[96];
    presets_model_display(&c->model, model, sizeof model);
    config_degrees_text(c, g->devices, degrees, sizeof degrees);
    printf("%s, %s, %s, %d micro-batches of %d x %d tokens, %s%s  [%s]\n", model,
           config_scheme_name(c->scheme), degrees, g->mbs,
           c->micro_batch_size, c->model.seq_length,
           c->unit.enabled     ? "unit costs"
           : c->profile.enabled ? c->profile.device /* calibrated: what it was measured on */
                                : c->cluster.device.name,
           chunks, c->source);
    if (plan_origin(p)[0] != '\0')
        printf("order %s\n", plan_origin(p));
    const char *tu = r->unit ? "t" : "ms";
    double ts = r->unit ? 1 : 1e-3;
    printf("%6s %12s %12s %8s %14s %14s %14s\n", "device", r->unit ? "busy (t)" : "busy (ms)",
           r->unit ? "bubble (t)" : "bubble (ms)", "bubble", "static", "activations", "peak");
    for (int d = 0; d < r->devices; d++) {
        const struct sim_device *dv = &r->dev[d];
        char st[32], dyn[32], pk[32];
        simulate_mem(r, dv->static_mem, st, sizeof st);
        simulate_mem(r, dv->peak_dynamic, dyn, sizeof dyn);
        simulate_mem(r, dv->peak_mem, pk, sizeof pk);
        printf("%6d %12.3f %12.3f %7.1f%% %14s %14s %14s%s\n", d, dv->busy * ts, dv->bubble * ts,
               r->step_time > 0 ? 100 * dv->bubble / r->step_time : 0, st, dyn, pk,
               r->cap > 0 && dv->peak_mem > r->cap ? "  OVER CAP" : "");
    }
    simulate_print_host(r);
    if (r->unit)
    {
        char st[48];
        printf("step time %s t   throughput %.4f samples/t\n",
               str_format_number(r->step_time, 4, st, sizeof st), r->throughput);
    }
    else
        printf("step time %.4f s (%.3f %s)   throughput %.2f samples/s\n", r->step_time * 1e-6,
               r->step_time * ts, tu, r->throughput);
    simulate_print_bound(r, b);
    simulate_print_async(p, r);
}
