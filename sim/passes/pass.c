/* sim/passes/pass.c: the pass table, the change records, the common end of every pass, and the
 * pipeline of paper §5.1: "These optimization passes are applied iteratively, meaning each pass
 * can be applied multiple times to refine the computational graph."
 *
 * Invariants every pass keeps (checked here, after the pass has rewritten its copy):
 *   - the input is never touched: a pass edits a clone;
 *   - the output validates (validate_plan_sim: structure, send/receive pairs, no deadlock);
 *   - passes 2-4 never return a plan slower than their input (pass 4 only a faster one, as
 *     it spends checkpoint memory); pass 1 may be slower, it adds the recompute.
 * The pipeline is base -> ckpt -> overlap -> redundancy -> prepose, then rounds of overlap,
 * redundancy, prepose while a round shortens the step (pass 4 opens idle slots that RC and
 * further forwards can fill). Every intermediate plan is kept with its simulation. */
#include <config.h>
#include "sim/passes/pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/plan/validate.h"
#include "sim/search/search_offload.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

static const struct pass pass_table[] = {
    {PASS_CHECKPOINT, "ckpt", "apply-checkpoint", pass_checkpoint_run},
    {PASS_OVERLAP, "overlap", "overlap-recompute", pass_overlap_run},
    {PASS_REDUNDANCY, "redundancy", "remove-redundancy", pass_redundancy_run},
    {PASS_PREPOSE, "prepose", "prepose-forward", pass_prepose_run},
};

const struct pass *pass_get(enum pass_id id)
{
    for (size_t i = 0; i < sizeof pass_table / sizeof pass_table[0]; i++)
        if (pass_table[i].id == id)
            return &pass_table[i];
    return NULL;
}

const struct pass *pass_find(const char *name)
{
    for (size_t i = 0; i < sizeof pass_table / sizeof pass_table[0]; i++)
        if (strcasecmp(name, pass_table[i].name) == 0 ||
            strcasecmp(name, pass_table[i].long_name) == 0)
            return &pass_table[i];
    return NULL;
}

/* Mario's passes are the paper's: they rewrite plans without offload (OF/RL, issue 29), and
 * refuse one that has it, naming its first copy. */
static int pass_refuse_copies(const struct plan *p, struct mt_err *e)
{
    for (int d = 0; d < plan_devices(p); d++) {
        const struct instr *ins = plan_instrs(p, d);
        for (int i = 0, n = plan_len(p, d); i < n; i++)
            if (plan_op_is_copy(ins[i].op)) {
                char what[32];
                plan_instr_label(p, plan_at(p, d, i), what, sizeof what);
                return err_set(e, MT_EUNSUPPORTED,
                               "device %d, instruction %d (%s): Mario's passes take plans "
                               "without offload (OF/RL)",
                               d, i, what);
            }
    }
    return MT_OK;
}

int pass_run(enum pass_id id, const struct plan *in, struct plan **out, struct pass_changes *ch,
             struct mt_err *e)
{
    const struct pass *ps = pass_get(id);
    *out = NULL;
    if (ps == NULL)
        return err_set(e, MT_EINVAL, "no pass %d", (int)id);
    TRY(pass_refuse_copies(in, e));
    return ps->run(in, NULL, out, NULL, ch, e);
}

/* ---- change records ----------------------------------------------------------------------- */

void pass_changes_init(struct pass_changes *ch)
{
    memset(ch, 0, sizeof *ch);
}

void pass_changes_fini(struct pass_changes *ch)
{
    if (ch == NULL)
        return;
    free(ch->v);
    free(ch->slot);
    memset(ch, 0, sizeof *ch);
}

void pass_changes_clear(struct pass_changes *ch)
{
    ch->n = 0;
    if (ch->slots)
        memset(ch->slot, 0, (size_t)ch->slots * sizeof *ch->slot);
    ch->kept_input = false;
    ch->note[0] = '\0';
    ch->step_in = ch->step_out = 0;
}

static unsigned pass_change_hash(int dev, enum op op, int mb, int stage)
{
    unsigned h = (unsigned)dev * 0x9e3779b1u;
    h = (h ^ (unsigned)op) * 0x85ebca6bu;
    h = (h ^ (unsigned)mb) * 0xc2b2ae35u;
    h = (h ^ (unsigned)stage) * 0x27d4eb2fu;
    return h ^ (h >> 15);
}

