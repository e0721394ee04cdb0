/* tui/cmd_tune.c: `mario-tui tune`: the schedule tuner (§5.3) from the command line: a
 * ranked table of the feasible candidates, why each infeasible one fails, the Pareto front
 * of throughput against peak memory, and the best plan saved on request. */
#include <config.h>
#include "tui/cmd.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/footprint.h"
#include "sim/plan/plan.h"
#include "sim/tune/tune.h"
#include "tui/export_launch.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* The usage text, its scheme list from the scheme table (filled before main runs, so every
 * way to --help prints it). */
static char tune_usage[4096];

__attribute__((constructor)) static void tune_usage_fill(void)
{
    char schemes[256];
    tune_scheme_names(schemes, sizeof schemes);
    snprintf(
        tune_usage, sizeof tune_usage,
        "Usage: mario-tui tune [CONFIG] [plan flags] [--top K] [--json] [--plan-out FILE]\n"
        "                      [--min-pp N] [--max-mbs B] [--max-chunks V] [--max-cp N] [--max-ep E]\n"
        "                      [--threads N]\n"
        "                      [--ckpt-only] [--search [--offload]] [--search-split]\n"
        "                      [--no-sequence-parallel] [--no-distributed-optimizer]\n"
        "Grid search (paper §5.3, Equation 1) over checkpointing (off; 'mario', Mario's four\n"
        "passes; with --search 'search', the schedule search under the cap), the scheme, tp in\n"
        "1, 2, 4, 8 dividing cluster.gpus_per_node and the GPUs (--tp T: T only), pp over the\n"
        "divisors of D / tp (--devices D counts GPUs: pp x dp x tp), the micro-batch size (1, 2,\n"
        "4, ... dividing global / dp), W's chunks, sequence parallelism where tp > 1 and the\n"
        "distributed optimizer where dp > 1 (off and on; labels end -sp, -do when on), and for\n"
        "a mixture of experts ep over the divisors of the experts and etp over tp's divisors\n"
        "whose ep x etp divides the stage's tp x cp x dp GPUs (labels -eE, and -etT where etp\n"
        "is not tp), each simulated. A plan flag pins its dimension: --pp, --dp, --tp, --ep,\n"
        "--etp, --micro-batch-size, --chunks keep that value only (--pp with --dp and --tp and no --devices: pp x dp x tp\n"
        "GPUs), --sequence-parallel and --distributed-optimizer keep them on, the --no-\n"
        "options below keep them off. A candidate over the memory\n"
        "cap (--memory) scores 0. Labels are scheme-pp-mbs as in the paper's Figure 11, -tT after\n"
        "them when tp > 1 (V-8-2-t2). Throughput ties go to the lower peak. iter is the time of\n"
        "one iteration of the global batch over all dp replicas (global / samples/s), so it\n"
        "compares across dp. With --search, the searches run best bound first, and one whose\n"
        "lower bound (sim/core/bound.h, under the cap) is no better than a step already found cannot\n"
        "win: it is pruned, not searched (the Pareto front is then among those simulated).\n"
        "--offload lets the searches offload forwards to host memory (OF/RL) too; their bounds\n"
        "then drop the memory part.\n"
        "Schemes: %s;\n--scheme S[,S...] keeps those.\n\n",
        schemes);
}

struct tune_cmd_opts {
    struct tune_opts o;
    int top;
    bool json, ckpt_only, search, offload, no_sp, no_distopt;
    const char *plan_out;
    bool quiet; /* no progress bar on stderr */
    int emit;   /* --emit: 1 + enum launch_kind, 0 none (tui/export_launch.c) */
    const char *emit_out;
};

static int tune_emit(void *opts, const struct cmd_option *o, const char *arg, struct mt_err *e)
{
    enum launch_kind k;
    TRY(launch_kind_parse(arg, &k, e));
    ((struct tune_cmd_opts *)opts)->emit = 1 + (int)k;
    return MT_OK;
}

