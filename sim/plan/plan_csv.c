/* sim/plan/plan_csv.c: torch.distributed.pipelining's schedule CSV (_dump_csv / _load_csv,
 * "compute_only"): one row per pipeline rank, one cell per action in the rank's order, an
 * action written stage index, then F (forward) | I (input-gradient backward) | W (weight
 * gradient) | B (whole backward), then micro-batch: "0F0", "1I3", "0W1", "2B1". An empty cell
 * is a slot torch left idle. Here F is FW, I is B, W is W and torch's B is BW.
 *
 * Loading infers the geometry: ranks = rows, stages and micro-batches from the largest
 * indices, and the placement from where each stage runs: stage s on rank s (scheme V, or
 * ZB-H1 when the backward is split), looped over the ranks, s on rank s mod D (W, or ZB-W),
 * or a V, s and 2D-1-s on rank s (ZB-V, or DualPipeV with whole backwards among split ones).
 * The scheme names the placement; the order is the file's. Sends, receives and the optimizer
 * step are added as for a generated plan (scheme_add_comm), and the plan must validate.
 * Which scheme names a placement and its backwards is the scheme records' torch_csv.
 * A DualPipeV plan's overlapped forward and backward (torch's OVERLAP_F_B) is the cell
 * "(0F3;3B1)OVERLAP_F_B" (_Action's repr of sub_actions); read back as its two actions.
 * A ZeRO-2 / FSDP plan's rows also carry FSDP's "0UNSHARD", "0RESHARD" and "0REDUCE_GRAD"
 * (sim/plan/plan_csv_fsdp.c says where); read back, each must name a stage its row computes
 * and is otherwise left: the simulator prices FSDP from the config, not from the cells.
 * Writing refuses checkpointing (CFW, RC) unless asked to write the order torch runs under the
 * framework's activation checkpointing (CFW as F, no RC), and offload (OF, RL): torch has no
 * spelling for them; and a scheme whose record says torch cannot hold its plans (Chimera: a
 * stage on two ranks). */
#include <config.h>
#include "sim/plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/scheme_registry.h"
#include "sim/schemes/scheme.h"
#include "sim/plan/plan_csv.h"
#include "sim/plan/validate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

static char plan_csv_letter(enum op op)
{
    switch (op) {
    case OP_FW: return 'F';
    case OP_B: return 'I';
    case OP_W: return 'W';
    case OP_BW: return 'B';
    default: return 0;
    }
}

static struct csv_leaf plan_csv_leaf(const struct instr *in)
{
    enum csv_verb v = in->op == OP_FW ? CSV_F : in->op == OP_B ? CSV_I : in->op == OP_W ? CSV_W
                                                                                      : CSV_B;
    return (struct csv_leaf){.verb = v, .stage = in->stage, .mb = in->mb};
}

/* Whether compute instruction a followed by b on a device of a DualPipeV plan is one of torch's
 * overlapped pairs: a forward of one part, then a whole backward of the other (steps 4 and 5
 * of ScheduleDualPipeV._calculate_single_rank_operations, torch/distributed/pipelining/
 * schedules.py, which the scheme builds step for step, sim/schemes/scheme_zbv.c). Torch leaves
 * the last rank's first such pair unoverlapped "to further reduce bubble size": the caller
 * skips it. */
static bool plan_csv_overlapped(const struct instr *a, const struct instr *b)
{
    return a->op == OP_FW && b->op == OP_BW && a->part != b->part;
}

/* Appends cell c as torch's _Action.__repr__ writes it: "0F1", "0UNSHARD",
 * "(0F3;3B1)OVERLAP_F_B" (an action with sub_actions: "(" + ";".join(sub reprs) + ")" +
 * "OVERLAP_F_B"). */
static void plan_csv_put_cell(char **out, size_t *cap, size_t *len, const struct csv_cell *c)
{
    char text[128];
    size_t n = 0;
    for (int j = 0; j < c->n; j++) {
        const struct csv_leaf *l = &c->leaf[j];
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%d%s", j == 0 && c->n > 1 ? "("
                                                                   : j > 0         ? ";"
                                                                                   : "",
                              l->stage, csv_verb_name(l->verb));
        if (csv_verb_has_mb(l->verb))
            n += (size_t)snprintf(text + n, sizeof text - n, "%d", l->mb);
    }
    if (c->n > 1)
        n += (size_t)snprintf(text + n, sizeof text - n, ")OVERLAP_F_B");
    while (*cap - *len < n + 2)
        *out = xreallocarray(*out, *cap *= 2, 1);
    memcpy(*out + *len, text, n + 1);
    *len += n;
}