static bool pass_change_is(const struct pass_change *c, int dev, enum op op, int mb, int stage)
{
    return c->dev == dev && c->op == op && c->mb == mb && c->stage == stage;
}

/* Enters change i in the hash unless an earlier change has its key (the first one wins). */
static void pass_changes_index(struct pass_changes *ch, int i)
{
    const struct pass_change *c = &ch->v[i];
    unsigned mask = (unsigned)ch->slots - 1;
    for (unsigned h = pass_change_hash(c->dev, c->op, c->mb, c->stage) & mask;; h = (h + 1) & mask) {
        int k = ch->slot[h];
        if (k == 0) {
            ch->slot[h] = i + 1;
            return;
        }
        if (pass_change_is(&ch->v[k - 1], c->dev, c->op, c->mb, c->stage))
            return;
    }
}

void pass_changes_add(struct pass_changes *ch, enum pass_change_kind kind, int dev,
                      const struct instr *in, enum op old_op)
{
    if (ch->n == ch->cap) {
        ch->cap = ch->cap ? ch->cap * 2 : 64;
        ch->v = xreallocarray(ch->v, (size_t)ch->cap, sizeof *ch->v);
    }
    ch->v[ch->n++] = (struct pass_change){kind, dev, in->op, old_op, in->mb, in->part, in->stage};
    if (2 * ch->n > ch->slots) { /* at most half full: rebuilt twice as large */
        ch->slots = ch->slots ? 2 * ch->slots : 128;
        free(ch->slot);
        ch->slot = xcalloc((size_t)ch->slots, sizeof *ch->slot);
        for (int i = 0; i < ch->n; i++)
            pass_changes_index(ch, i);
    } else {
        pass_changes_index(ch, ch->n - 1);
    }
}

const struct pass_change *pass_changes_find(const struct pass_changes *ch, int dev, enum op op,
                                            int mb, int stage)
{
    if (ch->slots == 0)
        return NULL;
    unsigned mask = (unsigned)ch->slots - 1;
    for (unsigned h = pass_change_hash(dev, op, mb, stage) & mask;; h = (h + 1) & mask) {
        int k = ch->slot[h];
        if (k == 0)
            return NULL;
        if (pass_change_is(&ch->v[k - 1], dev, op, mb, stage))
            return &ch->v[k - 1];
    }
}

const char *pass_change_kind_name(enum pass_change_kind k)
{
    switch (k) {
    case PASS_CHANGE_INSERT: return "insert";
    case PASS_CHANGE_REMOVE: return "remove";
    case PASS_CHANGE_MOVE: return "move";
    case PASS_CHANGE_RETYPE: return "retype";
    }
    return "?";
}

/* ---- simulation results ------------------------------------------------------------------- */

static double *pass_dup(const double *src, size_t n)
{
    double *d = xmalloc((n ? n : 1) * sizeof *d);
    if (n)
        memcpy(d, src, n * sizeof *d);
    return d;
}

void pass_sim_copy(struct sim_result *dst, const struct sim_result *src)
{
    *dst = *src;
    size_t total = (size_t)src->total + 1; /* sim_run allocates one spare slot */
    dst->start = pass_dup(src->start, total);
    dst->end = pass_dup(src->end, total);
    dst->mem_after = pass_dup(src->mem_after, total);
    /* the expert all-to-alls' per-instruction figures (sim/core/overlap.c; NULL without
     * experts): copied too, else both results would free the same arrays */
    if (src->a2a_hidden) {
        dst->a2a_hidden = pass_dup(src->a2a_hidden, total);
        dst->a2a_exposed = pass_dup(src->a2a_exposed, total);
        dst->a2a_bytes = pass_dup(src->a2a_bytes, total);
        dst->a2a_partner = xmalloc(total * sizeof *dst->a2a_partner);
        memcpy(dst->a2a_partner, src->a2a_partner, total * sizeof *dst->a2a_partner);
    }
    dst->staleness = xmalloc((size_t)(src->stages > 0 ? src->stages : 1) * sizeof(int));
    if (src->stages > 0 && src->staleness)
        memcpy(dst->staleness, src->staleness, (size_t)src->stages * sizeof(int));
    dst->dev = xmalloc((size_t)(src->devices ? src->devices : 1) * sizeof *dst->dev);
    for (int d = 0; d < src->devices; d++) {
        dst->dev[d] = src->dev[d];
        dst->dev[d].curve_t = pass_dup(src->dev[d].curve_t, (size_t)src->dev[d].curve_len);
        dst->dev[d].curve_mem = pass_dup(src->dev[d].curve_mem, (size_t)src->dev[d].curve_len);
    }
}