static const struct cmd_option tune_options[] = {
    {.name = "top", .arg = "K", CMD_TO_INT(struct tune_cmd_opts, top, 1, 1 << 20),
     .help = "feasible candidates shown (default 10)"},
    {.name = "json", CMD_TO_BOOL(struct tune_cmd_opts, json),
     .help = "one JSON object: best, candidates, pareto"},
    {.name = "quiet", .letter = 'q', CMD_TO_BOOL(struct tune_cmd_opts, quiet),
     .help = "no progress bar on stderr (drawn only on a terminal)"},
    {.name = "plan-out", .arg = "FILE", CMD_TO_STRING(struct tune_cmd_opts, plan_out),
     .help = "save the best plan"},
    {.name = "emit", .arg = "megatron|torchtitan", CMD_TO_CALL(tune_emit, 0),
     .help = "write the best plan the framework runs as its launch (a\n"
             "Megatron-LM script, a torchtitan TOML) to stdout after the table,\n"
             "or to --emit-out FILE"},
    {.name = "emit-out", .arg = "FILE", CMD_TO_STRING(struct tune_cmd_opts, emit_out),
     .help = "with --emit: the launch to FILE"},
    {.name = "min-pp", .arg = "N", CMD_TO_INT(struct tune_cmd_opts, o.min_pp, 1, 1 << 20),
     .help = "smallest pipeline depth (default 4, the paper's)"},
    {.name = "max-mbs", .arg = "B", CMD_TO_INT(struct tune_cmd_opts, o.max_mbs, 0, 1 << 20),
     .help = "largest micro-batch size tried"},
    {.name = "max-chunks", .arg = "V",
     CMD_TO_INT(struct tune_cmd_opts, o.max_chunks, 1, 1 << 20),
     .help = "W chunk counts tried: 2, 4, ... V (default 4)"},
    {.name = "max-cp", .arg = "N", CMD_TO_INT(struct tune_cmd_opts, o.max_cp, 1, CONFIG_MAX_DEVICES),
     .help = "context-parallel degrees tried: 1, 2, 4, ... N dividing the GPUs\n"
             "and the sequence into 2 cp chunks (default: the config's cp)"},
    {.name = "max-ep", .arg = "E", CMD_TO_INT(struct tune_cmd_opts, o.max_ep, 1, 1 << 20),
     .help = "a mixture of experts: the largest expert-parallel degree tried\n"
             "(default: every divisor of the experts the stage's GPUs fold;\n"
             "--max-ep 8 keeps the all-to-all in an 8-GPU node)"},
    {.name = "threads", .arg = "N", CMD_TO_INT(struct tune_cmd_opts, o.threads, 0, 1 << 20),
     .help = "worker threads (default: all cores)"},
    {.name = "ckpt-only", CMD_TO_BOOL(struct tune_cmd_opts, ckpt_only),
     .help = "only candidates with checkpointing on"},
    {.name = "search", CMD_TO_BOOL(struct tune_cmd_opts, search),
     .help = "also the schedule search under the cap, beside off and mario\n"
             "(pruned where its lower bound cannot beat a step found)"},
    {.name = "search-split", CMD_TO_BOOL(struct tune_cmd_opts, o.search_split),
     .help = "then the best 3 that fit with their layers split by a search\n"
             "(the slowest stage balanced under the cap, as AdaPipe), each simulated\n"
             "as one more candidate, -split, with its Megatron layout string"},
    {.name = "offload", CMD_TO_BOOL(struct tune_cmd_opts, offload),
     .help = "with --search: the searches may offload forwards to host memory (OF/RL)"},
    {.name = "no-sequence-parallel", CMD_TO_BOOL(struct tune_cmd_opts, no_sp),
     .help = "only candidates without sequence parallelism"},
    {.name = "no-distributed-optimizer", CMD_TO_BOOL(struct tune_cmd_opts, no_distopt),
     .help = "only candidates without the distributed optimizer"},
    {0},
};

static int tune_exec(int argc, char **argv);

const struct cmd_entry cmd_tune_entry = {
    .name = "tune",
    .summary = "grid-search scheme, pp, dp, micro-batch size, checkpointing",
    .usage = tune_usage,
    .plan_flags = true,
    .options = tune_options,
    .footer = "Exit status: 0 ok, 1 no candidate fits the memory cap, 2 bad usage or input.\n",
    .args_max = 1,
    .args = "CONFIG",
    .exec = tune_exec,
};

struct tune_progress {
    bool tty;
    double t0;
    bool shown;
};

static double tune_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A progress bar on stderr, only on a terminal and only when the search runs > 0.5 s. */
static bool tune_progress_cb(void *ctx, int done, int total)
{
    struct tune_progress *pr = ctx;
    double t = tune_now() - pr->t0;
    if (!pr->tty || (t < 0.5 && !pr->shown))
        return true;
    pr->shown = true;
    int width = 40, fill = total > 0 ? done * width / total : width;
    fprintf(stderr, "\rtuning [");
    for (int i = 0; i < width; i++)
        fputc(i < fill ? '#' : '.', stderr);
    char left[48];
    str_format_time_left(t, done, total, left, sizeof left);
    fprintf(stderr, "] %d/%d candidates  %.1f s%s%s\033[K", done, total, t, left[0] ? ", " : "",
            left);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
    return true;
}

