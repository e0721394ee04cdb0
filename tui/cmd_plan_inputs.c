/* tui/cmd_plan_inputs.c: `mario-tui plan-inputs`: input-aware checkpointing (Mimose,
 * arXiv:2209.02478, on Mario's plans; docs/design.md "Input-aware checkpointing", issue 12). Reads
 * the config's sequence lengths (one number, a distribution, or a file; --lengths overrides),
 * plans every length bucket with sim/inputs/ckpt_plan.h, and prints one row per bucket (lengths,
 * layers checkpointed per stage, predicted peak, simulated step time and throughput) and the
 * expected throughput over the lengths beside full checkpointing and one static plan made for
 * the longest batch, or the same as JSON. Exit 2 for bad input (a lengths file that is empty,
 * holds non-numbers or a length beyond the model's positions; a cap no plan meets for the
 * longest batch). */
#include <config.h>
#include "tui/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/seqlen.h"
#include "sim/inputs/ckpt_plan.h"
#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/str.h"

#define PLAN_INPUTS_DEFAULT_BUCKET 64

static const char plan_inputs_usage[] =
    "Usage: mario-tui plan-inputs [CONFIG] [plan flags] [--lengths FILE] [--bucket W] [--exact]\n"
    "                             [--exec-bytes] [--json]\n"
    "Input-aware checkpointing (Mimose on Mario's plans): for each bucket of sequence lengths,\n"
    "the layers each stage checkpoints so that every device fits the memory cap with the least\n"
    "recompute; the expected throughput over the lengths beside full checkpointing and one\n"
    "static plan made for the longest batch.\n\n";

struct plan_inputs_opts {
    const char *lengths;
    int width;
    bool exact, exec_bytes, json;
};

static const struct cmd_option plan_inputs_options[] = {
    {.name = "lengths", .arg = "FILE", CMD_TO_STRING(struct plan_inputs_opts, lengths),
     .help = "per-batch lengths, one whole number of tokens each ('#'\n"
             "comments); default: the config's model.seq_length (a number,\n"
             "{\"values\": [...], \"weights\": [...]} or a file path)"},
    {.name = "bucket", .arg = "W", CMD_TO_INT(struct plan_inputs_opts, width, 1, 1 << 20),
     .help = "plans are cached per W tokens of length (default 64); a\n"
             "batch is planned, and padded, to its bucket's longest length"},
    {.name = "exact", CMD_TO_BOOL(struct plan_inputs_opts, exact),
     .help = "also run the exact search where it is small enough and report\n"
             "how far the greedy planner is from it"},
    {.name = "exec-bytes", CMD_TO_BOOL(struct plan_inputs_opts, exec_bytes),
     .help = "the executor's own bytes (exact, fp32: what `mario-tui run`\n"
             "measures, buffers between instructions aside) in place of the\n"
             "analytic estimate"},
    {.name = "json", CMD_TO_BOOL(struct plan_inputs_opts, json),
     .help = "one JSON object: buckets (seq_length, checkpointed_layers per\n"
             "stage, peak_memory, step_time), expected_throughput, ..."},
    {0},
};

static int plan_inputs_exec(int argc, char **argv);

const struct cmd_entry cmd_plan_inputs_entry = {
    .name = "plan-inputs",
    .summary = "input-aware checkpointing: a plan per length bucket",
    .usage = plan_inputs_usage,
    .plan_flags = true,
    .options = plan_inputs_options,
    .footer =
        "Exit status: 0 ok, 1 failure, 2 bad usage or input (a bad lengths file, a length beyond\n"
        "the model's positions, a cap no plan meets for the longest batch).\n",
    .args_max = 1,
    .args = "CONFIG",
    .exec = plan_inputs_exec,
};

static double plan_inputs_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double plan_inputs_gain(double a, double b)
{
    return b > 0 ? 100 * (a / b - 1) : 0;
}

