/* sim/inputs/ckpt_plan.c: input-aware checkpointing, Mimose (Liao et al., arXiv:2209.02478) on the
 * plans Mario's passes make (paper §5.1): Mario decides where recompute runs (in the bubbles),
 * this file decides, per input length, which layers are recomputed at all.
 *
 * The template. The config's plan after the four passes with every forward checkpointed. Its
 * instruction order is kept for every length and choice: a choice k[stage] (0..n layers) only
 * sets what each CFW keeps (the checkpoint and the other n - k layers, sim/core/memory.h
 * mem_forward_keep), how long its RC runs (k/n of the stage's recompute), and for k = 0 turns
 * the stage's CFWs back into FWs without RC, as pass 3 does. Such a plan is valid whenever the
 * template is (RC only ever depended on its CFW).
 *
 * The memory profile. A device's memory walk (sim_memory) visits its instructions in program
 * order, so it does not depend on times: at every instruction that takes memory the device
 * holds, per stage j it runs, x_j checkpointed and y_j full activations and u_j message
 * buffers (counted in the stage whose instruction took or gave them back); the dynamic memory
 * there is sum_j x_j keep_j(k_j) + y_j act_j(s) + u_j msg_j(s). The profile keeps those (x, y)
 * points, without the ones another point dominates, and a device's peak for any (s, k) is a max
 * over them: exact, and a few hundred operations.
 *
 * The planners. Feasibility is monotone (more layers checkpointed never keeps more) and so is
 * the simulated step time (longer RCs never end anything earlier in a fixed-order list
 * schedule), so the best choice is a minimal fitting one. Stages are coupled only through the
 * devices that hold them (X: stages j and D-1-j share two devices; W: a device's chunks), so
 * each group of coupled stages is solved alone.
 *   Greedy (Mimose §4.3): from no checkpointing, while a device of the group is over the cap,
 *   checkpoint one more layer of the stage whose next layer saves the most peak bytes per
 *   microsecond of recompute; then un-checkpoint layers while everything still fits (so the
 *   result is minimal). In a group of one stage (V, GPipe) this is the least k that fits,
 *   which is optimal; elsewhere it is a heuristic.
 *   Exact: every choice of each group is tested (mixed-radix enumeration, a bitmap of the
 *   fitting ones), the minimal fitting ones kept; every combination of those across groups is
 *   simulated unless a lower bound (a device's busy time) already loses to the best so far.
 *   Bounded (CKPT_PLAN_EXACT_*): past the bounds it reports MT_EUNSUPPORTED, not a guess.
 *
 * The cache keeps a choice per length bucket: a batch of s tokens is planned at its bucket's
 * longest length, so the choice fits every batch of the bucket (bytes grow with s). */
#include <config.h>
#include "sim/inputs/ckpt_plan_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/seqlen.h"
#include "sim/core/memory.h"
#include "sim/passes/pass.h"
#include "sim/schemes/scheme.h"
#include "util/err.h"
#include "util/xalloc.h"

/* ---------------------------------------------------------------------------------------
 * Building: the template and its profile
 * ------------------------------------------------------------------------------------- */