char *plan_to_torch_csv_opts(const struct plan *p, const struct plan_csv_opts *o,
                             struct mt_err *e)
{
    const struct scheme_record *r = scheme_registry_get(plan_geom(p)->scheme);
    if (r == NULL || r->torch_none != NULL) {
        err_set(e, MT_EUNSUPPORTED, "scheme %s: torch's schedule CSV cannot hold this plan: %s; "
                "save the plan as JSON", config_scheme_name(plan_geom(p)->scheme),
                r != NULL ? r->torch_none : "an unknown scheme");
        return NULL;
    }
    bool ac = o != NULL && o->checkpoints_as_ac;
    bool pairs = plan_geom(p)->scheme == SCHEME_DUALPIPEV;
    bool compute_only = o != NULL && o->compute_only;
    int D = plan_devices(p);
    size_t cap = 256, len = 0;
    char *out = xmalloc(cap);
    out[0] = '\0';
    for (int d = 0; d < D; d++) {
        /* the device's compute instructions in order: F, I, W, B (a CFW as F under the
         * framework's activation checkpointing, which recomputes inside the backward: no RC) */
        struct instr *cmp = xcalloc((size_t)plan_len(p, d) + 1, sizeof *cmp);
        int nc = 0;
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            bool ckpt = in->op == OP_CFW || in->op == OP_RC;
            if (plan_op_is_copy(in->op) || (ckpt && !ac)) {
                char what[32];
                plan_instr_label(p, in, what, sizeof what);
                free(cmp);
                free(out);
                err_set(e, MT_EUNSUPPORTED,
                        "device %d, instruction %d (%s, stage %d): torch's schedule CSV has no "
                        "spelling for %s; save the plan as JSON",
                        d, i, what, in->stage,
                        plan_op_is_copy(in->op) ? "offload (OF/RL)" : "checkpointing (CFW/RC)");
                return NULL;
            }
            if (in->op == OP_RC)
                continue;
            struct instr x = *in;
            if (x.op == OP_CFW)
                x.op = OP_FW;
            if (plan_csv_letter(x.op) != 0)
                cmp[nc++] = x;
        }
        /* the row's cells: an action each, or torch's overlapped pair */
        struct csv_cell *cells = xcalloc((size_t)nc + 1, sizeof *cells);
        int ncell = 0;
        bool first_pair = true;
        for (int j = 0; j < nc; j++) {
            struct csv_cell *cell = &cells[ncell++];
            *cell = (struct csv_cell){.n = 1, .leaf = {plan_csv_leaf(&cmp[j])}};
            if (pairs && j + 1 < nc && plan_csv_overlapped(&cmp[j], &cmp[j + 1])) {
                bool skip = d == D - 1 && first_pair;
                first_pair = false;
                if (!skip) {
                    cell->n = 2;
                    cell->leaf[1] = plan_csv_leaf(&cmp[++j]);
                }
            }
        }
        free(cmp);
        if (!compute_only)
            cells = csv_fsdp_row(plan_config(p), plan_geom(p)->mbs, cells, &ncell);
        for (int j = 0; j < ncell; j++) {
            if (j > 0)
                out[len++] = ','; /* plan_csv_put_cell leaves room for it */
            plan_csv_put_cell(&out, &cap, &len, &cells[j]);
        }
        free(cells);
        if (cap - len < 2)
            out = xreallocarray(out, cap *= 2, 1);
        out[len++] = '\n';
        out[len] = '\0';
    }
    return out;
}

char *plan_to_torch_csv(const struct plan *p, struct mt_err *e)
{
    return plan_to_torch_csv_opts(p, NULL, e);
}

/* One parsed cell. */
struct csv_action {
    int stage, mb;
    enum op op;        /* a compute action's; OP__COUNT for FSDP's */
    enum csv_verb verb;
    int line, col;     /* where it is, for errors */
};

/* Parses "12F3" or FSDP's "0UNSHARD" (with blanks or double quotes around it) into *a. Returns
 * 0 for an empty cell, 1 for an action, -1 for anything else. */
