/* sim/ckpt_plan.c: input-aware checkpointing, Mimose (Liao et al., arXiv:2209.02478) on the
 * plans Mario's passes make (paper §5.1): Mario decides where recompute runs (in the bubbles),
 * this file decides, per input length, which layers are recomputed at all.
 *
 * The template. The config's plan after the four passes with every forward checkpointed. Its
 * instruction order is kept for every length and choice: a choice k[stage] (0..n layers) only
 * sets what each CFW keeps (the checkpoint and the other n - k layers, sim/memory.h
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
#include "sim/ckpt_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/seqlen.h"
#include "sim/memory.h"
#include "sim/pass.h"
#include "sim/plan.h"
#include "sim/scheme.h"
#include "sim/simulate.h"
#include "sim/validate.h"
#include "sim/vpipe.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* Relative slack of "fits the cap": the profile and the simulator sum the same terms in a
 * different order. */
#define CKPT_PLAN_EPS 1e-9

struct ckpt_plan {
    struct config cfg; /* the planned config; seqlen.max_positions fixed */
    struct plan *tmpl; /* owned: the template */
    int stages, devices, parts;
    double cap;
    int *layers, *first; /* [stages] */
    /* per device: the stages it runs (dev_st[d * parts + j], j < dev_nst[d]) */
    int *dev_nst, *dev_st;
    /* per device: RC instructions of each of its stages in the template, [d * parts + j] */
    int *dev_rc;
    /* per device: profile points, pt_n[d] of them from pt[pt_off[d]], 3 * dev_nst[d] + 1 ints
     * each (x of each stage, then y, then u, then the kind) */
    int *pt_off, *pt_n, *pt;
    /* per stage: the devices that run it, st_dev[st_off[j] .. st_off[j + 1]) */
    int *st_off, *st_dev;
    /* groups of coupled stages: stages grp_st[grp_off[g] .. grp_off[g + 1]) */
    int ngroups;
    int *grp_off, *grp_st, *grp_of;
    ckpt_plan_bytes_fn bytes; /* NULL: the analytic bytes */
    void *bytes_ctx;
};

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
 * sim/memory.h): kind 1 + 4 j + t for the device's j-th stage, t = CP_PT_FW (after a FW, plus
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

/* Profile points of device d: its memory walk in program order (sim_memory: what each
 * instruction takes at its start and gives back at its end, a send's buffer reaped after
 * the instruction that follows it: mem_device_take_give). */
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
        int in_msg = in->stage > 0, out_msg = in->stage < cp->stages - 1;
        switch (in->op) {
        case OP_FW:
            y[j]++;
            u[j] += out_msg;
            cp_point_add(m, x, y, u, CP_PT_PLAIN, pts, npts, cap);
            u[j] -= in_msg;
            cp_point_add(m, x, y, u, 1 + CP_PT__COUNT * j + CP_PT_FW, pts, npts, cap);
            break;
        case OP_CFW:
            cp_point_add(m, x, y, u, 1 + CP_PT__COUNT * j + CP_PT_CFW, pts, npts, cap);
            x[j]++;
            u[j] += out_msg;
            cp_point_add(m, x, y, u, CP_PT_PLAIN, pts, npts, cap);
            u[j] -= in_msg;
            break;
        case OP_RC:
            x[j]--, y[j]++;
            cp_point_add(m, x, y, u, CP_PT_PLAIN, pts, npts, cap);
            break;
        case OP_BW:
        case OP_B:
        case OP_W:
            cp_point_add(m, x, y, u, 1 + CP_PT__COUNT * j + (in->op == OP_W ? CP_PT_W : CP_PT_BW),
                         pts, npts, cap);
            if (in->op != OP_B) /* BW and W free the activations (mem_device_take_give) */
                y[j]--;
            if (in->op != OP_W) /* its input gradient's buffer, its received gradient's */
                u[j] += in_msg - out_msg;
            break;
        case OP_RA:
        case OP_RG:
            u[j]++;
            cp_point_add(m, x, y, u, CP_PT_PLAIN, pts, npts, cap);
            break;
        case OP_SA:
        case OP_SG: sent = j; break;
        default: break;
        }
        if (reap >= 0)
            u[reap]--;
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
    if (config_scheme_async(c->scheme))
        return err_set(e, MT_EUNSUPPORTED,
                       "%s: input-aware planning covers the synchronous schemes (V, X, W, GPipe)",
                       config_scheme_name(c->scheme));
    struct ckpt_plan *cp = xcalloc(1, sizeof *cp);
    cp->cfg = *c;
    /* The position table stays the model's, whatever length is planned. */
    cp->cfg.seqlen.max_positions = seqlen_limit(c);
    if (template_len > 0)
        cp->cfg.model.seq_length = template_len;
    cp->cap = c->memory_per_device > 0 ? c->memory_per_device : c->cluster.device.mem_bytes;
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

