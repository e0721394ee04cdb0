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
 * Writing refuses checkpointing (CFW, RC) and offload (OF, RL): torch has no spelling for them;
 * and a scheme whose record says torch cannot hold its plans (Chimera: a stage on two ranks). */
#include <config.h>
#include "sim/plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/scheme_registry.h"
#include "sim/schemes/scheme.h"
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

char *plan_to_torch_csv(const struct plan *p, struct mt_err *e)
{
    const struct scheme_record *r = scheme_registry_get(plan_geom(p)->scheme);
    if (r == NULL || r->torch_none != NULL) {
        err_set(e, MT_EUNSUPPORTED, "scheme %s: torch's schedule CSV cannot hold this plan: %s; "
                "save the plan as JSON", config_scheme_name(plan_geom(p)->scheme),
                r != NULL ? r->torch_none : "an unknown scheme");
        return NULL;
    }
    size_t cap = 256, len = 0;
    char *out = xmalloc(cap);
    for (int d = 0; d < plan_devices(p); d++) {
        int cells = 0;
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (in->op == OP_CFW || in->op == OP_RC || plan_op_is_copy(in->op)) {
                char what[32];
                plan_instr_label(p, in, what, sizeof what);
                free(out);
                err_set(e, MT_EUNSUPPORTED,
                        "device %d, instruction %d (%s, stage %d): torch's schedule CSV has no "
                        "spelling for %s; save the plan as JSON",
                        d, i, what, in->stage,
                        plan_op_is_copy(in->op) ? "offload (OF/RL)" : "checkpointing (CFW/RC)");
                return NULL;
            }
            char c = plan_csv_letter(in->op);
            if (c == 0)
                continue;
            if (cap - len < 48)
                out = xreallocarray(out, cap *= 2, 1);
            len += (size_t)snprintf(out + len, cap - len, "%s%d%c%d", cells++ ? "," : "",
                                    in->stage, c, in->mb);
        }
        if (cap - len < 2)
            out = xreallocarray(out, cap *= 2, 1);
        out[len++] = '\n';
        out[len] = '\0';
    }
    return out;
}

/* One parsed cell. */
struct csv_action {
    int stage, mb;
    enum op op;
    int line, col; /* where it is, for errors */
};

/* Parses "12F3" (with blanks or double quotes around it) into *a. Returns 0 for an empty cell,
 * 1 for an action, -1 for anything else. */
static int plan_csv_cell(const char *s, size_t n, struct csv_action *a)
{
    while (n > 0 && (*s == ' ' || *s == '"'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '"' || s[n - 1] == '\r'))
        n--;
    if (n == 0)
        return 0;
    size_t i = 0;
    long stage = 0, mb = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && stage <= CONFIG_MAX_DEVICES * CONFIG_MAX_CHUNKS)
        stage = stage * 10 + (s[i++] - '0');
    if (i == 0 || i == n)
        return -1;
    char c = s[i++];
    size_t mb_from = i;
    while (i < n && s[i] >= '0' && s[i] <= '9' && mb <= CONFIG_MAX_MICROBATCHES)
        mb = mb * 10 + (s[i++] - '0');
    if (i != n || i == mb_from || stage >= CONFIG_MAX_DEVICES * CONFIG_MAX_CHUNKS ||
        mb >= CONFIG_MAX_MICROBATCHES)
        return -1;
    a->op = c == 'F' ? OP_FW : c == 'I' ? OP_B : c == 'W' ? OP_W : c == 'B' ? OP_BW : OP__COUNT;
    if (a->op == OP__COUNT)
        return -1;
    a->stage = (int)stage;
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
    int rows;
    int stages, mbs; /* from the largest indices (csv_config) */
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
                int k = plan_csv_cell(c, (size_t)(comma - c), &a);
                if (k < 0)
                    return err_set(e, MT_EPARSE,
                                   "%s:%d:%d: '%.*s' is not a torch action (stage index, then "
                                   "F, I, W or B, then micro-batch, e.g. 0F1 or 2I0)",
                                   name, line, a.col, (int)(comma - c < 24 ? comma - c : 24), c);
                if (k == 1) {
                    if (r->n == r->cap) {
                        r->cap = r->cap ? 2 * r->cap : 256;
                        r->acts = xreallocarray(r->acts, r->cap, sizeof *r->acts);
                        r->row_of = xreallocarray(r->row_of, r->cap, sizeof *r->row_of);
                    }
                    r->row_of[r->n] = r->rows;
                    r->acts[r->n++] = a;
                }
                c = comma + 1;
            }
            r->rows++;
        }
        p = eol + 1;
        line++;
    }
    /* Trailing empty rows are ranks with nothing to do: torch writes none. */
    if (r->n == 0)
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