static int plan_csv_cell(const char *s, size_t n, struct csv_action *a)
{
    while (n > 0 && (*s == ' ' || *s == '"'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '"' || s[n - 1] == '\r'))
        n--;
    if (n == 0)
        return 0;
    size_t i = 0, name = 0;
    long stage = 0, mb = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && stage <= CONFIG_MAX_DEVICES * CONFIG_MAX_CHUNKS)
        stage = stage * 10 + (s[i++] - '0');
    if (i == 0 || i == n || stage >= CONFIG_MAX_DEVICES * CONFIG_MAX_CHUNKS ||
        !csv_verb_parse(s + i, n - i, &a->verb, &name))
        return -1;
    a->stage = (int)stage;
    if (!csv_verb_has_mb(a->verb)) { /* FSDP's: the name ends the cell */
        a->op = OP__COUNT;
        a->mb = -1;
        return 1;
    }
    i += name;
    size_t mb_from = i;
    while (i < n && s[i] >= '0' && s[i] <= '9' && mb <= CONFIG_MAX_MICROBATCHES)
        mb = mb * 10 + (s[i++] - '0');
    if (i != n || i == mb_from || mb >= CONFIG_MAX_MICROBATCHES)
        return -1;
    a->op = a->verb == CSV_F ? OP_FW : a->verb == CSV_I ? OP_B : a->verb == CSV_W ? OP_W : OP_BW;
    a->mb = (int)mb;
    return 1;
}

/* Placements a CSV may use (sim/core/vpipe.c). */
static bool csv_place_line(int s, int D, int S) { return S == D && s < D; }
static bool csv_place_loop(int s, int D, int S, int r) { return S % D == 0 && S > D && r == s % D; }
static bool csv_place_v(int s, int D, int S, int r)
{
    return S == 2 * D && r == (s < D ? s : 2 * D - 1 - s);
}

/* A CSV's actions in file order, each with its row (rank). */
struct csv_read {
    struct csv_action *acts;
    int *row_of;
    size_t n, cap;
    size_t compute;  /* of them F, I, W or B (the others FSDP's) */
    int rows;
    int stages, mbs; /* from the largest compute indices (csv_config) */
};

static void csv_read_fini(struct csv_read *r)
{
    free(r->acts);
    free(r->row_of);
}

/* The rows of text: one per rank, a cell per action (empty cells: idle slots). */
static int csv_parse(const char *text, size_t len, const char *name, struct csv_read *r,
                     struct mt_err *e)
{
    int line = 1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        const char *c = p;
        bool blank = true;
        for (const char *q = p; q < eol; q++)
            blank &= *q == ' ' || *q == '\r' || *q == ',';
        if (!blank || eol != end) { /* a last line without a newline still counts */
            if (r->rows == CONFIG_MAX_DEVICES)
                return err_set(e, MT_EINVAL, "%s:%d: more than %d ranks", name, line,
                               CONFIG_MAX_DEVICES);
            while (c <= eol) {
                const char *comma = memchr(c, ',', (size_t)(eol - c));
                if (comma == NULL)
                    comma = eol;
                struct csv_action a = {.line = line, .col = (int)(c - p) + 1};
                /* torch's action with sub_actions, "(0F3;3B1)OVERLAP_F_B" (_Action.from_str):
                 * its sub-actions in order */
                const char *q = c, *qe = comma;
                while (q < qe && (*q == ' ' || *q == '"'))
                    q++;
                while (qe > q && (qe[-1] == ' ' || qe[-1] == '"' || qe[-1] == '\r'))
                    qe--;
                const char *close = q < qe && *q == '(' ? memchr(q, ')', (size_t)(qe - q)) : NULL;
                static const char overlap[] = "OVERLAP_F_B";
                bool group = close != NULL && (size_t)(qe - close - 1) == sizeof overlap - 1 &&
                             memcmp(close + 1, overlap, sizeof overlap - 1) == 0;
                const char *sub = group ? q + 1 : c, *sub_end = group ? close : comma;
                int k = 0;
                while (k >= 0) {
                    const char *semi = group ? memchr(sub, ';', (size_t)(sub_end - sub)) : NULL;
                    const char *cell_end = semi ? semi : sub_end;
                    k = plan_csv_cell(sub, (size_t)(cell_end - sub), &a);
                    if (k < 0 || (group && (k == 0 || a.op == OP__COUNT)))
                        return err_set(e, MT_EPARSE,
                                       "%s:%d:%d: '%.*s' is not a torch action (stage index, "
                                       "then F, I, W or B, then micro-batch, e.g. 0F1 or 2I0; "
                                       "(0F3;3B1)OVERLAP_F_B; or FSDP's stage index, then "
                                       "UNSHARD, RESHARD or REDUCE_GRAD, e.g. 0UNSHARD)",
                                       name, line, a.col, (int)(comma - c < 24 ? comma - c : 24),
                                       c);
                    if (k == 1) {
                        if (r->n == r->cap) {
                            r->cap = r->cap ? 2 * r->cap : 256;
                            r->acts = xreallocarray(r->acts, r->cap, sizeof *r->acts);
                            r->row_of = xreallocarray(r->row_of, r->cap, sizeof *r->row_of);
                        }
                        r->row_of[r->n] = r->rows;
                        r->acts[r->n++] = a;
                        r->compute += a.op != OP__COUNT;
                    }
                    if (semi == NULL)
                        break;
                    sub = semi + 1;
                }
                c = comma + 1;
            }
            r->rows++;
        }
        p = eol + 1;
        line++;
    }
    /* Trailing empty rows are ranks with nothing to do: torch writes none. */
    if (r->compute == 0)
        return err_set(e, MT_EPARSE, "%s: no actions (one row per rank of cells like 0F0)", name);
    return MT_OK;
}