/* What a choice makes of every stage's memory: keep[j] (what a forward keeps), none[j] (k = 0:
 * its forwards are FWs), and the costs (act and the transients). */
struct cp_mem {
    const double *keep;
    const unsigned char *none;
    const struct stage_cost *sc; /* [stages] */
};

/* Dynamic peak of device d (>= 0, as sim_memory starts from nothing held). */
static double cp_dev_dyn(const struct ckpt_plan *cp, int d, const struct cp_mem *mm)
{
    int m = cp->dev_nst[d];
    const int *st = &cp->dev_st[d * cp->parts];
    const int *p = cp->pt + cp->pt_off[d];
    double best = 0;
    for (int i = 0; i < cp->pt_n[d]; i++, p += 3 * m + 1) {
        double v = 0;
        for (int j = 0; j < m; j++)
            v += p[j] * mm->keep[st[j]] + p[m + j] * mm->sc[st[j]].act +
                 p[2 * m + j] * mm->sc[st[j]].msg_bytes;
        if (p[3 * m] != CP_PT_PLAIN) {
            int j = st[(p[3 * m] - 1) / CP_PT__COUNT], t = (p[3 * m] - 1) % CP_PT__COUNT;
            const struct stage_cost *sc = &mm->sc[j];
            /* the buffers of its input and output (mem_device_take_give) */
            double in_msg = j > 0 ? sc->msg_bytes : 0;
            double out_msg = j < cp->stages - 1 ? sc->msg_bytes : 0;
            if (t == CP_PT_FW)
                v += sc->fw_work_bytes;
            else if (t == CP_PT_BW)
                v += fmax(in_msg, sc->bw_work_bytes);
            else if (t == CP_PT_W)
                v += sc->bw_work_bytes;
            else if (mm->none[j])
                v += sc->act + out_msg - in_msg + sc->fw_work_bytes;
            else
                v += fmax(mm->keep[j] + out_msg, sc->cfw_peak_bytes);
        }
        if (v > best)
            best = v;
    }
    return best;
}

static double cp_dev_static(const struct ckpt_plan *cp, const struct cost_model *cost, int d)
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
    struct cp_mem mm = {keep, none, cost->stage};
    for (int d = 0; d < cp->devices; d++)
        peak[d] = cp_dev_static(cp, cost, d) + cp_dev_dyn(cp, d, &mm);
    free(keep);
    free(none);
}

/* ---------------------------------------------------------------------------------------
 * Solving
 * ------------------------------------------------------------------------------------- */

/* Per-length working state of a solve. */
struct cp_solve {
    const struct ckpt_plan *cp;
    struct cost_model cost;
    int s;
    double *keep, *stat, *dyn; /* [stages] [devices] [devices] */
    unsigned char *none;       /* [stages]: k = 0 */
    struct cp_mem mm;          /* keep, none and the costs */
    double *rc1;               /* [stages]: recompute time of one layer, us */
};

static void cp_solve_fini(struct cp_solve *w)
{
    cost_model_fini(&w->cost);
    free(w->keep);
    free(w->none);
    free(w->stat);
    free(w->rc1);
}

static int cp_solve_init(struct cp_solve *w, const struct ckpt_plan *cp, int s, struct mt_err *e)
{
    memset(w, 0, sizeof *w);
    w->cp = cp;
    w->s = s;
    TRY(ckpt_plan_costs(cp, s, &w->cost, e));
    int S = cp->stages, D = cp->devices;
    w->keep = xmalloc((size_t)S * sizeof(double));
    w->none = xcalloc((size_t)S, 1);
    w->mm = (struct cp_mem){w->keep, w->none, w->cost.stage};
    w->stat = xmalloc((size_t)D * 2 * sizeof(double));
    w->dyn = w->stat + D;
    w->rc1 = xmalloc((size_t)S * sizeof(double));
    for (int j = 0; j < S; j++) {
        w->keep[j] = w->cost.stage[j].act;
        w->none[j] = 1;
        w->rc1[j] = cp->layers[j] > 0 ? w->cost.stage[j].rc / cp->layers[j] : 0;
    }
    for (int d = 0; d < D; d++)
        w->stat[d] = cp_dev_static(cp, &w->cost, d);
    return MT_OK;
}