double pass_sim_peak_max(const struct sim_result *r)
{
    double m = 0;
    for (int d = 0; d < r->devices; d++)
        if (r->dev[d].peak_mem > m)
            m = r->dev[d].peak_mem;
    return m;
}

/* Relative tolerance on step times: float sums of equal schedules may differ in the last bits. */
static bool pass_slower(double a, double b)
{
    return a > b + 1e-9 * (b > 1 ? b : 1);
}

static bool pass_faster(double a, double b)
{
    return a < b - 1e-9 * (b > 1 ? b : 1);
}

int pass_finish(const struct plan *in, const struct sim_result *in_sim, struct plan *cand,
                enum pass_keep keep, struct plan **out, struct sim_result *out_sim,
                struct pass_changes *ch, struct mt_err *e)
{
    struct sim_result own_in = {0}, cand_sim = {0};
    int rc = MT_OK;
    *out = NULL;
    if (out_sim)
        memset(out_sim, 0, sizeof *out_sim);
    if (in_sim == NULL) {
        rc = sim_run(in, &own_in, e);
        if (rc != MT_OK) {
            plan_free(cand);
            return err_wrap(e, "simulating the input");
        }
        in_sim = &own_in;
    }
    ch->step_in = in_sim->step_time;
    if (ch->n == 0) { /* nothing changed: the copy has the input's simulation */
        ch->step_out = in_sim->step_time;
        if (out_sim)
            pass_sim_copy(out_sim, in_sim);
        *out = cand;
        sim_result_fini(&own_in);
        return MT_OK;
    }
    struct mt_err why = {0};
    const char *reason = NULL;
    if (validate_plan_sim(cand, &cand_sim, &why) != MT_OK) {
        if (keep == PASS_KEEP_ALWAYS) {
            rc = err_set(e, why.code, "%s", why.msg);
            plan_free(cand);
            sim_result_fini(&own_in);
            return rc;
        }
        reason = "invalid";
    } else if (keep == PASS_KEEP_NOT_SLOWER && pass_slower(cand_sim.step_time, in_sim->step_time)) {
        reason = "slower";
    } else if (keep == PASS_KEEP_FASTER && !pass_faster(cand_sim.step_time, in_sim->step_time)) {
        reason = "not faster";
    } else if (keep == PASS_KEEP_FASTER &&
               pass_sim_peak_max(&cand_sim) > pass_sim_peak_max(in_sim) * (1 + 1e-12)) {
        reason = "over the memory budget";
    }
    if (reason) {
        if (why.msg[0])
            snprintf(ch->note, sizeof ch->note, "%s: %.160s", reason, why.msg);
        else { /* never scientific notation on a status line (issue 41 item 5) */
            bool unit = plan_config(in)->unit.enabled; /* step times in t, else in µs */
            char a[48], b[48];
            str_format_number(unit ? cand_sim.step_time : cand_sim.step_time * 1e-3, 6, a,
                              sizeof a);
            str_format_number(unit ? in_sim->step_time : in_sim->step_time * 1e-3, 6, b, sizeof b);
            const char *u = unit ? "t" : "ms";
            snprintf(ch->note, sizeof ch->note, "%s: %s %s against %s %s", reason, a, u, b, u);
        }
        ch->n = 0;
        ch->kept_input = true;
        ch->step_out = in_sim->step_time;
        plan_free(cand);
        sim_result_fini(&cand_sim);
        *out = plan_clone(in);
        if (out_sim)
            pass_sim_copy(out_sim, in_sim);
        sim_result_fini(&own_in);
        return MT_OK;
    }
    ch->step_out = cand_sim.step_time;
    *out = cand;
    if (out_sim)
        *out_sim = cand_sim;
    else
        sim_result_fini(&cand_sim);
    sim_result_fini(&own_in);
    return MT_OK;
}

/* ---- the pipeline ------------------------------------------------------------------------- */

