/* tui/cmd_costs.c: `simulate --costs`: a stage's ops in order (model/ops.h), what each costs
 * in FLOPs, bytes and time as the config's framework prices it (model/cost_ops.h), what it
 * keeps for the backward, and its share of the stage's forward + backward time, for the
 * first, a middle and the last stage (or one). Prints only: the figures are model/'s. */
#include <config.h>
#include "tui/cmd.h"
#include "tui/cmd_costs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/cost_ops.h"
#include "model/moe.h"
#include "model/ops.h"

const char *cmd_costs_site_name(enum op_site s)
{
    static const char *const n[SITE__COUNT] = {"layer", "embed", "head", "step"};
    return (unsigned)s < SITE__COUNT ? n[s] : "?";
}

void cmd_costs_shape(const struct op *o, char *buf, size_t n)
{
    switch (o->kind) {
    case OP_GEMM:
    case OP_GROUPED_GEMM:
        snprintf(buf, n, "%gx%gx%g%s%s", o->m, o->n, o->k, o->count > 1 ? " xN" : "",
                 o->dtype == OP_FP8 ? " fp8" : ""); /* bf16 unmarked, as before */
        break;
    case OP_ATTENTION:
        snprintf(buf, n, "b%g h%g/%g s%g d%g %s%s", o->batch, o->heads, o->kv_heads, o->s_q,
                 o->head_dim, o->flash ? "flash" : "eager", o->causal ? " causal" : "");
        break;
    case OP_COLLECTIVE:
        snprintf(buf, n, "%s /%d %s%s", op_coll_name(o->coll), o->group, op_link_name(o->link),
                 o->overlapped ? " (overlapped)" : "");
        break;
    default: snprintf(buf, n, "%s", op_dtype_name(o->dtype)); break;
    }
}

static void add_rows(const struct config *c, const struct op_list *l, double count,
                     struct costs_row *rows, size_t *n)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct op *o = &l->op[i];
        struct costs_row *r = &rows[(*n)++];
        memset(r, 0, sizeof *r);
        r->op = o;
        r->count = count;
        r->flops = count * op_flops(o, PASS_FW);
        r->bytes = count * (o->kind == OP_COLLECTIVE ? o->bytes : op_hbm_bytes(o, PASS_FW));
        r->keep = count * o->keep_bytes;
        for (int p = 0; p < PASS__COUNT; p++)
            r->us[p] = count * cost_op_in_list_us(c, l, i, (enum op_pass)p);
    }
}

static const char *framework_name(enum framework_id f)
{
    switch (f) {
    case FRAMEWORK_MEGATRON_DS_2021: return "megatron-ds-2021";
    case FRAMEWORK_TORCHTITAN: return "torchtitan";
    default: return "megatron-core";
    }
}

static void human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, n, "%.0f B", b);
}

static void print_stage(const struct config *c, int i, const struct stage_cost *st,
                        const struct costs_row *rows, size_t n, double other_us, void *arr)
{
    double total = st->fw + st->bw;
    if (arr != NULL) {
        cmd_costs_json_stage(arr, i, st, rows, n, other_us);
        return;
    }
    char act[32], stat[32];
    human_bytes(st->act, act, sizeof act);
    human_bytes(st->static_bytes, stat, sizeof stat);
    printf("\nstage %d: layers %d-%d%s%s  fw %.1f us  bw %.1f us (B %.1f, W %.1f)  "
           "activations %s  static %s\n",
           i, st->first_layer, st->first_layer + st->num_layers - 1,
           st->has_embed ? " + embedding" : "", st->has_head ? " + head" : "", st->fw, st->bw,
           st->b, st->w, act, stat);
    printf("  %-5s %-24s %-10s %-30s %5s %11s %10s %10s %10s %10s %10s %6s\n", "site", "op",
           "kind", "shape", "x", "fw GFLOP", "fw bytes", "fw us", "B us", "W us", "kept",
           "share");
    for (size_t k = 0; k < n; k++) {
        const struct costs_row *r = &rows[k];
        char shape[96], bytes[32], keep[32];
        cmd_costs_shape(r->op, shape, sizeof shape);
        human_bytes(r->bytes, bytes, sizeof bytes);
        human_bytes(r->keep, keep, sizeof keep);
        double sum = r->us[PASS_FW] + r->us[PASS_B] + r->us[PASS_W];
        printf("  %-5s %-24s %-10s %-30s %5g %11.2f %10s %10.1f %10.1f %10.1f %10s %5.1f%%\n",
               cmd_costs_site_name(r->op->site), r->op->name, op_kind_name(r->op->kind), shape, r->count,
               r->flops / 1e9, bytes, r->us[PASS_FW], r->us[PASS_B], r->us[PASS_W], keep,
               total > 0 ? 100 * sum / total : 0);
    }
    if (st->fsdp_fw_us + st->fsdp_bw_us > 0) /* model/ops_build_fsdp.c */
        printf("  %-5s %-24s %-10s %-30s %5s %11s %10s %10.1f %10.1f %10s %10s %5.1f%%\n",
               "stage", "fsdp exposed", "", "beyond the compute it overlaps", "", "", "",
               st->fsdp_fw_us, st->fsdp_bw_us, "", "",
               total > 0 ? 100 * (st->fsdp_fw_us + st->fsdp_bw_us) / total : 0);
    printf("  %-5s %-24s %-10s %-30s %5s %11s %10s %10s %10s %10s %10s %5.1f%%\n", "stage",
           "framework overheads", "", framework_name(config_framework(c)), "", "", "",
           "", "", "", "", total > 0 ? 100 * other_us / total : 0);
}