static bool cp_over(const struct cp_solve *w, int d)
{
    return w->stat[d] + w->dyn[d] > w->cp->cap * (1 + CKPT_PLAN_EPS);
}

/* Sets keep[j] for k[j] and refreshes the peaks of the devices running j. */
static void cp_set(struct cp_solve *w, const int *k, int j)
{
    const struct ckpt_plan *cp = w->cp;
    w->keep[j] = mem_forward_keep(&w->cost.stage[j], k[j]);
    w->none[j] = k[j] <= 0;
    for (int i = cp->st_off[j]; i < cp->st_off[j + 1]; i++) {
        int d = cp->st_dev[i];
        w->dyn[d] = cp_dev_dyn(cp, d, &w->mm);
    }
}

/* Every layer checkpointed: the least any choice keeps. MT_EINVAL naming the worst device. */
static int cp_check_all(struct cp_solve *w, int *k, struct mt_err *e)
{
    const struct ckpt_plan *cp = w->cp;
    ckpt_plan_all(cp, k);
    for (int j = 0; j < cp->stages; j++) {
        w->keep[j] = mem_forward_keep(&w->cost.stage[j], k[j]);
        w->none[j] = k[j] <= 0;
    }
    int worst = -1;
    double over = 0;
    for (int d = 0; d < cp->devices; d++) {
        w->dyn[d] = cp_dev_dyn(cp, d, &w->mm);
        double o = w->stat[d] + w->dyn[d] - cp->cap;
        if (cp_over(w, d) && o > over)
            worst = d, over = o;
    }
    if (worst < 0)
        return MT_OK;
    char need[32], capb[32], ob[32];
    str_format_bytes(w->stat[worst] + w->dyn[worst], need, sizeof need);
    str_format_bytes(cp->cap, capb, sizeof capb);
    str_format_bytes(over, ob, sizeof ob);
    return err_set(e, MT_EINVAL,
                   "no checkpointing plan fits a batch of %d tokens: even with every layer "
                   "checkpointed device %d needs %s, %s (%.0f bytes) over the %s cap",
                   w->s, worst, need, ob, over, capb);
}

/* The recompute one iteration adds to device d with choice k. */
static double cp_dev_rc(const struct cp_solve *w, const int *k, int d)
{
    const struct ckpt_plan *cp = w->cp;
    double t = 0;
    for (int j = 0; j < cp->dev_nst[d]; j++) {
        int st = cp->dev_st[d * cp->parts + j];
        int kk = k[st] < cp->layers[st] ? k[st] : cp->layers[st];
        t += cp->dev_rc[d * cp->parts + j] * w->rc1[st] * kk;
    }
    return t;
}

/* Mimose's greedy on group g, then pruned to a minimal choice. */
static void cp_greedy_group(struct cp_solve *w, int *k, int g)
{
    const struct ckpt_plan *cp = w->cp;
    const int *gs = cp->grp_st + cp->grp_off[g];
    int m = cp->grp_off[g + 1] - cp->grp_off[g];
    for (int i = 0; i < m; i++) {
        k[gs[i]] = 0;
        cp_set(w, k, gs[i]);
    }
    for (;;) {
        int best = -1;
        double best_ratio = -1, best_fallback = -1;
        bool any_db = false;
        for (int i = 0; i < m; i++) {
            int j = gs[i];
            if (k[j] >= cp->layers[j])
                continue;
            bool held_by_over = false;
            for (int q = cp->st_off[j]; q < cp->st_off[j + 1] && !held_by_over; q++)
                held_by_over = cp_over(w, cp->st_dev[q]);
            if (!held_by_over)
                continue;
            double old_keep = w->keep[j];
            unsigned char old_none = w->none[j];
            double new_keep = mem_forward_keep(&w->cost.stage[j], k[j] + 1);
            double db = 0;
            w->keep[j] = new_keep;
            w->none[j] = 0;
            for (int q = cp->st_off[j]; q < cp->st_off[j + 1]; q++) {
                int d = cp->st_dev[q];
                if (cp_over(w, d))
                    db += w->dyn[d] - cp_dev_dyn(cp, d, &w->mm);
            }
            w->keep[j] = old_keep;
            w->none[j] = old_none;
            double dt = w->rc1[j] > 0 ? w->rc1[j] : 1e-9;
            double ratio = db / dt, fallback = (old_keep - new_keep) / dt;
            if (db > 0 && (!any_db || ratio > best_ratio)) {
                any_db = true;
                best_ratio = ratio;
                best = j;
            } else if (!any_db && fallback > best_fallback) {
                best_fallback = fallback;
                best = j;
            }
        }
        if (best < 0)
            break; /* nothing over the cap (cp_check_all made sure all-on fits) */
        k[best]++;
        cp_set(w, k, best);
    }
    /* Prune: give back layers, the most expensive recompute first, while the group fits. */
    int *order = xmalloc((size_t)m * sizeof(int));
    for (int i = 0; i < m; i++) { /* stages by recompute per layer, descending (stable) */
        int t = i;
        for (; t > 0 && w->rc1[order[t - 1]] < w->rc1[gs[i]]; t--)
            order[t] = order[t - 1];
        order[t] = gs[i];
    }
    bool changed = true;
    while (changed) {
        changed = false;
        for (int i = 0; i < m; i++) {
            int j = order[i];
            while (k[j] > 0) {
                k[j]--;
                cp_set(w, k, j);
                bool fits = true;
                for (int q = cp->st_off[j]; q < cp->st_off[j + 1] && fits; q++)
                    fits = !cp_over(w, cp->st_dev[q]);
                if (!fits) {
                    k[j]++;
                    cp_set(w, k, j);
                    break;
                }
                changed = true;
            }
        }
    }
    free(order);
}