static const char *const pass_row_names[PASS_ROW__COUNT] = {"base", "ckpt", "overlap", "redundancy",
                                                            "prepose"};

const char *pass_row_name(enum pass_row row)
{
    return (unsigned)row < PASS_ROW__COUNT ? pass_row_names[row] : "?";
}

void pass_pipeline_fini(struct pass_pipeline *pl)
{
    if (pl == NULL)
        return;
    for (int i = 0; i < pl->n; i++) {
        plan_free(pl->step[i].plan);
        sim_result_fini(&pl->step[i].sim);
        pass_changes_fini(&pl->step[i].changes);
    }
    memset(pl, 0, sizeof *pl);
}

/* Appends the step made by pass id from the last step. */
static int pass_pipeline_step(struct pass_pipeline *pl, enum pass_id id, int round,
                              struct mt_err *e)
{
    const struct pass *ps = pass_get(id);
    const struct pass_step *prev = &pl->step[pl->n - 1];
    struct pass_step *st = &pl->step[pl->n];
    memset(st, 0, sizeof *st);
    pass_changes_init(&st->changes);
    st->name = ps->name;
    st->pass = id;
    st->round = round;
    int rc = ps->run(prev->plan, &prev->sim, &st->plan, &st->sim, &st->changes, e);
    if (rc != MT_OK) {
        pass_changes_fini(&st->changes);
        return err_wrap(e, "%s", ps->long_name);
    }
    pl->n++;
    return MT_OK;
}

/* Whether the watch lets the pipeline go on to the next step. */
static bool pass_pipeline_go_on(struct pass_pipeline *pl, const struct pass_watch *w,
                                enum pass_id id, int round)
{
    if (w == NULL || w->step == NULL || w->step(w->ctx, pl, pass_get(id)->name, round))
        return true;
    pl->stopped = true;
    return false;
}

/* The pipeline's first step: base as given, validated and simulated; keep: base is the step's
 * plan, taken with what was resolved of it as it was validated (sim/core/vpipe.h), not a copy. */
static int pass_pipeline_base(const struct plan *base, bool keep, struct pass_pipeline *out,
                              struct mt_err *e)
{
    struct pass_step *st = &out->step[0];
    st->name = "base";
    st->pass = -1;
    int rc = validate_plan_sim(base, &st->sim, e);
    if (rc != MT_OK)
        return err_wrap(e, "base plan");
    st->plan = keep ? (struct plan *)base : plan_clone(base);
    pass_changes_init(&st->changes);
    st->changes.step_in = st->changes.step_out = st->sim.step_time;
    out->n = 1;
    return MT_OK;
}

int pass_pipeline_as_given(const struct plan *base, struct pass_pipeline *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    TRY(pass_pipeline_base(base, false, out, e));
    out->as_given = true;
    return MT_OK;
}

void pass_pipeline_unsearch(struct pass_pipeline *pl)
{
    if (!pl->searched)
        return;
    struct pass_step *st = &pl->step[--pl->n];
    plan_free(st->plan);
    sim_result_fini(&st->sim);
    pass_changes_fini(&st->changes);
    memset(st, 0, sizeof *st);
    pl->searched = false;
    memset(&pl->search, 0, sizeof pl->search);
    pl->search_cap = 0;
    pl->offloaded = 0;
}

int pass_pipeline_run(const struct plan *base, struct pass_pipeline *out, struct mt_err *e)
{
    return pass_pipeline_run_watched(base, NULL, out, e);
}

/* The pipeline; keep: a failed pass leaves the steps before it, and base is the first step's
 * plan, not a copy (pass_pipeline_run_shown: it takes base). */
static int pass_pipeline_run_keep(const struct plan *base, const struct pass_watch *w, bool keep,
                                  struct pass_pipeline *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    TRY(pass_refuse_copies(base, e));
    TRY(pass_pipeline_base(base, keep, out, e));
    if (!pass_pipeline_go_on(out, w, PASS_CHECKPOINT, 0))
        return MT_OK;
    int rc = pass_pipeline_step(out, PASS_CHECKPOINT, 0, e);
    /* Pass 4 keeps a rewrite only when it is faster, so a round whose prepose changed nothing
     * did not improve, and another round would find the same plan. */
    for (int round = 1; rc == MT_OK && !out->stopped && round <= PASS_MAX_ROUNDS; round++) {
        for (int id = PASS_OVERLAP; rc == MT_OK && id <= PASS_PREPOSE; id++) {
            if (!pass_pipeline_go_on(out, w, (enum pass_id)id, round))
                break;
            rc = pass_pipeline_step(out, (enum pass_id)id, round, e);
        }
        if (rc == MT_OK && !out->stopped && out->step[out->n - 1].changes.n == 0)
            break;
    }
    if (rc != MT_OK && keep)
        out->stopped = true; /* base and the steps after it stay */
    else if (rc != MT_OK)
        pass_pipeline_fini(out);
    return rc;
}

