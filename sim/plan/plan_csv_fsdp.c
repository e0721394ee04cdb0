/* sim/plan/plan_csv_fsdp.c: FSDP's actions in torch's schedule CSV (docs/fsdp.md "For the
 * torch schedule CSV"). torch/distributed/pipelining/schedules.py's _ComputationType has
 * UNSHARD (all-gather a stage's FSDP parameters), RESHARD (free them) and REDUCE_GRAD (reduce
 * its gradients), which _Action.__repr__ writes as the stage index and the name with no
 * micro-batch: "0UNSHARD", "1RESHARD", "0REDUCE_GRAD". Where they go, by what the config
 * runs (ops_fsdp_of, model/ops_build_fsdp.c):
 *
 *   gather_step (FSDP under PP, torchtitan's default): torch's own lowering of a compute-only
 *     schedule, _PipelineScheduleRuntime._prepare_schedule_with_comms: _add_unshard_reshard
 *     keeps the next max_active_stages = 3 distinct stages of the row gathered, before each
 *     action resharding the gathered ones not among them and unsharding the ones among them
 *     not yet gathered (in the order they come), and reshards what is left after the row; a
 *     rank of up to 3 stages so gathers each once, all before the row's first action, and
 *     frees each before the first action after its last (one more stage per rank, as
 *     interleaving's 4 chunks, and stages are gathered again within the step). The
 *     evictions and the last reshards go in ascending stage order (torch iterates a Python
 *     set of small ints).
 *   gather_fw / gather_bw (reshard_after_forward, or no PP): a stage not gathered is
 *     unsharded before each of its actions: before each F, and before each backward when
 *     gather_bw resharded it after its F; freed after each backward (B, or W the end of a
 *     split one) so that the next UNSHARD finds it sharded, as torch's runtime asserts
 *     ("Unsharding the same stage_idx twice").
 *   reduce_step: _add_reduce_grad's one REDUCE_GRAD right after the action that completes the
 *     stage's micro-batches' B or W (the leaves of an OVERLAP_F_B counted); reduce_mb
 *     (ZeRO-2, or FSDP without PP): one after each B or W. A REDUCE_GRAD goes before a
 *     RESHARD that follows the same action, as torch's lowering orders them. */
#include <config.h>
#include "sim/plan/plan_csv.h"

#include <stdlib.h>
#include <string.h>

#include "model/ops.h"
#include "util/xalloc.h"

/* torch's _add_unshard_reshard default (schedules.py): "3 stages is probably the thing we
 * want (to account for having one f and one b active, and something else prefetching?)" */
enum { TORCH_MAX_ACTIVE_STAGES = 3 };

static const char *const csv_verb_names[CSV_VERB__COUNT] = {
    [CSV_F] = "F",
    [CSV_I] = "I",
    [CSV_W] = "W",
    [CSV_B] = "B",
    [CSV_UNSHARD] = "UNSHARD",
    [CSV_RESHARD] = "RESHARD",
    [CSV_REDUCE_GRAD] = "REDUCE_GRAD",
};

const char *csv_verb_name(enum csv_verb v)
{
    return v < CSV_VERB__COUNT ? csv_verb_names[v] : "?";
}

bool csv_verb_parse(const char *s, size_t n, enum csv_verb *v, size_t *name_len)
{
    for (int k = CSV_UNSHARD; k < CSV_VERB__COUNT; k++) {
        size_t len = strlen(csv_verb_names[k]);
        if (n == len && memcmp(s, csv_verb_names[k], len) == 0) {
            *v = (enum csv_verb)k;
            *name_len = len;
            return true;
        }
    }
    for (int k = CSV_F; k <= CSV_B; k++)
        if (n > 0 && s[0] == csv_verb_names[k][0]) {
            *v = (enum csv_verb)k;
            *name_len = 1;
            return true;
        }
    return false;
}

/* The row being built. */
struct csv_row {
    struct csv_cell *v;
    int n, cap;
};

static void csv_row_push(struct csv_row *r, const struct csv_cell *c)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = xreallocarray(r->v, (size_t)r->cap, sizeof *r->v);
    }
    r->v[r->n++] = *c;
}