static void cp_solution(const struct cp_solve *w, const int *k, struct ckpt_plan_solution *sol)
{
    const struct ckpt_plan *cp = w->cp;
    double *keep = xmalloc((size_t)cp->stages * sizeof(double));
    unsigned char *none = xmalloc((size_t)cp->stages);
    for (int j = 0; j < cp->stages; j++) {
        keep[j] = mem_forward_keep(&w->cost.stage[j], k[j]);
        none[j] = k[j] <= 0;
    }
    struct cp_mem mm = {keep, none, w->cost.stage};
    sol->s = w->s;
    sol->peak_bytes = 0;
    sol->peak_device = 0;
    sol->rc_us = 0;
    for (int d = 0; d < cp->devices; d++) {
        double v = w->stat[d] + cp_dev_dyn(cp, d, &mm);
        if (v > sol->peak_bytes)
            sol->peak_bytes = v, sol->peak_device = d;
        double rc = cp_dev_rc(w, k, d);
        if (rc > sol->rc_us)
            sol->rc_us = rc;
    }
    free(keep);
    free(none);
}

static int cp_simulate_cost(const struct ckpt_plan *cp, int s, const int *k,
                            const struct cost_model *cost, double *step, struct mt_err *e)
{
    struct plan *p = ckpt_plan_apply(cp, s, k);
    struct sim_result r;
    int rc = sim_run_costs(p, cost, &r, e);
    if (rc == MT_OK) {
        *step = r.step_time;
        sim_result_fini(&r);
    }
    plan_free(p);
    return rc;
}

/* Lower bound of the step time: a device's busy time. base[d]: without recompute. */
static double cp_bound(const struct cp_solve *w, const double *base, const int *k)
{
    double lb = 0;
    for (int d = 0; d < w->cp->devices; d++) {
        double v = base[d] + cp_dev_rc(w, k, d);
        if (v > lb)
            lb = v;
    }
    return lb;
}

/* The exact search (see the file comment). k holds greedy's choice on entry (the first
 * incumbent) and the best on return. */