int pass_pipeline_run_watched(const struct plan *base, const struct pass_watch *w,
                              struct pass_pipeline *out, struct mt_err *e)
{
    return pass_pipeline_run_keep(base, w, false, out, e);
}

int pass_pipeline_run_shown(struct plan *base, const struct pass_watch *w,
                            struct pass_pipeline *out, struct mt_err *e)
{
    int rc = pass_pipeline_run_keep(base, w, true, out, e);
    if (out->n == 0) /* not taken: it failed before its step */
        plan_free(base);
    return rc;
}

const struct pass_step *pass_pipeline_final(const struct pass_pipeline *pl)
{
    return pl->n > 0 ? &pl->step[pl->n - 1] : NULL;
}

const struct pass_step *pass_pipeline_row(const struct pass_pipeline *pl, enum pass_row row)
{
    if (row == PASS_ROW_BASE)
        return pl->n > 0 ? &pl->step[0] : NULL;
    if ((int)row == PASS_ROW_SEARCH)
        return pl->searched ? pass_pipeline_final(pl) : NULL;
    if (row == PASS_ROW_PREPOSE && pl->stopped) { /* its last round that ran */
        for (int i = pl->n - 1; i >= 0; i--)
            if (pl->step[i].pass == PASS_PREPOSE)
                return &pl->step[i];
        return NULL;
    }
    if (pl->as_given) /* only base: the passes did not run */
        return NULL;
    if (row == PASS_ROW_PREPOSE) /* the passes' final plan */
        return pl->n > 0 ? &pl->step[pl->n - 1 - pl->searched] : NULL;
    enum pass_id id = row == PASS_ROW_CKPT      ? PASS_CHECKPOINT
                      : row == PASS_ROW_OVERLAP ? PASS_OVERLAP
                                                : PASS_REDUNDANCY;
    for (int i = 0; i < pl->n; i++)
        if (pl->step[i].pass == (int)id)
            return &pl->step[i];
    return NULL;
}

/* ---- the search step ---------------------------------------------------------------------- */

/* Position of each compute instruction among its device's compute instructions, keyed by
 * (op kind, mb, stage): FW and CFW share a kind, as do BW and B. */
static int pass_diff_kind(enum op op)
{
    return op == OP_CFW ? OP_FW : op == OP_B ? OP_BW : op;
}

void pass_changes_diff(const struct plan *in, const struct plan *out, struct pass_changes *ch)
{
    pass_changes_clear(ch);
    const struct plan_geom *g = plan_geom(in);
    size_t keys = (size_t)g->mbs * g->stages * OP__COUNT;
    int *pos = xmalloc((keys + 1) * sizeof(int)); /* in's place of (kind, mb, stage), -1 none */
    enum op *was = xmalloc((keys + 1) * sizeof(enum op));
    for (size_t k = 0; k < keys; k++)
        pos[k] = -1;
    for (int d = 0; d < plan_devices(in); d++)
        for (int i = 0, n = 0; i < plan_len(in, d); i++) {
            const struct instr *x = plan_at(in, d, i);
            if (!plan_op_is_compute(x->op) || x->mb < 0 || x->mb >= g->mbs || x->stage < 0 ||
                x->stage >= g->stages)
                continue;
            size_t k = ((size_t)x->mb * g->stages + x->stage) * OP__COUNT + pass_diff_kind(x->op);
            pos[k] = n++;
            was[k] = x->op;
        }
    for (int d = 0; d < plan_devices(out); d++)
        for (int i = 0, n = 0; i < plan_len(out, d); i++) {
            const struct instr *x = plan_at(out, d, i);
            if (!plan_op_is_compute(x->op) || x->mb < 0 || x->mb >= g->mbs || x->stage < 0 ||
                x->stage >= g->stages)
                continue;
            size_t k = ((size_t)x->mb * g->stages + x->stage) * OP__COUNT + pass_diff_kind(x->op);
            if (pos[k] < 0)
                pass_changes_add(ch, PASS_CHANGE_INSERT, d, x, x->op);
            else if (was[k] != x->op)
                pass_changes_add(ch, PASS_CHANGE_RETYPE, d, x, was[k]);
            else if (pos[k] != n)
                pass_changes_add(ch, PASS_CHANGE_MOVE, d, x, x->op);
            pos[k] = -2; /* seen */
            n++;
        }
    for (int d = 0; d < plan_devices(in); d++)
        for (int i = 0; i < plan_len(in, d); i++) {
            const struct instr *x = plan_at(in, d, i);
            if (!plan_op_is_compute(x->op) || x->mb < 0 || x->mb >= g->mbs || x->stage < 0 ||
                x->stage >= g->stages)
                continue;
            size_t k = ((size_t)x->mb * g->stages + x->stage) * OP__COUNT + pass_diff_kind(x->op);
            if (pos[k] >= 0)
                pass_changes_add(ch, PASS_CHANGE_REMOVE, d, x, x->op);
        }
    free(pos);
    free(was);
}