static void plan_inputs_table(const struct ckpt_plan *cp, const struct ckpt_plan_report *r,
                              const struct seqlen_sample *smp, const char *src, bool exact)
{
    const struct config *c = ckpt_plan_config(cp);
    const struct plan_geom *g = plan_geom(ckpt_plan_template(cp));
    char cap[32];
    str_format_bytes(ckpt_plan_cap(cp), cap, sizeof cap);
    char degrees[64];
    config_degrees_text(c, g->devices, degrees, sizeof degrees);
    printf("%s, %s, %s, %d micro-batches of %d, %s, cap %s  [%s]\n", c->model.name,
           config_scheme_name(c->scheme), degrees, g->mbs, c->micro_batch_size,
           c->cluster.device.name, cap, c->source);
    printf("lengths: %s, %d batches, %d to %d tokens (mean %.1f); buckets of %d tokens\n", src,
           smp->n, smp->min_len, smp->max_len, seqlen_sample_mean(smp), r->width);
    printf("%-11s %8s %12s %10s %10s  %s\n", "tokens", "batches", "peak", "step (s)", "samples/s",
           "layers checkpointed per stage (of");
    printf("%-11s %8s %12s %10s %10s  ", "", "", "", "", "");
    for (int j = 0; j < r->stages; j++)
        printf("%s%d", j ? " " : "", ckpt_plan_stage_layers(cp, j));
    printf(")\n");
    for (int i = 0; i < r->n; i++) {
        const struct ckpt_plan_bucket *b = &r->b[i];
        char range[32], peak[32];
        snprintf(range, sizeof range, "%d-%d", b->lo + 1, b->s);
        str_format_bytes(b->peak[CKPT_PLAN_INPUT_AWARE], peak, sizeof peak);
        double st = b->step_time[CKPT_PLAN_INPUT_AWARE];
        printf("%-11s %8.0f %12s %10.4f %10.2f  ", range, b->weight, peak, st * 1e-6,
               st > 0
                   ? r->samples / (st * 1e-6) * (c->cluster.dp > 1 ? c->cluster.dp_efficiency : 1.0)
                   : 0);
        for (int j = 0; j < r->stages; j++)
            printf("%s%d", j ? " " : "", b->k[j]);
        printf("\n");
    }
    const double *t = r->throughput;
    printf("expected throughput over the lengths (samples/s): input-aware %.2f, full "
           "checkpointing %.2f (%+.2f%%), one static plan for %d tokens %.2f (%+.2f%%)\n",
           t[CKPT_PLAN_INPUT_AWARE], t[CKPT_PLAN_FULL],
           plan_inputs_gain(t[CKPT_PLAN_INPUT_AWARE], t[CKPT_PLAN_FULL]), smp->max_len,
           t[CKPT_PLAN_STATIC], plan_inputs_gain(t[CKPT_PLAN_INPUT_AWARE], t[CKPT_PLAN_STATIC]));
    printf("plan cache (buckets of %d tokens, the lengths in their order): %ld hits, %ld misses, "
           "%ld plan switches; planning per miss %.3f ms mean, %.3f ms max; template and "
           "profile %.1f ms once\n",
           r->width, r->cache.hits, r->cache.misses, r->cache.switches,
           r->cache.misses ? r->cache.plan_ms_total / r->cache.misses : 0, r->cache.plan_ms_max,
           r->setup_ms);
    if (exact)
        printf("greedy vs exact: %d of %d buckets searched exactly; step time gap %.3f%% max, "
               "%.3f%% mean\n",
               r->exact_buckets, r->n, 100 * r->gap_max, 100 * r->gap_mean);
}

/* --exec-bytes: the executor's exact bytes at every length (model/cost.h). */
static void plan_inputs_exec_bytes(int s, struct cost_model *cost, void *ctx)
{
    for (int j = 0; j < cost->num_stages; j++)
        cost_stage_bytes_exec(ctx, s, &cost->stage[j]);
}

static int plan_inputs_exec(int argc, char **argv)
{
    struct plan_inputs_opts o = {.width = PLAN_INPUTS_DEFAULT_BUCKET};
    struct cmd_plan cpf = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_plan_inputs_entry, argc, argv, &o, &cpf, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;

    struct config c;
    if (cmd_plan_config(&cpf, &c, NULL, &e) != MT_OK)
        return cmd_fail("plan-inputs", &e);
    struct seqlen_sample smp;
    char src[300];
    int rc = o.lengths != NULL ? seqlen_config_use_file(&c, o.lengths, &smp, &e)
                               : seqlen_sample_load(&c, &smp, &e);
    if (rc != MT_OK)
        return cmd_fail("plan-inputs", &e);
    if (o.lengths != NULL)
        snprintf(src, sizeof src, "%s", o.lengths);
    else if (c.seqlen.kind == SEQLEN_FILE)
        snprintf(src, sizeof src, "%s", c.seqlen.path);
    else if (c.seqlen.kind == SEQLEN_DIST)
        snprintf(src, sizeof src, "the config's distribution (%d values)", c.seqlen.n);
    else
        snprintf(src, sizeof src, "the config's seq_length");

    struct ckpt_plan *cp = NULL;
    double t0 = plan_inputs_now_ms();
    rc = ckpt_plan_new(&c, smp.max_len, &cp, &e);
    double setup_ms = plan_inputs_now_ms() - t0;
    if (rc == MT_OK && o.exec_bytes)
        ckpt_plan_set_bytes(cp, plan_inputs_exec_bytes, (void *)ckpt_plan_config(cp));
    struct ckpt_plan_report r;
    if (rc == MT_OK)
        rc = ckpt_plan_report_build(cp, &smp, o.width, o.exact, &r, &e);
    if (rc != MT_OK) {
        ckpt_plan_free(cp);
        seqlen_sample_fini(&smp);
        if (cpf.path != NULL) /* the config at fault: name its file (issue 9) */
            err_wrap(&e, "%s", cpf.path);
        return cmd_fail("plan-inputs", &e);
    }
    r.setup_ms = setup_ms;
    if (o.json) {
        char *text = ckpt_plan_report_json(cp, &r, &smp, src, o.exact);
        puts(text);
        free(text);
    } else {
        plan_inputs_table(cp, &r, &smp, src, o.exact);
    }
    ckpt_plan_report_fini(&r);
    ckpt_plan_free(cp);
    seqlen_sample_fini(&smp);
    return 0;
}