static int cp_exact(struct cp_solve *w, int *k, struct ckpt_plan_solution *sol, struct mt_err *e)
{
    const struct ckpt_plan *cp = w->cp;
    int S = cp->stages, G = cp->ngroups;
    int **front = xcalloc((size_t)G, sizeof *front); /* [g]: nf[g] choices of m ints */
    int *nf = xcalloc((size_t)G, sizeof(int));
    int *kk = xmalloc((size_t)S * sizeof(int));
    double *base = xcalloc((size_t)cp->devices, sizeof(double));
    int rc = MT_OK;
    long combos = 1;
    for (int g = 0; g < G && rc == MT_OK; g++) {
        const int *gs = cp->grp_st + cp->grp_off[g];
        int m = cp->grp_off[g + 1] - cp->grp_off[g];
        long count = 1;
        for (int i = 0; i < m && count <= CKPT_PLAN_EXACT_MAX_GROUP; i++)
            count *= cp->layers[gs[i]] + 1;
        if (count > CKPT_PLAN_EXACT_MAX_GROUP) {
            rc = err_set(e, MT_EUNSUPPORTED,
                         "exact search: stages coupled with stage %d have over %d choices", gs[0],
                         CKPT_PLAN_EXACT_MAX_GROUP);
            break;
        }
        unsigned char *fit = xcalloc((size_t)count, 1);
        int *digit = xcalloc((size_t)m, sizeof(int));
        memcpy(kk, k, (size_t)S * sizeof(int));
        for (int i = 0; i < m; i++) {
            kk[gs[i]] = 0;
            cp_set(w, kk, gs[i]);
        }
        for (long idx = 0; idx < count; idx++) {
            bool ok = true;
            for (int i = 0; i < m && ok; i++)
                for (int q = cp->st_off[gs[i]]; q < cp->st_off[gs[i] + 1] && ok; q++)
                    ok = !cp_over(w, cp->st_dev[q]);
            fit[idx] = ok;
            for (int i = 0; i < m; i++) { /* next choice, digit 0 fastest */
                if (++digit[i] <= cp->layers[gs[i]]) {
                    kk[gs[i]] = digit[i];
                    cp_set(w, kk, gs[i]);
                    break;
                }
                digit[i] = 0;
                kk[gs[i]] = 0;
                cp_set(w, kk, gs[i]);
            }
        }
        /* minimal: fits, and no single layer fewer fits */
        memset(digit, 0, (size_t)m * sizeof(int));
        for (long idx = 0; idx < count; idx++) {
            bool minimal = fit[idx];
            long stride = 1;
            for (int i = 0; i < m && minimal; i++) {
                if (digit[i] > 0 && fit[idx - stride])
                    minimal = false;
                stride *= cp->layers[gs[i]] + 1;
            }
            if (minimal) {
                front[g] = xreallocarray(front[g], (size_t)nf[g] + 1, (size_t)m * sizeof(int));
                memcpy(front[g] + (size_t)nf[g] * m, digit, (size_t)m * sizeof(int));
                nf[g]++;
            }
            for (int i = 0; i < m; i++) {
                if (++digit[i] <= cp->layers[gs[i]])
                    break;
                digit[i] = 0;
            }
        }
        free(digit);
        free(fit);
        if (nf[g] == 0) /* cp_check_all passed, so all-on fits: cannot happen */
            rc = err_set(e, MT_EINFEASIBLE, "exact search: no choice fits stage %d", gs[0]);
        else if (combos > CKPT_PLAN_EXACT_MAX_COMBOS / nf[g])
            rc = err_set(e, MT_EUNSUPPORTED,
                         "exact search: over %ld combinations of minimal choices",
                         CKPT_PLAN_EXACT_MAX_COMBOS);
        else
            combos *= nf[g];
    }
    /* base busy time of every device: the template's compute without recompute */
    if (rc == MT_OK) {
        const struct plan *p = cp->tmpl;
        for (int d = 0; d < cp->devices; d++)
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                if (in->op == OP_RC)
                    continue;
                if (plan_op_is_compute(in->op) || in->op == OP_AR || in->op == OP_OS)
                    base[d] += sim_instr_latency(&w->cost, in);
            }
    }
    double best = 0, best_rc = 0;
    long sims = 0;
    if (rc == MT_OK) {
        rc = cp_simulate_cost(cp, w->s, k, &w->cost, &best, e);
        sims++;
        for (int d = 0; d < cp->devices; d++)
            best_rc += cp_dev_rc(w, k, d);
    }
    int *pick = xcalloc((size_t)G, sizeof(int));
    for (long c = 0; rc == MT_OK && c < combos; c++) {
        for (int g = 0; g < G; g++) {
            const int *gs = cp->grp_st + cp->grp_off[g];
            int m = cp->grp_off[g + 1] - cp->grp_off[g];
            for (int i = 0; i < m; i++)
                kk[gs[i]] = front[g][(size_t)pick[g] * m + i];
        }
        for (int g = 0; g < G; g++) /* next combination */
            if (++pick[g] < nf[g])
                break;
            else
                pick[g] = 0;
        if (memcmp(kk, k, (size_t)S * sizeof(int)) == 0)
            continue;
        double lb = cp_bound(w, base, kk);
        if (lb >= best * (1 - CKPT_PLAN_EPS))
            continue;
        if (sims >= CKPT_PLAN_EXACT_MAX_SIMS) {
            rc = err_set(e, MT_EUNSUPPORTED, "exact search: over %d simulations",
                         CKPT_PLAN_EXACT_MAX_SIMS);
            break;
        }
        double t;
        rc = cp_simulate_cost(cp, w->s, kk, &w->cost, &t, e);
        sims++;
        double trc = 0;
        for (int d = 0; rc == MT_OK && d < cp->devices; d++)
            trc += cp_dev_rc(w, kk, d);
        if (rc == MT_OK && (t < best * (1 - CKPT_PLAN_EPS) ||
                            (t <= best * (1 + CKPT_PLAN_EPS) && trc < best_rc))) {
            best = t;
            best_rc = trc;
            memcpy(k, kk, (size_t)S * sizeof(int));
        }
    }
    if (rc == MT_OK) {
        sol->step_time = best;
        sol->sims = sims;
        sol->combos = combos;
    }
    for (int g = 0; g < G; g++)
        free(front[g]);
    free(front);
    free(nf);
    free(kk);
    free(base);
    free(pick);
    return rc;
}

