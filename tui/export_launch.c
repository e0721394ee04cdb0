/* tui/export_launch.c: `export --format megatron|torchtitan` and `tune --emit`'s writer
 * (tui/export_launch.h). The flags or TOML come from model/launch_write.c; here the plan's
 * checkpointing is matched to what the frameworks take: none, or Megatron-LM's full recompute
 * (--recompute-granularity full, every stage recomputed right before its backward) and
 * torchtitan's mode "full", which is Mario's apply-checkpoint step (pass 1). Mario's later
 * passes (an RC moved before its gradient arrives, the last micro-batch kept, forwards moved
 * ahead) and the search's orders have no flag: refused with the nearest and both steps. */
#include <config.h>
#include "tui/export_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/tune/tune.h"
#include "tui/cmd.h"
#include "util/err.h"
#include "util/str.h"

/* The simulated step of config c's own plan (after apply-checkpoint when ckpt), in ms; < 0
 * when it cannot be built. */
static double export_launch_step_ms(const struct config *c, bool ckpt)
{
    struct plan *p = NULL;
    struct mt_err e = {0};
    double ms = -1;
    if (scheme_build(c, &p, &e) != MT_OK)
        return -1;
    if (ckpt) {
        struct pass_pipeline pl;
        if (pass_pipeline_run(p, &pl, &e) == MT_OK) {
            const struct pass_step *st = pass_pipeline_row(&pl, PASS_ROW_CKPT);
            if (st != NULL)
                ms = st->sim.step_time / 1e3;
            pass_pipeline_fini(&pl);
        }
    } else {
        struct sim_result r;
        if (sim_run(p, &r, &e) == MT_OK) {
            ms = r.step_time / 1e3;
            sim_result_fini(&r);
        }
    }
    plan_free(p);
    return ms;
}

static double export_launch_plan_ms(const struct plan *p)
{
    struct sim_result r;
    struct mt_err e = {0};
    if (sim_run(p, &r, &e) != MT_OK)
        return -1;
    double ms = r.step_time / 1e3;
    sim_result_fini(&r);
    return ms;
}

static bool export_launch_has(const struct plan *p, bool ckpt)
{
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            enum op op = plan_at(p, d, i)->op;
            if (ckpt ? op == OP_CFW || op == OP_RC : plan_op_is_copy(op))
                return true;
        }
    return false;
}