int cmd_costs_print(const struct config *c, const struct cost_model *m, int only, bool json)
{
    int want[3], n_want = 0;
    if (only >= 0) {
        want[n_want++] = only;
    } else {
        want[n_want++] = 0;
        if (m->num_stages > 2)
            want[n_want++] = m->num_stages / 2;
        if (m->num_stages > 1)
            want[n_want++] = m->num_stages - 1;
    }
    int seq = c->model.seq_length;
    struct op_list layer, embed, head, moe, mtp; /* a MoE model's two blocks (model/moe.h) */
    op_list_init(&layer);
    op_list_init(&embed);
    op_list_init(&head);
    op_list_init(&moe);
    op_list_init(&mtp);
    bool has_moe = moe_enabled(&c->model);
    ops_build_block(c, seq, BLOCK_DENSE, &layer);
    if (has_moe) {
        ops_build_block(c, seq, BLOCK_MOE, &moe);
        ops_build_mtp(c, seq, &mtp);
    }
    ops_build_embed(c, seq, &embed);
    ops_build_head(c, seq, &head);
    void *arr = json ? cmd_costs_json_new() : NULL;
    if (!json)
        printf("%s, framework %s, tp %d%s, micro-batch %d x %d tokens: the ops of a stage, one "
               "micro-batch on one GPU\n",
               c->model.name, framework_name(config_framework(c)), c->cluster.tp,
               c->sequence_parallel ? " (SP)" : "", c->micro_batch_size, seq);
    size_t cap = layer.n + moe.n + mtp.n + embed.n + head.n + 1;
    struct costs_row *rows = calloc(cap, sizeof *rows);
    int rc = 0;
    for (int w = 0; w < n_want && rows != NULL; w++) {
        const struct stage_cost *st = &m->stage[want[w]];
        size_t n = 0;
        if (st->has_embed)
            add_rows(c, &embed, 1, rows, &n);
        int n_moe = moe_layers_in(&c->model, st->first_layer, st->num_layers);
        if (st->num_layers - n_moe > 0)
            add_rows(c, &layer, st->num_layers - n_moe, rows, &n);
        if (n_moe > 0)
            add_rows(c, &moe, n_moe, rows, &n);
        if (st->has_head)
            add_rows(c, &head, 1, rows, &n);
        if (st->has_head && mtp.n > 0)
            add_rows(c, &mtp, 1, rows, &n);
        double ops_us = 0;
        for (size_t k = 0; k < n; k++)
            ops_us += rows[k].us[PASS_FW] + rows[k].us[PASS_B] + rows[k].us[PASS_W];
        print_stage(c, want[w], st, rows, n,
                    st->fw + st->bw - ops_us - st->fsdp_fw_us - st->fsdp_bw_us, arr);
    }
    if (rows == NULL)
        rc = 1;
    free(rows);
    if (arr != NULL && cmd_costs_json_print(arr) != 0)
        rc = 1;
    op_list_fini(&layer);
    op_list_fini(&embed);
    op_list_fini(&head);
    op_list_fini(&moe);
    op_list_fini(&mtp);
    return rc;
}