int ckpt_plan_solve(const struct ckpt_plan *cp, int s, enum ckpt_plan_algo algo, int *k,
                    struct ckpt_plan_solution *sol, struct mt_err *e)
{
    struct ckpt_plan_solution dummy;
    if (sol == NULL)
        sol = &dummy;
    memset(sol, 0, sizeof *sol);
    if (s < 1)
        return err_set(e, MT_EINVAL, "sequence length %d: must be >= 1", s);
    struct cp_solve w;
    TRY(cp_solve_init(&w, cp, s, e));
    int *kk = xmalloc((size_t)cp->stages * sizeof(int));
    int rc = cp_check_all(&w, kk, e);
    if (rc == MT_OK) {
        for (int g = 0; g < cp->ngroups; g++)
            cp_greedy_group(&w, kk, g);
        if (algo == CKPT_PLAN_EXACT)
            rc = cp_exact(&w, kk, sol, e);
    }
    if (rc == MT_OK) {
        cp_solution(&w, kk, sol);
        memcpy(k, kk, (size_t)cp->stages * sizeof(int));
    }
    free(kk);
    cp_solve_fini(&w);
    return rc;
}

struct plan *ckpt_plan_apply(const struct ckpt_plan *cp, int s, const int *k)
{
    struct config cs = cp->cfg;
    cs.model.seq_length = s;
    const struct plan *t = cp->tmpl;
    struct plan *p = plan_new(&cs, plan_geom(t));
    for (int d = 0; d < plan_devices(t); d++)
        for (int i = 0; i < plan_len(t, d); i++) {
            struct instr in = *plan_at(t, d, i);
            if (in.op == OP_CFW || in.op == OP_RC) {
                int kj = k[in.stage], n = cp->layers[in.stage];
                if (kj <= 0) {
                    if (in.op == OP_RC)
                        continue;
                    in.op = OP_FW;
                    in.ckpt_layers = 0;
                } else {
                    in.ckpt_layers = mem_ckpt_layers(kj, n);
                }
            }
            plan_append(p, d, in);
        }
    return p;
}