static int cp_find(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* Point kinds: the memory after an instruction that takes some (CP_PT_PLAIN), or what a
 * running instruction holds with its calibrated transient (mem_transient in
 * sim/core/memory.h): kind 1 + 4 j + t for the device's j-th stage, t = CP_PT_FW (after a FW, plus
 * its work bytes), CP_PT_CFW (before a CFW, plus the larger of what it keeps and its peak; a
 * FW's when the choice makes it one), CP_PT_BW (before a BW or B, plus the larger of its
 * input gradient's buffer and its work bytes), CP_PT_W (before a W, plus its work bytes). */
enum { CP_PT_PLAIN = 0, CP_PT_FW = 0, CP_PT_CFW = 1, CP_PT_BW = 2, CP_PT_W = 3, CP_PT__COUNT = 4 };

/* Adds the point (x, y, u, kind) to device d's list unless a point of the same kind dominates
 * it (as many full activations, as many in flight and as many buffers, of every stage),
 * dropping those it dominates. Points are 3m + 1 ints: x of each stage, y of each stage, u of
 * each stage, the kind. */
static void cp_point_add(int m, const int *x, const int *y, const int *u, int kind, int **pts,
                         int *npts, int *cap)
{
    int stride = 3 * m + 1;
    for (int q = 0; q < *npts; q++) {
        const int *o = *pts + (size_t)q * stride;
        if (o[3 * m] != kind)
            continue;
        bool ge = true, le = true;
        for (int t = 0; t < m; t++) {
            int ox = o[t], oy = o[m + t], ou = o[2 * m + t];
            if (oy < y[t] || ox + oy < x[t] + y[t] || ou < u[t])
                ge = false;
            if (oy > y[t] || ox + oy > x[t] + y[t] || ou > u[t])
                le = false;
        }
        if (ge)
            return;
        if (le) { /* the new point covers o: drop o */
            memmove(*pts + (size_t)q * stride, *pts + (size_t)(q + 1) * stride,
                    (size_t)(*npts - q - 1) * stride * sizeof(int));
            (*npts)--;
            q--;
        }
    }
    if (*npts == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *pts = xreallocarray(*pts, (size_t)*cap, (size_t)stride * sizeof(int));
    }
    int *o = *pts + (size_t)*npts * stride;
    for (int t = 0; t < m; t++) {
        o[t] = x[t];
        o[m + t] = y[t];
        o[2 * m + t] = u[t];
    }
    o[3 * m] = kind;
    (*npts)++;
}

/* Adds the counts of t to stage j's (x: checkpoints, y: full activations, u: buffers). */
static void cp_terms_add(int j, struct mem_terms t, int sign, int *x, int *y, int *u)
{
    x[j] += sign * t.keep;
    y[j] += sign * t.act;
    u[j] += sign * t.msg;
}

/* Profile points of device d: its memory walk in program order (sim_memory) in counts: what
 * each instruction takes at its start and gives back at its end (sim/core/memory.h mem_rule), a
 * send's buffer reaped after the instruction that follows it (mem_step_next). The points are
 * where the walk can peak: after a take, and a running instruction's transient (FW: after its
 * give; CFW, BW, B, W: before it, the transient covering their take; a CFW also after its
 * take, as it is a FW when its stage checkpoints nothing). */
static void cp_profile_device(const struct ckpt_plan *cp, int d, int **pts, int *npts, int *cap)
{
    const struct plan *p = cp->tmpl;
    int m = cp->dev_nst[d];
    const int *st = &cp->dev_st[d * cp->parts];
    int x[CONFIG_MAX_CHUNKS * 2] = {0}, y[CONFIG_MAX_CHUNKS * 2] = {0};
    int u[CONFIG_MAX_CHUNKS * 2] = {0};
    int sent = -1; /* the stage of the send before this instruction, its buffer reaped after it */
    for (int i = 0; i < plan_len(p, d); i++) {
        const struct instr *in = plan_at(p, d, i);
        int j = 0;
        while (j < m && st[j] != in->stage)
            j++;
        int reap = sent;
        sent = -1;
        if (j == m)
            continue;
        enum op op = in->op;
        struct mem_rule r = mem_rule(op, in->stage == 0, in->stage == cp->stages - 1);
        int kind = -1; /* the transient measured before the instruction */
        if (op == OP_CFW)
            kind = CP_PT_CFW;
        else if (op == OP_BW || op == OP_B)
            kind = CP_PT_BW;
        else if (op == OP_W)
            kind = CP_PT_W;
        if (kind >= 0)
            cp_point_add(m, x, y, u, 1 + CP_PT__COUNT * j + kind, pts, npts, cap);
        cp_terms_add(j, r.take, +1, x, y, u);
        if (op == OP_FW || op == OP_CFW || op == OP_RC || vpipe_is_recv(op))
            cp_point_add(m, x, y, u, CP_PT_PLAIN, pts, npts, cap);
        cp_terms_add(j, r.give, -1, x, y, u);
        if (op == OP_FW)
            cp_point_add(m, x, y, u, 1 + CP_PT__COUNT * j + CP_PT_FW, pts, npts, cap);
        if (vpipe_is_send(op))
            sent = j;
        if (reap >= 0)
            u[reap] -= 1; /* mem_send_buffer: one buffer of the sender's stage */
    }
}

static int cp_profile(struct ckpt_plan *cp, struct mt_err *e)
{
    const struct plan *p = cp->tmpl;
    int D = cp->devices, P = cp->parts, S = cp->stages;
    cp->dev_nst = xcalloc((size_t)D, sizeof(int));
    cp->dev_st = xmalloc((size_t)D * P * sizeof(int));
    cp->dev_rc = xcalloc((size_t)D * P, sizeof(int));
    for (int d = 0; d < D; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (!plan_op_is_compute(in->op))
                continue;
            if (in->stage < 0 || in->stage >= S)
                return err_set(e, MT_EINVAL, "template: device %d runs stage %d of %d", d,
                               in->stage, S);
            int j = 0, m = cp->dev_nst[d];
            while (j < m && cp->dev_st[d * P + j] != in->stage)
                j++;
            if (j == m) {
                if (m == P)
                    return err_set(e, MT_EUNSUPPORTED,
                                   "template: device %d runs more than %d stages", d, P);
                cp->dev_st[d * P + m] = in->stage;
                cp->dev_nst[d]++;
            }
            if (in->op == OP_RC)
                cp->dev_rc[d * P + j]++;
        }
    /* points, device after device, each with its own stride 3 * dev_nst[d] + 1 */
    cp->pt_off = xmalloc((size_t)D * sizeof(int));
    cp->pt_n = xmalloc((size_t)D * sizeof(int));
    size_t used = 0, room = 0;
    for (int d = 0; d < D; d++) {
        int *dp = NULL, n = 0, c = 0;
        cp_profile_device(cp, d, &dp, &n, &c);
        size_t ints = (size_t)n * (3 * cp->dev_nst[d] + 1);
        if (used + ints + 1 > room) {
            room = 2 * (used + ints + 1);
            cp->pt = xreallocarray(cp->pt, room, sizeof(int));
        }
        if (ints > 0)
            memcpy(cp->pt + used, dp, ints * sizeof(int));
        cp->pt_off[d] = (int)used;
        cp->pt_n[d] = n;
        used += ints;
        free(dp);
    }
    /* stage -> devices */
    cp->st_off = xcalloc((size_t)S + 1, sizeof(int));
    for (int d = 0; d < D; d++)
        for (int j = 0; j < cp->dev_nst[d]; j++)
            cp->st_off[cp->dev_st[d * P + j] + 1]++;
    for (int j = 0; j < S; j++)
        cp->st_off[j + 1] += cp->st_off[j];
    cp->st_dev = xmalloc(((size_t)cp->st_off[S] + 1) * sizeof(int));
    int *fill = xcalloc((size_t)S, sizeof(int));
    for (int d = 0; d < D; d++)
        for (int j = 0; j < cp->dev_nst[d]; j++) {
            int s = cp->dev_st[d * P + j];
            cp->st_dev[cp->st_off[s] + fill[s]++] = d;
        }
    free(fill);
    /* groups: stages joined through the devices that run them */
    int *parent = xmalloc((size_t)S * sizeof(int));
    for (int j = 0; j < S; j++)
        parent[j] = j;
    for (int d = 0; d < D; d++)
        for (int j = 1; j < cp->dev_nst[d]; j++) {
            int a = cp_find(parent, cp->dev_st[d * P]), b = cp_find(parent, cp->dev_st[d * P + j]);
            if (a != b)
                parent[b] = a;
        }
    cp->grp_of = xmalloc((size_t)S * sizeof(int));
    int *root_grp = xmalloc((size_t)S * sizeof(int));
    for (int j = 0; j < S; j++)
        root_grp[j] = -1;
    cp->ngroups = 0;
    for (int j = 0; j < S; j++) {
        int r = cp_find(parent, j);
        if (root_grp[r] < 0)
            root_grp[r] = cp->ngroups++;
        cp->grp_of[j] = root_grp[r];
    }
    cp->grp_off = xcalloc((size_t)cp->ngroups + 1, sizeof(int));
    for (int j = 0; j < S; j++)
        cp->grp_off[cp->grp_of[j] + 1]++;
    for (int g = 0; g < cp->ngroups; g++)
        cp->grp_off[g + 1] += cp->grp_off[g];
    cp->grp_st = xmalloc((size_t)S * sizeof(int));
    int *gfill = xcalloc((size_t)cp->ngroups, sizeof(int));
    for (int j = 0; j < S; j++)
        cp->grp_st[cp->grp_off[cp->grp_of[j]] + gfill[cp->grp_of[j]]++] = j;
    free(gfill);
    free(root_grp);
    free(parent);
    return MT_OK;
}

int ckpt_plan_new(const struct config *c, int template_len, struct ckpt_plan **out,
                  struct mt_err *e)
{
    *out = NULL;
    if (c->unit.enabled)
        return err_set(e, MT_EUNSUPPORTED,
                       "unit costs do not depend on the sequence length: input-aware planning "
                       "needs the analytic costs (drop --unit-costs)");
    if (config_scheme_async(c->scheme) || config_scheme_split(c->scheme))
        return err_set(e, MT_EUNSUPPORTED,
                       "%s: input-aware planning covers the synchronous schemes with a whole "
                       "backward (V, X, W, GPipe); its memory profile has no term for what a "
                       "split B keeps for its W",
                       config_scheme_name(c->scheme));
    struct ckpt_plan *cp = xcalloc(1, sizeof *cp);
    cp->cfg = *c;
    /* The position table stays the model's, whatever length is planned. */
    cp->cfg.seqlen.max_positions = seqlen_limit(c);
    if (template_len > 0)
        cp->cfg.model.seq_length = template_len;
    cp->cap = c->memory_per_device > 0 ? config_mem_cap(c) : c->cluster.device.mem_bytes - config_reserve(c);
    struct plan *base = NULL;
    struct pass_pipeline pl;
    int rc = scheme_build(&cp->cfg, &base, e);
    if (rc == MT_OK)
        rc = pass_pipeline_run(base, &pl, e);
    plan_free(base);
    if (rc != MT_OK) {
        free(cp);
        return rc;
    }
    cp->tmpl = plan_clone(pass_pipeline_final(&pl)->plan);
    pass_pipeline_fini(&pl);
    const struct plan_geom *g = plan_geom(cp->tmpl);
    cp->stages = g->stages;
    cp->devices = g->devices;
    cp->parts = g->parts;
    struct cost_model cost;
    rc = scheme_costs(&cp->cfg, &cost, e);
    if (rc == MT_OK) {
        cp->layers = xmalloc((size_t)cp->stages * sizeof(int));
        cp->first = xmalloc((size_t)cp->stages * sizeof(int));
        for (int j = 0; j < cp->stages; j++) {
            cp->layers[j] = cost.stage[j].num_layers;
            cp->first[j] = cost.stage[j].first_layer;
        }
        cost_model_fini(&cost);
        rc = cp_profile(cp, e);
    }
    if (rc != MT_OK) {
        ckpt_plan_free(cp);
        return rc;
    }
    *out = cp;
    return MT_OK;
}

void ckpt_plan_free(struct ckpt_plan *cp)
{
    if (cp == NULL)
        return;
    plan_free(cp->tmpl);
    free(cp->layers);
    free(cp->first);
    free(cp->dev_nst);
    free(cp->dev_st);
    free(cp->dev_rc);
    free(cp->pt_off);
    free(cp->pt_n);
    free(cp->pt);
    free(cp->st_off);
    free(cp->st_dev);
    free(cp->grp_off);
    free(cp->grp_st);
    free(cp->grp_of);
    free(cp);
}

const struct plan *ckpt_plan_template(const struct ckpt_plan *cp)
{
    return cp->tmpl;
}
const struct config *ckpt_plan_config(const struct ckpt_plan *cp)
{
    return &cp->cfg;
}
int ckpt_plan_stages(const struct ckpt_plan *cp)
{
    return cp->stages;
}
int ckpt_plan_devices(const struct ckpt_plan *cp)
{
    return cp->devices;
}
int ckpt_plan_stage_layers(const struct ckpt_plan *cp, int stage)
{
    return cp->layers[stage];
}
int ckpt_plan_first_layer(const struct ckpt_plan *cp, int stage)
{
    return cp->first[stage];
}
double ckpt_plan_cap(const struct ckpt_plan *cp)
{
    return cp->cap;
}

void ckpt_plan_all(const struct ckpt_plan *cp, int *k)
{
    for (int j = 0; j < cp->stages; j++)
        k[j] = cp->layers[j];
}

/* ---------------------------------------------------------------------------------------
 * Peaks
 * ------------------------------------------------------------------------------------- */

void ckpt_plan_set_bytes(struct ckpt_plan *cp, ckpt_plan_bytes_fn fn, void *ctx)
{
    cp->bytes = fn;
    cp->bytes_ctx = ctx;
}

int ckpt_plan_costs(const struct ckpt_plan *cp, int s, struct cost_model *out, struct mt_err *e)
{
    struct config cs = cp->cfg;
    cs.model.seq_length = s;
    TRY(scheme_costs(&cs, out, e));
    if (cp->bytes != NULL)
        cp->bytes(s, out, cp->bytes_ctx);
    return MT_OK;
}

/* What the running instruction of point kind t (1 + CP_PT__COUNT j + t) holds beyond the
 * point's own count: mem_transient over nothing held, for a FW with its take and give already
 * in the count (the point is after them), for the others with their whole step (the point is
 * before them; a CFW of a stage that checkpoints nothing is a FW). */
static double cp_transient(const struct ckpt_plan *cp, const struct cp_mem *mm, int j, int t)
{
    const struct stage_cost *sc = &mm->cost->stage[j];
    enum op op = t == CP_PT_FW || (t == CP_PT_CFW && mm->none[j]) ? OP_FW
                 : t == CP_PT_CFW                               ? OP_CFW
                 : t == CP_PT_BW                                ? OP_BW
                                                                : OP_W;
    struct instr in = {.op = op, .stage = j};
    struct mem_step step = {0, 0, 0};
    if (t != CP_PT_FW) {
        struct mem_rule r = mem_rule(op, j == 0, j == cp->stages - 1);
        step.take = mem_terms_bytes(r.take, mm->keep[j], sc->act, sc->msg_bytes, sc->w_keep);
        step.give = mem_terms_bytes(r.give, mm->keep[j], sc->act, sc->msg_bytes, sc->w_keep);
    }
    return mem_transient(mm->cost, &in, 0, step);
}

/* Dynamic peak of device d (>= 0, as sim_memory starts from nothing held). */
double cp_dev_dyn(const struct ckpt_plan *cp, int d, const struct cp_mem *mm)
{
    int m = cp->dev_nst[d];
    const int *st = &cp->dev_st[d * cp->parts];
    const int *p = cp->pt + cp->pt_off[d];
    const struct stage_cost *sc = mm->cost->stage;
    double best = 0;
    for (int i = 0; i < cp->pt_n[d]; i++, p += 3 * m + 1) {
        double v = 0;
        for (int j = 0; j < m; j++)
            v += p[j] * mm->keep[st[j]] + p[m + j] * sc[st[j]].act +
                 p[2 * m + j] * sc[st[j]].msg_bytes;
        if (p[3 * m] != CP_PT_PLAIN)
            v += cp_transient(cp, mm, st[(p[3 * m] - 1) / CP_PT__COUNT],
                              (p[3 * m] - 1) % CP_PT__COUNT);
        if (v > best)
            best = v;
    }
    return best;
}

double cp_dev_static(const struct ckpt_plan *cp, const struct cost_model *cost, int d)
{
    const struct plan_geom *g = plan_geom(cp->tmpl);
    double v = 0;
    for (int part = 0; part < g->parts; part++)
        v += cost->stage[vpipe_stage(g, d, 0, part)].static_bytes;
    return v;
}

void ckpt_plan_peaks(const struct ckpt_plan *cp, const struct cost_model *cost, const int *k,
                     double *peak)
{
    double *keep = xmalloc((size_t)cp->stages * sizeof(double));
    unsigned char *none = xmalloc((size_t)cp->stages);
    for (int j = 0; j < cp->stages; j++) {
        keep[j] = mem_forward_keep(&cost->stage[j], k[j]);
        none[j] = k[j] <= 0;
    }
    struct cp_mem mm = {keep, none, cost};
    for (int d = 0; d < cp->devices; d++)
        peak[d] = cp_dev_static(cp, cost, d) + cp_dev_dyn(cp, d, &mm);
    free(keep);
    free(none);
}