/* The config of the actions read: the scheme that names their placement and backwards (the
 * scheme records' torch_csv), pp the rows, micro-batches and chunks from the largest
 * indices; the rest from base. */
static int csv_config(struct csv_read *r, const char *name, const struct config *base,
                      struct config *c, struct mt_err *e)
{
    int S = 0, N = 0, D = r->rows;
    bool split = false, whole = false;
    for (size_t i = 0; i < r->n; i++) {
        if (r->acts[i].op == OP__COUNT)
            continue; /* FSDP's: checked against the stages below */
        S = r->acts[i].stage + 1 > S ? r->acts[i].stage + 1 : S;
        N = r->acts[i].mb + 1 > N ? r->acts[i].mb + 1 : N;
        split |= r->acts[i].op == OP_B || r->acts[i].op == OP_W;
        whole |= r->acts[i].op == OP_BW;
    }
    r->stages = S;
    r->mbs = N;
    int rc = MT_OK;
    int *rank_of = xmalloc((size_t)S * sizeof(int));
    for (int s = 0; s < S; s++)
        rank_of[s] = -1;
    for (size_t i = 0; i < r->n && rc == MT_OK; i++) {
        int s = r->acts[i].stage;
        if (r->acts[i].op == OP__COUNT)
            continue;
        if (rank_of[s] >= 0 && rank_of[s] != r->row_of[i])
            rc = err_set(e, MT_EINVAL, "%s:%d:%d: stage %d is on rank %d here and on rank %d before",
                         name, r->acts[i].line, r->acts[i].col, s, r->row_of[i], rank_of[s]);
        rank_of[s] = r->row_of[i];
    }
    bool line_ok = true, loop_ok = true, v_ok = true;
    for (int s = 0; s < S && rc == MT_OK; s++) {
        if (rank_of[s] < 0) {
            rc = err_set(e, MT_EINVAL, "%s: stage %d has no action, though stage %d has", name, s,
                         S - 1);
            break;
        }
        line_ok &= csv_place_line(s, D, S) && rank_of[s] == s;
        loop_ok &= csv_place_loop(s, D, S, rank_of[s]);
        v_ok &= csv_place_v(s, D, S, rank_of[s]);
    }
    /* FSDP's actions are not simulated (the config prices FSDP), but each must name a stage
     * its row computes: torch's runtime looks the stage up among the rank's */
    for (size_t i = 0; i < r->n && rc == MT_OK; i++) {
        const struct csv_action *a = &r->acts[i];
        if (a->op == OP__COUNT && (a->stage >= S || rank_of[a->stage] != r->row_of[i]))
            rc = err_set(e, MT_EINVAL,
                         "%s:%d:%d: %d%s names stage %d, which rank %d does not compute",
                         name, a->line, a->col, a->stage, csv_verb_name(a->verb), a->stage,
                         r->row_of[i]);
    }
    free(rank_of);
    TRY(rc);
    *c = *base;
    unsigned backwards = split && whole ? SCHEME_CSV_MIXED
                         : split        ? SCHEME_CSV_SPLIT
                                        : SCHEME_CSV_WHOLE;
    enum scheme_place place = line_ok ? SCHEME_PLACE_LINE
                              : v_ok  ? SCHEME_PLACE_V
                              : loop_ok ? SCHEME_PLACE_LOOP
                                        : SCHEME_PLACE_NONE;
    /* The CSV holds the order, not the scheme: a scheme given (--scheme V-Half) whose placement
     * and backwards the file has names it; else the first record that reads such a file
     * (a V placement with split backwards is ZB-V, V-Half and V-Min alike) */
    const struct scheme_record *given = scheme_registry_get(base->scheme);
    if (given != NULL && place != SCHEME_PLACE_NONE && given->place == place && !given->async &&
        given->split == (backwards != SCHEME_CSV_WHOLE))
        c->scheme = base->scheme;
    else if (!scheme_registry_torch(place, backwards, &c->scheme))
        return err_set(e, MT_EUNSUPPORTED,
                       "%s: %d stages on %d ranks fit none of the placements mario-tui "
                       "simulates: stage s on rank s, looped (s on rank s mod %d), or a V "
                       "(s and %d-s on rank s)",
                       name, S, D, D, 2 * D - 1);
    config_set_pp(c, D);
    c->num_microbatches = N;
    c->global_batch_size = N * c->micro_batch_size * c->cluster.dp;
    c->chunks = S / D > 1 ? S / D : c->chunks;
    c->iterations = 1;
    c->update_interval = 1;
    snprintf(c->source, sizeof c->source, "%s", name);
    return MT_OK;
}