int ckpt_plan_simulate(const struct ckpt_plan *cp, int s, const int *k, struct sim_result *out,
                       struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    struct cost_model cost;
    TRY(ckpt_plan_costs(cp, s, &cost, e));
    struct plan *p = ckpt_plan_apply(cp, s, k);
    int rc = sim_run_costs(p, &cost, out, e);
    plan_free(p);
    cost_model_fini(&cost);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * The cache
 * ------------------------------------------------------------------------------------- */

struct ckpt_plan_cache {
    const struct ckpt_plan *cp;
    int width, max_len, nbuckets;
    enum ckpt_plan_algo algo;
    struct ckpt_plan_entry **entry; /* [nbuckets + 1], by bucket */
    struct ckpt_plan_stats stats;
    const struct ckpt_plan_entry *last; /* the previous get's, for switches */
};

/* Counts a switch when en's choice differs from the previous get's. */
static void cp_cache_note(struct ckpt_plan_cache *pc, const struct ckpt_plan_entry *en)
{
    if (pc->last != NULL && pc->last != en &&
        memcmp(pc->last->k, en->k, (size_t)pc->cp->stages * sizeof(int)) != 0)
        pc->stats.switches++;
    pc->last = en;
}

static double cp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

struct ckpt_plan_cache *ckpt_plan_cache_new(const struct ckpt_plan *cp, int width, int max_len,
                                            enum ckpt_plan_algo algo)
{
    struct ckpt_plan_cache *pc = xcalloc(1, sizeof *pc);
    pc->cp = cp;
    pc->width = width < 1 ? 1 : width;
    pc->max_len = max_len < 1 ? 1 : max_len;
    pc->algo = algo;
    pc->nbuckets = seqlen_bucket(pc->max_len, pc->width);
    pc->entry = xcalloc((size_t)pc->nbuckets + 1, sizeof *pc->entry);
    return pc;
}

void ckpt_plan_cache_free(struct ckpt_plan_cache *pc)
{
    if (pc == NULL)
        return;
    for (int b = 0; b <= pc->nbuckets; b++)
        if (pc->entry[b] != NULL) {
            free(pc->entry[b]->k);
            free(pc->entry[b]);
        }
    free(pc->entry);
    free(pc);
}

int ckpt_plan_cache_get(struct ckpt_plan_cache *pc, int s, const struct ckpt_plan_entry **out,
                        struct mt_err *e)
{
    *out = NULL;
    if (s < 1 || s > pc->max_len)
        return err_set(e, MT_EINVAL,
                       "a batch of %d tokens: the plans cover 1 to %d tokens (the longest length "
                       "the config allows)",
                       s, pc->max_len);
    int b = seqlen_bucket(s, pc->width);
    if (pc->entry[b] != NULL) {
        pc->stats.hits++;
        *out = pc->entry[b];
        cp_cache_note(pc, *out);
        return MT_OK;
    }
    double t0 = cp_now_ms();
    struct ckpt_plan_entry *en = xcalloc(1, sizeof *en);
    en->bucket = b;
    en->s = seqlen_bucket_len(b, pc->width, pc->max_len);
    en->k = xmalloc((size_t)pc->cp->stages * sizeof(int));
    struct ckpt_plan_solution sol;
    int rc = ckpt_plan_solve(pc->cp, en->s, pc->algo, en->k, &sol, e);
    if (rc != MT_OK) {
        free(en->k);
        free(en);
        return rc;
    }
    en->peak_bytes = sol.peak_bytes;
    en->peak_device = sol.peak_device;
    pc->entry[b] = en;
    double dt = cp_now_ms() - t0;
    pc->stats.misses++;
    pc->stats.plan_ms_total += dt;
    if (dt > pc->stats.plan_ms_max)
        pc->stats.plan_ms_max = dt;
    cp_cache_note(pc, en);
    *out = en;
    return MT_OK;
}

const struct ckpt_plan_stats *ckpt_plan_cache_stats(const struct ckpt_plan_cache *pc)
{
    return &pc->stats;
}

/* ---------------------------------------------------------------------------------------
 * The report
 * ------------------------------------------------------------------------------------- */

void ckpt_plan_report_fini(struct ckpt_plan_report *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++)
        free(r->b[i].k);
    free(r->b);
    free(r->k_static);
    free(r->k_full);
    memset(r, 0, sizeof *r);
}