/* "X.csv" beside "X.toml" (or beside X) */
static void export_launch_csv_path(const char *out, char *path, size_t n)
{
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(out, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : strlen(out);
    snprintf(path, n, "%.*s.schedule.csv", (int)stem, out);
}

/* The schedule CSV torchtitan's pipeline_parallel_schedule_csv names: torch's _load_csv reads
 * it as "compute_only", refusing FSDP's actions, and adds its own (UNSHARD, RESHARD,
 * REDUCE_GRAD) as it lowers the schedule, so none are written. */
static int export_launch_schedule_csv(const struct plan *p, const char *path, struct mt_err *e)
{
    struct plan_csv_opts o = {.compute_only = true};
    char *csv = plan_to_torch_csv_opts(p, &o, e);
    if (csv == NULL)
        return err_wrap(e, "%s", path);
    int rc = str_write_file_atomic(path, csv, strlen(csv), e);
    free(csv);
    return rc;
}

int export_launch_plan(const char *cmd, enum launch_kind k, const struct plan *p,
                       enum launch_recompute rc, const char *out)
{
    const struct config *c = plan_config(p);
    struct mt_err e = {0};
    struct config nearest;
    if (export_launch_has(p, false)) {
        fprintf(stderr,
                "mario-tui %s: %s has no flag for offloading activations to host memory "
                "(OF/RL): the nearest it runs is the plan without offload\n",
                cmd, launch_kind_title(k));
        return 1;
    }
    if (launch_expressible(k, c, &nearest, &e) != MT_OK) {
        double mine = export_launch_plan_ms(p);
        double near = memcmp(&nearest, c, sizeof nearest) != 0
                          ? export_launch_step_ms(&nearest, rc == LAUNCH_RECOMPUTE_FULL)
                          : -1;
        fprintf(stderr, "mario-tui %s: %s", cmd, e.msg);
        if (near > 0 && mine > 0)
            fprintf(stderr, " (simulated step %.2f ms, the plan's %.2f ms)", near, mine);
        fprintf(stderr, "\n");
        return 1;
    }
    bool to_stdout = out == NULL || strcmp(out, "-") == 0;
    char csv_path[1024] = "", csv_name[1024] = "";
    struct launch_write_opts wo = {.recompute = rc, .source = c->source[0] ? c->source : NULL};
    if (launch_needs_csv(k, c)) {
        if (to_stdout) {
            fprintf(stderr,
                    "mario-tui %s: torchtitan takes %s only as a schedule CSV beside the TOML: "
                    "give -o FILE.toml\n",
                    cmd, config_scheme_name(c->scheme));
            return 2;
        }
        export_launch_csv_path(out, csv_path, sizeof csv_path);
        const char *slash = strrchr(csv_path, '/');
        snprintf(csv_name, sizeof csv_name, "%s", slash ? slash + 1 : csv_path);
        wo.csv_name = csv_name;
        if (export_launch_schedule_csv(p, csv_path, &e) != MT_OK)
            return cmd_fail(cmd, &e) == 2 ? 2 : 1;
    }
    char *text = NULL;
    if (launch_write(k, c, &wo, &text, &e) != MT_OK)
        return cmd_fail(cmd, &e);
    int status = 0;
    if (to_stdout) {
        fputs(text, stdout);
    } else if (str_write_file_atomic(out, text, strlen(text), &e) != MT_OK) {
        cmd_fail(cmd, &e);
        status = 1;
    } else {
        printf("wrote %s (%s %s)\n", out, launch_kind_title(k),
               k == LAUNCH_MEGATRON ? "launch script" : "job TOML");
        if (csv_path[0])
            printf("wrote %s (torch schedule CSV: pipeline_parallel_schedule_csv)\n", csv_path);
    }
    free(text);
    return status;
}

/* The largest peak memory over the devices of plan p, bytes; < 0 when it does not simulate. */
static double export_launch_peak(const struct plan *p)
{
    struct sim_result r;
    struct mt_err e = {0};
    if (sim_run(p, &r, &e) != MT_OK)
        return -1;
    double peak = 0;
    for (int d = 0; d < r.devices; d++)
        if (r.dev[d].peak_mem > peak)
            peak = r.dev[d].peak_mem;
    sim_result_fini(&r);
    return peak;
}

/* A checkpointed plan as torch's schedule CSV: the grammar has no recompute, so the order is
 * written with each CFW as F and no RC, to run under the framework's activation checkpointing,
 * whose settings are said with how they differ from the planned recomputes and both simulated
 * steps (the framework's plan: sim/passes/pass_checkpoint.c, pass_framework_ac). */
static int export_launch_ckpt_csv(const struct plan *p, const char *path, struct mt_err *e)
{
    struct plan_csv_opts o = {.checkpoints_as_ac = true};
    char *csv = plan_to_torch_csv_opts(p, &o, e);
    if (csv == NULL)
        return e->code;
    int rc = str_write_file_atomic(path, csv, strlen(csv), e);
    free(csv);
    TRY(rc);
    struct plan *fw = NULL;
    struct pass_framework_ac r;
    TRY(pass_framework_ac(p, &fw, &r, e));
    double mine = export_launch_plan_ms(p), theirs = export_launch_plan_ms(fw);
    double peak_mine = export_launch_peak(p), peak_theirs = export_launch_peak(fw);
    plan_free(fw);
    const struct config *c = plan_config(p);
    int stages = config_pp(c) * config_stages_per_device(c);
    int per_stage = stages > 0 ? c->model.num_layers / stages : 0;
    int k = r.ckpt_layers > 0 && r.ckpt_layers < per_stage ? r.ckpt_layers : 0;
    printf("wrote %s (torch schedule CSV): torch's actions have no recompute, so each "
           "checkpointed forward is written as F and the recomputes are left to the "
           "framework's activation checkpointing:\n", path);
    if (k == 0)
        printf("  torchtitan  [activation_checkpoint] mode = \"full\"\n"
               "  Megatron-LM --recompute-granularity full --recompute-method uniform "
               "--recompute-num-layers %d\n", per_stage > 0 ? per_stage : 1);
    else
        printf("  torchtitan  [activation_checkpoint] mode = \"selective\", "
               "selective_ac_option = \"%d\"%s\n"
               "  Megatron-LM --recompute-granularity full --recompute-method block "
               "--recompute-num-layers %d\n",
               per_stage % k == 0 ? per_stage / k : 1,
               per_stage % k == 0 ? "" : " (no exact setting: every layer)", k);
    printf("  the difference: the framework checkpoints every forward (%d here kept whole by the "
           "plan%s) and recomputes each right before its backward (%d of the plan's %d "
           "recomputes run earlier)\n",
           r.forwards_kept, r.mixed ? "; its checkpoints of several layer counts as whole stages"
                                    : "",
           r.recomputes_moved, r.recomputes);
    if (c->unit.enabled) /* unit costs: times in t, memory in M_theta (docs/design.md) */
        printf("  simulated step: the framework's %.4g t, the plan's %.4g t; peak memory %.4g "
               "and %.4g\n",
               theirs * 1e3, mine * 1e3, peak_theirs, peak_mine);
    else
        printf("  simulated step: the framework's %.2f ms, the plan's %.2f ms; peak memory "
               "%.2f GiB and %.2f GiB\n",
               theirs, mine, peak_theirs / (1024.0 * 1024 * 1024),
               peak_mine / (1024.0 * 1024 * 1024));
    return MT_OK;
}

int export_launch_plan_file(const struct plan *p, const char *path, bool *said, struct mt_err *e)
{
    *said = false;
    if (!plan_path_is_csv(path) || !export_launch_has(p, true))
        return plan_save(p, path, e);
    *said = true;
    return export_launch_ckpt_csv(p, path, e);
}

/* What the passes after apply-checkpoint do that no framework flag says. */
static const char *export_launch_pass_gap(int row)
{
    switch (row) {
    case PASS_ROW_OVERLAP:
        return "a recompute placed before its gradient arrives (overlap-recompute)";
    case PASS_ROW_REDUNDANCY:
        return "the last micro-batch's activations kept, its recompute removed "
               "(remove-redundancy)";
    case PASS_ROW_PREPOSE:
        return "forwards moved ahead into the bubbles (prepose-forward)";
    default:
        return "an order of the schedule search";
    }
}

int export_launch(enum launch_kind k, const struct cmd_plan *cp, bool passes,
                  const bool rows[PASS_ROW__COUNT], bool search, const char *out)
{
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (cmd_plan_build(cp, &p, &e) != MT_OK)
        return cmd_fail("export", &e);
    int status;
    if (!passes && !search && !export_launch_has(p, true)) {
        status = export_launch_plan("export", k, p, LAUNCH_RECOMPUTE_NONE, out);
        plan_free(p);
        return status;
    }
    int row = PASS_ROW_BASE;
    for (int r = 0; passes && r < PASS_ROW__COUNT; r++)
        if (rows[r])
            row = r;
    if (search)
        row = PASS_ROW_SEARCH;
    if (!passes && !search)
        row = -1; /* a loaded plan with its own checkpointing */
    struct pass_pipeline pl;
    bool have_pl = false;
    if (row != PASS_ROW_BASE) {
        if (pass_pipeline_run(p, &pl, &e) != MT_OK) {
            plan_free(p);
            return cmd_fail("export", &e);
        }
        have_pl = true;
        struct search_opts so;
        search_opts_default(&so, plan_config(p)); /* as simulate --search */
        if (row == PASS_ROW_SEARCH && pass_pipeline_search(&pl, &so, &e) != MT_OK) {
            pass_pipeline_fini(&pl);
            plan_free(p);
            return cmd_fail("export", &e);
        }
    }
    if (row == PASS_ROW_BASE) {
        status = export_launch_plan("export", k, p, LAUNCH_RECOMPUTE_NONE, out);
    } else if (row == PASS_ROW_CKPT) {
        status = export_launch_plan("export", k, pass_pipeline_row(&pl, PASS_ROW_CKPT)->plan,
                                    LAUNCH_RECOMPUTE_FULL, out);
    } else {
        const struct pass_step *ck = pass_pipeline_row(&pl, PASS_ROW_CKPT);
        double mine = export_launch_plan_ms(p);
        const char *gap = row < 0 ? "checkpoints and recomputes placed by a pass or the search"
                                  : export_launch_pass_gap(row);
        if (row >= 0) {
            const struct pass_step *st = pass_pipeline_row(&pl, (enum pass_row)row);
            if (st != NULL)
                mine = st->sim.step_time / 1e3;
        }
        fprintf(stderr,
                "mario-tui export: %s cannot run this plan: it recomputes each stage right "
                "before its backward (%s) and has no flag for %s; the nearest it runs is the "
                "plan after apply-checkpoint (%s), simulated step %.2f ms (this plan's %.2f "
                "ms): give --passes 1\n",
                launch_kind_title(k), k == LAUNCH_MEGATRON ? "--recompute-granularity full"
                                                           : "activation_checkpoint.mode full",
                gap,
                k == LAUNCH_MEGATRON ? "--recompute-granularity full --recompute-method uniform"
                                     : "mode = \"full\"",
                ck ? ck->sim.step_time / 1e3 : -1.0, mine);
        status = 1;
    }
    if (have_pl)
        pass_pipeline_fini(&pl);
    plan_free(p);
    return status;
}

int export_launch_tune(enum launch_kind k, const struct config *base, const struct tune_result *r,
                       const struct tune_opts *o, const char *out)
{
    int *order = calloc((size_t)r->n + 1, sizeof *order);
    if (order == NULL)
        return 1;
    tune_rank(r, order);
    int pick = -1;
    char why[MT_ERR_MSG_MAX] = "";
    for (int i = 0; i < r->n && pick < 0; i++) {
        const struct tune_candidate *kc = &r->cand[order[i]];
        if (kc->status != TUNE_OK)
            continue;
        struct config cc;
        struct mt_err e = {0};
        tune_candidate_config(base, kc, &cc);
        if (kc->ckpt) {
            if (why[0] == '\0')
                snprintf(why, sizeof why,
                         "%s has no flag for %s's recomputes (placed by %s)",
                         launch_kind_title(k), kc->search ? "the search" : "Mario",
                         kc->search ? "the schedule search" : "its passes");
            continue;
        }
        if (launch_expressible(k, &cc, NULL, &e) != MT_OK) {
            if (why[0] == '\0')
                snprintf(why, sizeof why, "%s", e.msg);
            continue;
        }
        pick = order[i];
    }
    free(order);
    if (pick < 0) {
        fprintf(stderr, "mario-tui tune: --emit %s: no candidate that fits is one %s runs: %s\n",
                launch_kind_name(k), launch_kind_title(k), why[0] ? why : "none fits");
        return 1;
    }
    const struct tune_candidate *kc = &r->cand[pick];
    if (r->best >= 0 && pick != r->best) {
        char best[48], mine[48];
        tune_label(&r->cand[r->best], best, sizeof best);
        tune_label(kc, mine, sizeof mine);
        fprintf(stderr,
                "mario-tui tune: --emit %s: the best plan, %s%s (%.2f samples/s), is not one %s "
                "runs (%s); emitting the best it runs: %s (%.2f samples/s)\n",
                launch_kind_name(k), best, r->cand[r->best].ckpt ? " +ckpt" : "",
                r->cand[r->best].throughput, launch_kind_title(k), why, mine, kc->throughput);
    }
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (tune_build_plan(base, kc, o, &p, &e) != MT_OK)
        return cmd_fail("tune", &e);
    int status = export_launch_plan("tune", k, p, LAUNCH_RECOMPUTE_NONE, out);
    plan_free(p);
    return status;
}