static void tune_mem(const struct config *c, double v, char *buf, size_t n)
{
    if (c->unit.enabled && !(v > 0)) {
        snprintf(buf, n, "none");
        return;
    }
    if (c->unit.enabled)
        snprintf(buf, n, "%.3g M_θ", v);
    else
        str_format_bytes(v, buf, n);
}

static void tune_print(const struct config *c, const struct tune_result *r, int top)
{
    /* samples/s with 2 decimals, samples/t with 4, as every other view prints them */
    int rate_digits = c->unit.enabled ? 4 : 2;
    int *order = xcalloc((size_t)r->n + 1, sizeof *order);
    tune_rank(r, order);
    int n_ok = 0, n_oom = 0, n_bad = 0, n_not_run = 0, n_pruned = 0, n_search = 0;
    for (int i = 0; i < r->n; i++) {
        n_pruned += r->cand[i].status == TUNE_PRUNED;
        n_search += r->cand[i].search;
        n_ok += r->cand[i].status == TUNE_OK;
        n_oom += r->cand[i].status == TUNE_OOM;
        n_bad += r->cand[i].status == TUNE_INVALID;
        n_not_run += r->cand[i].status == TUNE_NOT_RUN;
    }
    char cap[96], model[96];
    config_cap_text(c, cap, sizeof cap); /* the cap each candidate is tested against */
    presets_model_display(&c->model, model, sizeof model);
    printf("%s on %d x %s, global batch %d x %d tokens, cap %s: %d candidates, %d fit, %d out "
           "of memory, %d invalid", model, c->num_device,
           c->unit.enabled ? "unit-cost devices" : c->cluster.device.name, config_global_batch(c),
           c->model.seq_length, cap, r->n, n_ok, n_oom, n_bad);
    if (n_pruned > 0)
        printf(", %d pruned", n_pruned);
    if (n_not_run > 0)
        printf(", %d not run", n_not_run);
    printf("\n");
    const char *tu = c->unit.enabled ? "samples/t" : "samples/s";
    printf("%4s  %-22s %-6s %4s %3s %12s %12s %12s  %s\n", "rank", "config", "ckpt", "dp", "tp",
           tu, c->unit.enabled ? "iter (t)" : "iter (s)", "peak mem", "");
    for (int i = 0; i < n_ok && i < top; i++) {
        const struct tune_candidate *k = &r->cand[order[i]];
        char label[48], mem[32];
        tune_label(k, label, sizeof label);
        tune_mem(c, k->peak_mem, mem, sizeof mem);
        printf("%4d  %-22s %-6s %4d %3d %12.*f %12.4f %12s  %s\n", i + 1, label,
               tune_ckpt_name(k), k->dp, k->tp, rate_digits, k->throughput, k->iter_time, mem,
               k->pareto ? "pareto" : "");
    }
    if (n_ok > top)
        printf("      ... %d more that fit (--top %d)\n", n_ok - top, n_ok);
    if (n_ok > 0) {
        printf("iter (%s): one iteration of the global batch of %d over all dp replicas = %d / %s\n",
               c->unit.enabled ? "t" : "s", config_global_batch(c), config_global_batch(c), tu);
        printf("config: scheme-pp-mbs (micro-batch size), then xC for C chunks a device where the "
               "scheme has chunks and -tT for tensor parallelism T where T > 1, -cC for context parallelism C\n");
    }
    if (n_oom + n_bad + n_not_run > 0) {
        printf("infeasible:\n");
        int shown = 0;
        for (int i = 0; i < r->n && shown < top; i++) {
            const struct tune_candidate *k = &r->cand[i];
            if (k->status == TUNE_OK || k->status == TUNE_PRUNED)
                continue;
            char label[48], over[32];
            tune_label(k, label, sizeof label);
            if (k->status == TUNE_OOM) {
                tune_mem(c, k->over_bytes, over, sizeof over);
                printf("      %-22s %-6s out of memory: device %d over the cap by %s\n", label,
                       tune_ckpt_name(k), k->oom_device, over);
            } else {
                printf("      %-22s %-6s %s\n", label, tune_ckpt_name(k), k->why);
            }
            shown++;
        }
        if (n_oom + n_bad + n_not_run > shown)
            printf("      ... %d more (--json lists every candidate)\n",
                   n_oom + n_bad + n_not_run - shown);
    }
    if (n_pruned > 0)
        printf("search: %d of %d candidates searched; %d pruned: their lower bound (of any "
               "schedule of their work under the cap) is no better than a step already found\n",
               n_search - n_pruned, n_search, n_pruned);
    printf("pareto front (throughput vs peak memory):");
    for (int i = 0; i < n_ok; i++) {
        const struct tune_candidate *k = &r->cand[order[i]];
        if (!k->pareto)
            continue;
        char label[48], mem[32];
        tune_label(k, label, sizeof label);
        tune_mem(c, k->peak_mem, mem, sizeof mem);
        printf(" %s%s%s (%.2f, %s)", label, k->ckpt ? "+" : "", k->ckpt ? tune_ckpt_name(k) : "",
               k->throughput, mem);
    }
    printf("\n");
    for (int i = 0; i < r->n; i++) /* the split search's candidates: their layers */
        if (r->cand[i].layout != NULL) {
            char label[48];
            tune_label(&r->cand[i], label, sizeof label);
            printf("split: %s%s%s --pipeline-model-parallel-layout %s\n", label,
                   r->cand[i].ckpt ? "+" : "", r->cand[i].ckpt ? tune_ckpt_name(&r->cand[i]) : "",
                   r->cand[i].layout);
        }
    if (r->split_note[0] != '\0')
        printf("split: not split: %s\n", r->split_note);
    if (r->best >= 0) {
        char label[48];
        tune_label(&r->cand[r->best], label, sizeof label);
        const struct tune_candidate *b = &r->cand[r->best];
        printf("best: %s, checkpointing %s, %.*f %s%s%s\n", label,
               b->search ? "search (the schedule search)"
               : b->ckpt ? "mario (Mario's passes)"
                         : "off",
               rate_digits, b->throughput, tu, b->layout ? ", layers " : "",
               b->layout ? b->layout : "");
    }
    free(order);
}