static void csv_row_fsdp(struct csv_row *r, enum csv_verb v, int stage)
{
    struct csv_cell c = {.n = 1, .leaf = {{.verb = v, .stage = stage, .mb = -1}}};
    csv_row_push(r, &c);
}

static bool csv_leaf_ends_backward(const struct csv_leaf *l)
{
    return l->verb == CSV_B || l->verb == CSV_W; /* torch's _requires_reduce_grad */
}

/* torch's next_stage_indices: the first `count` distinct stages from cells[i] on (an
 * OVERLAP_F_B's both, which may make one more). Returns how many, into next[]. */
static int csv_next_stages(const struct csv_cell *cells, int i, int n, int count,
                           int next[TORCH_MAX_ACTIVE_STAGES + 1])
{
    int k = 0;
    for (; i < n && k < count; i++)
        for (int j = 0; j < cells[i].n; j++) {
            int s = cells[i].leaf[j].stage;
            bool seen = false;
            for (int q = 0; q < k; q++)
                seen |= next[q] == s;
            if (!seen)
                next[k++] = s;
        }
    return k;
}

/* _add_unshard_reshard's step before cells[i]: evict, then fetch. */
static void csv_window(struct csv_row *r, const struct csv_cell *cells, int i, int n,
                       bool *gathered, int stages)
{
    int next[TORCH_MAX_ACTIVE_STAGES + 1];
    int k = csv_next_stages(cells, i, n, TORCH_MAX_ACTIVE_STAGES, next);
    for (int s = 0; s < stages; s++) {
        bool keep = false;
        for (int q = 0; q < k; q++)
            keep |= next[q] == s;
        if (gathered[s] && !keep) {
            csv_row_fsdp(r, CSV_RESHARD, s);
            gathered[s] = false;
        }
    }
    for (int q = 0; q < k; q++)
        if (!gathered[next[q]]) {
            csv_row_fsdp(r, CSV_UNSHARD, next[q]);
            gathered[next[q]] = true;
        }
}

struct csv_cell *csv_fsdp_row(const struct config *c, int microbatches, struct csv_cell *cells,
                              int *n)
{
    struct ops_fsdp f = ops_fsdp_of(c);
    bool per_mb = f.gather_fw || f.gather_bw;
    if (!per_mb && !f.gather_step && !f.reduce_mb && !f.reduce_step)
        return cells;
    int stages = 0;
    for (int i = 0; i < *n; i++)
        for (int j = 0; j < cells[i].n; j++)
            if (cells[i].leaf[j].stage + 1 > stages)
                stages = cells[i].leaf[j].stage + 1;
    bool *gathered = xcalloc((size_t)stages + 1, sizeof *gathered);
    int *backwards = xcalloc((size_t)stages + 1, sizeof *backwards);
    struct csv_row r = {0};
    for (int i = 0; i < *n; i++) {
        const struct csv_cell *cell = &cells[i];
        if (f.gather_step)
            csv_window(&r, cells, i, *n, gathered, stages);
        for (int j = 0; per_mb && j < cell->n; j++)
            if (!gathered[cell->leaf[j].stage]) {
                csv_row_fsdp(&r, CSV_UNSHARD, cell->leaf[j].stage);
                gathered[cell->leaf[j].stage] = true;
            }
        csv_row_push(&r, cell);
        for (int j = 0; j < cell->n; j++) {
            const struct csv_leaf *l = &cell->leaf[j];
            if (csv_leaf_ends_backward(l) &&
                (f.reduce_mb || (f.reduce_step && ++backwards[l->stage] == microbatches)))
                csv_row_fsdp(&r, CSV_REDUCE_GRAD, l->stage);
        }
        for (int j = 0; per_mb && j < cell->n; j++) {
            const struct csv_leaf *l = &cell->leaf[j];
            bool free_now = csv_leaf_ends_backward(l) || (l->verb == CSV_F && f.gather_bw);
            if (free_now && gathered[l->stage]) {
                csv_row_fsdp(&r, CSV_RESHARD, l->stage);
                gathered[l->stage] = false;
            }
        }
    }
    for (int s = 0; s < stages; s++) /* what the row leaves gathered */
        if (gathered[s])
            csv_row_fsdp(&r, CSV_RESHARD, s);
    free(gathered);
    free(backwards);
    free(cells);
    *n = r.n;
    return r.v;
}