int pass_pipeline_search(struct pass_pipeline *pl, const struct search_opts *o, struct mt_err *e)
{
    if (pl->n < 1 || pl->searched || pl->n >= (int)(sizeof pl->step / sizeof pl->step[0]))
        return err_set(e, MT_EINVAL, "search: no pipeline to search from");
    if (pl->as_given)
        return err_set(e, MT_EUNSUPPORTED,
                       "search: the plan offloads (OF/RL); the search starts from plans "
                       "without copies");
    const struct plan *seeds[sizeof pl->step / sizeof pl->step[0]];
    const char *names[sizeof pl->step / sizeof pl->step[0]];
    for (int i = 0; i < pl->n; i++) {
        seeds[i] = pl->step[i].plan;
        names[i] = pl->step[i].name;
    }
    const struct pass_step *prev = &pl->step[pl->n - 1];
    struct pass_step *st = &pl->step[pl->n];
    memset(st, 0, sizeof *st);
    pass_changes_init(&st->changes);
    st->name = "search";
    st->pass = PASS_SEARCH;
    int rc = search_run(seeds, names, pl->n, o, &st->plan, &st->sim, &pl->search, e);
    if (rc != MT_OK) {
        pass_changes_fini(&st->changes);
        return err_wrap(e, "search");
    }
    int offloaded = 0;
    /* the third lever: checkpointed forwards offloaded where faster; not after a stop (one
     * Esc stops the whole search, not its first phase alone: issue 41 item 6) */
    if (o->offload && !pl->search.stopped) {
        struct plan *q = NULL;
        struct sim_result qs;
        struct search_offload_stats os;
        rc = search_offload(st->plan, pl->step[0].plan, o, &q, &qs, &os, e);
        if (rc != MT_OK) {
            pass_changes_fini(&st->changes);
            plan_free(st->plan);
            sim_result_fini(&st->sim);
            st->plan = NULL;
            return err_wrap(e, "search (offload)");
        }
        plan_free(st->plan);
        sim_result_fini(&st->sim);
        st->plan = q;
        st->sim = qs;
        offloaded = os.offloaded;
        pl->offloaded = offloaded;
        pl->search.improved |= offloaded > 0;
        pl->search.evals += os.evals;
        pl->search.stopped |= os.stopped;
    }
    pass_changes_diff(prev->plan, st->plan, &st->changes);
    st->changes.step_in = prev->sim.step_time;
    st->changes.step_out = st->sim.step_time;
    if (offloaded > 0)
        snprintf(st->changes.note, sizeof st->changes.note,
                 "%d checkpointed forward%s offloaded to host memory instead", offloaded,
                 offloaded == 1 ? "" : "s");
    else if (!pl->search.improved)
        snprintf(st->changes.note, sizeof st->changes.note, "%s",
                 pl->search.fits ? "no faster schedule found; the best start kept"
                                 : "no schedule found under the cap; the lowest peak kept");
    pl->search_cap = o->cap;
    pl->searched = true;
    pl->n++;
    return MT_OK;
}