static int tune_exec(int argc, char **argv)
{
    struct tune_cmd_opts t = {.top = 10};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    tune_opts_default(&t.o);
    int first, st = cmd_options_parse(&cmd_tune_entry, argc, argv, &t, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    t.o.with_ckpt_off = !t.ckpt_only;
    if (t.emit_out && !t.emit)
        return cmd_usage_error("tune", "--emit-out: give --emit megatron|torchtitan too");
    if (t.emit && t.json && !t.emit_out)
        return cmd_usage_error("tune", "--emit with --json: give --emit-out FILE");
    if (t.offload && !t.search)
        return cmd_usage_error("tune", "--offload: the searches offload; give --search too");
    if (t.search)
        t.o.search = t.offload ? tune_optimize_search_offload : tune_optimize_search;
    t.o.offload = t.offload;

    /* --scheme is the grid's filter here, not the config's scheme: taken out of the plan
     * flags (the last one given wins, as for every plan flag); --tp and --pp pin the grid's
     * degrees; --dp, --micro-batch-size and --chunks pin theirs and stay in the config (the
     * global batch of --microbatches counts them) */
    int kept = 0;
    bool pin_sp = false, pin_distopt = false;
    for (int i = 0; i < cp.n_over; i++) {
        static const struct {
            int opt;
            const char *flag;
            size_t at;
            bool keep;
        } pins[] = {
            {CMD_PLAN_TP, "tp", offsetof(struct tune_opts, tp), false},
            {CMD_PLAN_PP, "pp", offsetof(struct tune_opts, pp), false},
            {CMD_PLAN_DP, "dp", offsetof(struct tune_opts, dp), true},
            {CMD_PLAN_MBS, "micro-batch-size", offsetof(struct tune_opts, mbs), true},
            {CMD_PLAN_CHUNKS, "chunks", offsetof(struct tune_opts, chunks), true},
            {CMD_PLAN_EP, "ep", offsetof(struct tune_opts, ep), true},
            {CMD_PLAN_ETP, "etp", offsetof(struct tune_opts, etp), true},
        };
        size_t k = 0;
        while (k < sizeof pins / sizeof pins[0] && pins[k].opt != cp.over[i].opt)
            k++;
        if (k < sizeof pins / sizeof pins[0]) {
            long v;
            if (cmd_options_int(cp.over[i].arg, 1, 1 << 20, &v, &e) != MT_OK)
                return cmd_usage_error("tune", "--%s: %s", pins[k].flag, e.msg);
            *(int *)((char *)&t.o + pins[k].at) = (int)v;
            if (pins[k].keep)
                cp.over[kept++] = cp.over[i];
            continue;
        }
        pin_sp |= cp.over[i].opt == CMD_PLAN_SEQ_PARALLEL;
        pin_distopt |= cp.over[i].opt == CMD_PLAN_DIST_OPT;
        if (cp.over[i].opt != CMD_PLAN_SCHEME) {
            cp.over[kept++] = cp.over[i];
            continue;
        }
        if (tune_schemes_parse(cp.over[i].arg, &t.o.schemes, &e) != MT_OK)
            return cmd_usage_error("tune", "--scheme: %s", e.msg);
    }
    cp.n_over = kept;
    for (int s = 0; s < SCHEME__COUNT; s++)
        if ((t.o.schemes >> s & 1u) && !tune_scheme_tried((enum scheme_id)s)) {
            char names[256];
            tune_scheme_names(names, sizeof names);
            return cmd_usage_error("tune", "--scheme: %s: %s (%s)",
                                   config_scheme_name((enum scheme_id)s),
                                   config_scheme_async((enum scheme_id)s)
                                       ? "the tuner tries synchronous schemes only"
                                       : "not among the tuner's schemes",
                                   names);
        }
    if ((pin_sp && t.no_sp) || (pin_distopt && t.no_distopt))
        return cmd_usage_error("tune", "%s and --no-%s: give one", pin_sp && t.no_sp ?
                               "--sequence-parallel" : "--distributed-optimizer",
                               pin_sp && t.no_sp ? "sequence-parallel" : "distributed-optimizer");
    t.o.sp = t.no_sp ? TUNE_OFF : pin_sp ? TUNE_ON : TUNE_BOTH;
    t.o.distopt = t.no_distopt ? TUNE_OFF : pin_distopt ? TUNE_ON : TUNE_BOTH;
    struct config c;
    if (cmd_plan_config_raw(&cp, &c, &e) != MT_OK)
        return cmd_fail("tune", &e);
    /* a ZeRO stage given (cluster.zero_stage, --zero-stage, --fsdp) already shards the
     * optimizer state: the distributed optimizer's dimension is moot (model/config_zero.c) */
    if (c.cluster.zero_stage >= 1 && t.o.distopt == TUNE_BOTH)
        t.o.distopt = TUNE_ON;
    /* every degree pinned and no --devices: the GPUs are their product */
    if (t.o.pp > 0 && t.o.dp > 0 && t.o.tp > 0 && !cmd_plan_given(&cp, CMD_PLAN_DEVICES))
        c.num_device = t.o.pp * t.o.dp * t.o.tp;
    /* the largest candidate (pp = D / tp, micro-batches of 1) on each worker thread */
    /* (a pipeline is never deeper than the model's layers: the rest of the GPUs are dp) */
    int tp_min = c.cluster.tp > 0 ? c.cluster.tp : 1;
    int pp_max = c.num_device / tp_min;
    if (pp_max > c.model.num_layers)
        pp_max = c.model.num_layers;
    if (pp_max < 1)
        pp_max = 1;
    int dp_min = c.num_device / (tp_min * pp_max);
    struct plan_geom big = {.devices = pp_max, .parts = 1, .stages = pp_max,
                            .mbs = config_global_batch(&c) / (dp_min > 0 ? dp_min : 1)};
    int threads = t.o.threads > 0 ? t.o.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (footprint_check(&big, FOOTPRINT_TUNE, threads, &e) != MT_OK)
        return cmd_fail("tune", &e);
    struct tune_progress pr = {.tty = isatty(STDERR_FILENO) && !t.json && !t.quiet,
                               .t0 = tune_now()};
    t.o.progress = tune_progress_cb;
    t.o.progress_ctx = &pr;
    struct tune_result r;
    if (tune_grid_search(&c, &t.o, &r, &e) != MT_OK)
        return cmd_fail("tune", &e);
    int status = r.best >= 0 ? 0 : 1;
    if (t.json) {
        char *text = tune_report_json(&r);
        puts(text);
        free(text);
    } else {
        tune_print(&c, &r, t.top);
    }
    if (r.best < 0)
        fprintf(stderr, "mario-tui tune: no candidate fits the %s cap%s\n",
                c.unit.enabled ? "memory" : "per-device memory",
                cp.path ? "" : " (try --memory or more --devices)");
    if (t.plan_out && r.best >= 0) {
        struct plan *p = NULL;
        if (tune_build_plan(&c, &r.cand[r.best], &t.o, &p, &e) != MT_OK ||
            plan_save(p, t.plan_out, &e) != MT_OK)
            status = cmd_fail("tune", &e);
        plan_free(p);
    }
    if (t.emit && r.best >= 0) {
        fflush(stdout);
        int es = export_launch_tune((enum launch_kind)(t.emit - 1), &c, &r, &t.o, t.emit_out);
        status = status ? status : es;
    }
    tune_result_fini(&r);
    return status;
}