int ckpt_plan_report_build(const struct ckpt_plan *cp, const struct seqlen_sample *lengths,
                           int width, bool exact, struct ckpt_plan_report *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (lengths->n < 1)
        return err_set(e, MT_EINVAL, "no lengths to plan for");
    int S = cp->stages;
    int limit = seqlen_limit(&cp->cfg);
    if (lengths->max_len > limit)
        return err_set(e, MT_EINVAL,
                       "a batch of %d tokens is beyond the model's largest position (%d)",
                       lengths->max_len, limit);
    struct ckpt_plan_report r = {0};
    r.stages = S;
    r.width = width < 1 ? 1 : width;
    int max_len = lengths->max_len;
    int nb = seqlen_bucket(max_len, r.width);
    double *w = xcalloc((size_t)nb + 1, sizeof(double));
    for (int i = 0; i < lengths->n; i++)
        w[seqlen_bucket(lengths->len[i], r.width)] += lengths->weight[i];
    for (int b = 1; b <= nb; b++)
        r.n += w[b] > 0;
    r.b = xcalloc((size_t)r.n + 1, sizeof *r.b);
    r.k_static = xmalloc((size_t)S * sizeof(int));
    r.k_full = xmalloc((size_t)S * sizeof(int));
    ckpt_plan_all(cp, r.k_full);
    int *k_none = xcalloc((size_t)S, sizeof(int));
    struct ckpt_plan_cache *pc = ckpt_plan_cache_new(cp, r.width, max_len, CKPT_PLAN_GREEDY);
    int rc = MT_OK;
    const struct ckpt_plan_entry *en;
    /* The longest batch first: its error (a cap nothing meets) is the one to report. */
    rc = ckpt_plan_cache_get(pc, max_len, &en, e);
    if (rc == MT_OK)
        memcpy(r.k_static, en->k, (size_t)S * sizeof(int));
    /* The sample in its order, as batches would arrive: hits, misses, planning time. */
    struct ckpt_plan_cache *replay = ckpt_plan_cache_new(cp, r.width, max_len, CKPT_PLAN_GREEDY);
    for (int i = 0; rc == MT_OK && i < lengths->n; i++)
        rc = ckpt_plan_cache_get(replay, lengths->len[i], &en, e);
    if (rc == MT_OK)
        r.cache = *ckpt_plan_cache_stats(replay);
    ckpt_plan_cache_free(replay);
    const struct plan_geom *g = plan_geom(cp->tmpl);
    const struct config *c = &cp->cfg;
    r.samples = (double)g->mbs * c->micro_batch_size * c->cluster.dp;
    double dp_eff = c->cluster.dp > 1 ? c->cluster.dp_efficiency : 1.0;
    double total_w = 0, time_w[CKPT_PLAN__STRATEGIES] = {0};
    double gap_sum = 0;
    int i = 0;
    for (int b = 1; rc == MT_OK && b <= nb; b++) {
        if (!(w[b] > 0))
            continue;
        struct ckpt_plan_bucket *bk = &r.b[i++];
        bk->bucket = b;
        bk->lo = (b - 1) * r.width;
        bk->s = seqlen_bucket_len(b, r.width, max_len);
        bk->weight = w[b];
        rc = ckpt_plan_cache_get(pc, bk->s, &en, e);
        if (rc != MT_OK)
            break;
        bk->k = xmalloc((size_t)S * sizeof(int));
        memcpy(bk->k, en->k, (size_t)S * sizeof(int));
        struct cost_model cost;
        rc = ckpt_plan_costs(cp, bk->s, &cost, e);
        if (rc != MT_OK)
            break;
        const int *ks[CKPT_PLAN__STRATEGIES] = {r.k_full, r.k_static, bk->k};
        double *peak = xmalloc((size_t)cp->devices * sizeof(double));
        for (int t = 0; rc == MT_OK && t < CKPT_PLAN__STRATEGIES; t++) {
            ckpt_plan_peaks(cp, &cost, ks[t], peak);
            for (int d = 0; d < cp->devices; d++)
                if (peak[d] > bk->peak[t])
                    bk->peak[t] = peak[d];
            rc = cp_simulate_cost(cp, bk->s, ks[t], &cost, &bk->step_time[t], e);
            time_w[t] += bk->weight * bk->step_time[t];
        }
        double none = 0;
        if (rc == MT_OK)
            rc = cp_simulate_cost(cp, bk->s, k_none, &cost, &none, e);
        bk->exposed_rc = bk->step_time[CKPT_PLAN_INPUT_AWARE] - none;
        free(peak);
        cost_model_fini(&cost);
        total_w += bk->weight;
        if (rc == MT_OK && exact) {
            int *kx = xmalloc((size_t)S * sizeof(int));
            struct ckpt_plan_solution sol;
            struct mt_err xe = {0};
            int xr = ckpt_plan_solve(cp, bk->s, CKPT_PLAN_EXACT, kx, &sol, &xe);
            if (xr == MT_OK) {
                bk->exact_done = true;
                bk->exact_step = sol.step_time;
                double gap = sol.step_time > 0
                                 ? bk->step_time[CKPT_PLAN_INPUT_AWARE] / sol.step_time - 1
                                 : 0;
                gap_sum += gap;
                if (gap > r.gap_max)
                    r.gap_max = gap;
                r.exact_buckets++;
            } else if (xr != MT_EUNSUPPORTED) {
                rc = err_set(e, xr, "%s", xe.msg);
            }
            free(kx);
        }
    }
    if (rc == MT_OK) {
        for (int t = 0; t < CKPT_PLAN__STRATEGIES; t++)
            r.throughput[t] = time_w[t] > 0 ? total_w * r.samples * dp_eff / (time_w[t] * 1e-6) : 0;
        r.gap_mean = r.exact_buckets > 0 ? gap_sum / r.exact_buckets : 0;
        *out = r;
    } else {
        r.n = i;
        ckpt_plan_report_fini(&r);
    }
    ckpt_plan_cache_free(pc);
    free(k_none);
    free(w);
    return rc;
}