/* The actions as pl's compute order, each (op, mb, stage) once: torch's I and B share a
 * slot, as BW and B do here. */
static int csv_fill(const struct csv_read *r, const char *name, struct plan *pl,
                    struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(pl);
    int S = r->stages, N = r->mbs;
    unsigned char *seen = xcalloc((size_t)3 * S * N, 1);
    int rc = MT_OK;
    for (size_t i = 0; i < r->n; i++) {
        const struct csv_action *a = &r->acts[i];
        if (a->op == OP__COUNT)
            continue; /* FSDP's: read, not simulated */
        int kind = a->op == OP_FW ? 0 : a->op == OP_W ? 2 : 1;
        unsigned char *slot = &seen[((size_t)kind * S + a->stage) * N + a->mb];
        if (*slot) {
            rc = err_set(e, MT_EINVAL, "%s:%d:%d: %d%c%d appears twice", name, a->line, a->col,
                         a->stage, plan_csv_letter(a->op), a->mb);
            break;
        }
        *slot = 1;
        int dev, part;
        vpipe_locate(g, a->mb, a->stage, &dev, &part);
        plan_append(pl, dev, (struct instr){a->op, a->mb, part, a->stage, -1, 0, 0, 0});
    }
    free(seen);
    return rc;
}

int plan_load_torch_csv(const char *text, size_t len, const char *name, const struct config *base,
                        struct plan **out, struct mt_err *e)
{
    *out = NULL;
    struct csv_read r = {0};
    struct config c;
    struct plan_geom g;
    struct plan *pl = NULL;
    int rc = csv_parse(text, len, name, &r, e);
    if (rc == MT_OK)
        rc = csv_config(&r, name, base, &c, e);
    if (rc == MT_OK) {
        rc = scheme_geom(&c, &g, e);
        if (rc != MT_OK)
            err_wrap(e, "%s (as %s, %d ranks, %d stages, %d micro-batches)", name,
                     config_scheme_name(c.scheme), r.rows, r.stages, r.mbs);
    }
    if (rc == MT_OK) {
        pl = plan_new(&c, &g);
        rc = csv_fill(&r, name, pl, e);
    }
    csv_read_fini(&r);
    if (rc == MT_OK) {
        scheme_add_comm(pl);
        rc = validate_plan_input(pl, e);
        if (rc != MT_OK)
            err_wrap(e, "%s", name);
    }
    if (rc != MT_OK) {
        plan_free(pl);
        return rc;
    }
    *out = pl;
    return MT_OK;
}

int plan_load_torch_csv_file(const char *path, const struct config *base, struct plan **out,
                             struct mt_err *e)
{
    char *text = NULL;
    size_t len = 0;
    TRY(str_read_file(path, 64u << 20, &text, &len, e));
    int rc = plan_load_torch_csv(text, len, path, base, out, e);
    free(text);
    return rc;
}

bool plan_path_is_csv(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && strcasecmp(path + n - 4, ".csv") == 0;
}
