/* sim/core/vpipe.c: Algorithm 1 of the paper, by scheme, and the dependency rules.
 *
 *  V, GPipe: stage s on device s.
 *  X (Chimera): part 0 (down) runs stage s on device s; part 1 (up) runs it on D-1-s, so
 *     Algorithm 1's step is +/-1 for part 0 and -/+1 for part 1. A micro-batch's pipeline
 *     is fixed: in each group of D micro-batches the first half goes down, the rest up.
 *  DualPipe: placed as X; the first N/2 micro-batches go down, the rest up.
 *  W, ZB-W (interleaved): stage s = part * D + device; crossing from device D-1 to 0 moves
 *     to the next part (Algorithm 1 lines 9-10).
 *  ZB-V, DualPipeV (a V): part 0 of device d runs stage d, part 1 stage 2D-1-d, so a
 *     micro-batch goes down the devices and back up; stages D-1 and D share device D-1.
 *  ZB-H1, ZB-H2: placed as V.
 *  Async, PipeDream: placed as V. Their AR/OS come every U backwards, so they are keyed by
 *     (mb, stage), mb being the micro-batch whose backward completes the update. A forward
 *     also needs the update its schedule reads its weights after, so that no rewrite (Mario's
 *     pass 4 moving forwards into bubbles) raises a stage's staleness. */
#include <config.h>
#include "sim/core/vpipe.h"

#include <stdlib.h>
#include <string.h>

#include "model/scheme_registry.h"
#include "util/err.h"
#include "util/xalloc.h"

/* How a scheme places its stages on the devices: its record says. */
static inline enum scheme_place vpipe_place(const struct plan_geom *g)
{
    const struct scheme_record *r = scheme_registry_get(g->scheme);
    return r != NULL ? r->place : SCHEME_PLACE_LINE;
}

int vpipe_mb_part(const struct plan_geom *g, int mb)
{
    if (vpipe_place(g) != SCHEME_PLACE_CHIMERA)
        return 0;
    if (scheme_registry_get(g->scheme)->halves) /* DualPipe: a half from each end */
        return mb < g->mbs / 2 ? 0 : 1;
    int D = g->devices, group = mb / D, i = mb % D;
    int size = g->mbs - group * D < D ? g->mbs - group * D : D;
    return i < size / 2 ? 0 : 1;
}

/* vpipe_locate and vpipe_stage under a placement looked up once (vpipe_wrap runs on every
 * compute of every new plan). */
static inline void vpipe_locate_in(enum scheme_place place, const struct plan_geom *g, int mb,
                                   int stage, int *dev, int *part)
{
    switch (place) {
    case SCHEME_PLACE_CHIMERA:
        *part = vpipe_mb_part(g, mb);
        *dev = *part == 0 ? stage : g->devices - 1 - stage;
        break;
    case SCHEME_PLACE_LOOP:
        *part = stage / g->devices;
        *dev = stage % g->devices;
        break;
    case SCHEME_PLACE_V:
        *part = stage < g->devices ? 0 : 1;
        *dev = stage < g->devices ? stage : 2 * g->devices - 1 - stage;
        break;
    default:
        *part = 0;
        *dev = stage;
        break;
    }
}

static inline int vpipe_stage_in(enum scheme_place place, const struct plan_geom *g, int dev,
                                  int part)
{
    switch (place) {
    case SCHEME_PLACE_CHIMERA:
        return part == 0 ? dev : g->devices - 1 - dev;
    case SCHEME_PLACE_LOOP:
        return part * g->devices + dev;
    case SCHEME_PLACE_V:
        return part == 0 ? dev : 2 * g->devices - 1 - dev;
    default:
        return dev;
    }
}

void vpipe_locate(const struct plan_geom *g, int mb, int stage, int *dev, int *part)
{
    vpipe_locate_in(vpipe_place(g), g, mb, stage, dev, part);
}

int vpipe_stage(const struct plan_geom *g, int dev, int mb, int part)
{
    return vpipe_stage_in(vpipe_place(g), g, dev, part);
}

static inline bool vpipe_find_in(enum scheme_place place, const struct plan_geom *g, int step,
                                 int dev, int mb, int part, int *d_o, int *p_o)
{
    int s = vpipe_stage_in(place, g, dev, part) + step;
    if (s < 0 || s >= g->stages)
        return false;
    vpipe_locate_in(place, g, mb, s, d_o, p_o);
    return true;
}

static bool vpipe_find(const struct plan_geom *g, int step, int dev, int mb, int part, int *d_o,
                       int *p_o)
{
    return vpipe_find_in(vpipe_place(g), g, step, dev, mb, part, d_o, p_o);
}

bool vpipe_find_prev(const struct plan_geom *g, int dev, int mb, int part, int *d_o, int *p_o)
{
    return vpipe_find(g, -1, dev, mb, part, d_o, p_o);
}

bool vpipe_find_next(const struct plan_geom *g, int dev, int mb, int part, int *d_o, int *p_o)
{
    return vpipe_find(g, +1, dev, mb, part, d_o, p_o);
}

/* vpipe_wrap under a placement looked up once (VPIPE_HOT: inlined into the list's loop). */
#if defined(__GNUC__)
#define VPIPE_HOT __attribute__((always_inline))
#else
#define VPIPE_HOT
#endif
static inline VPIPE_HOT int vpipe_wrap_in(enum scheme_place place, const struct plan_geom *g,
                                          int dev, const struct instr *in, struct instr *out)
{
    bool fwd = plan_op_is_forward(in->op), bwd = plan_op_is_backward(in->op);
    int n = 0, od, opart;
    if (!fwd && !bwd) {
        out[n++] = *in;
        return n;
    }
    /* activations come from the previous stage and go to the next; gradients the other way */
    bool from = vpipe_find_in(place, g, fwd ? -1 : +1, dev, in->mb, in->part, &od, &opart);
    if (from && od != dev)
        out[n++] =
            (struct instr){fwd ? OP_RA : OP_RG, in->mb, in->part, in->stage, od, in->step, 0, 0};
    out[n++] = *in;
    bool to = vpipe_find_in(place, g, fwd ? +1 : -1, dev, in->mb, in->part, &od, &opart);
    if (to && od != dev)
        out[n++] =
            (struct instr){fwd ? OP_SA : OP_SG, in->mb, in->part, in->stage, od, in->step, 0, 0};
    return n;
}

int vpipe_wrap(const struct plan_geom *g, int dev, struct instr in, struct instr out[VPIPE_WRAP_MAX])
{
    return vpipe_wrap_in(vpipe_place(g), g, dev, &in, out);
}

int vpipe_wrap_list(const struct plan_geom *g, int dev, const struct instr *in, int n,
                    struct instr *out)
{
    enum scheme_place place = vpipe_place(g);
    int k = 0;
    for (int i = 0; i < n; i++)
        k += vpipe_wrap_in(place, g, dev, &in[i], out + k);
    return k;
}

/* Index slots. The ten kinds keyed by (mb, stage) sit side by side in one record per
 * (mb, stage), so the lookups of one instruction's dependencies (its forward, recompute,
 * receive: the same record; the partner: the next or previous stage's) touch one or two cache
 * lines; AR and OS have a table each. */
enum { K_FWD, K_BWD, K_RC, K_W, K_SA, K_RA, K_SG, K_RG, K_OF, K_RL, K__MB, K_AR = K__MB, K_OS,
       K__COUNT };

struct vpipe_rec {
    int id[K__MB];
};

struct vpipe_index {
    int mbs, stages, devices;
    enum scheme_place place;
    bool async;              /* Async/PipeDream: AR/OS keyed by (mb, stage), not (dev, stage) */
    int key_rows;            /* rows of the AR/OS tables: devices, or mbs when async */
    int update_interval;     /* async: U backwards per update */
    struct vpipe_rec *rec;   /* [mbs * stages] */
    int *keyed[2];           /* AR, OS: [key_rows * stages] */
    unsigned char *mb_part;  /* [mbs]: Chimera pipeline of each micro-batch */
    unsigned char *ckpt;     /* [mbs * stages]: the forward is a CFW */
    int *ar_off, *ar_ids;    /* synchronous plans: the ARs of stage s, by device, in
                              * ar_ids[ar_off[s] .. ar_off[s + 1]) (vpipe_ar_group) */
};

/* The kind of each op, -1 for none. */
static const signed char vpipe_kind_of[OP__COUNT] = {
    [OP_FW] = K_FWD, [OP_CFW] = K_FWD, [OP_RC] = K_RC, [OP_BW] = K_BWD, [OP_B] = K_BWD,
    [OP_W] = K_W, [OP_SA] = K_SA, [OP_RA] = K_RA, [OP_SG] = K_SG, [OP_RG] = K_RG,
    [OP_AR] = K_AR, [OP_OS] = K_OS, [OP_OF] = K_OF, [OP_RL] = K_RL,
};

static inline int vpipe_kind(enum op op)
{
    return (unsigned)op < OP__COUNT ? vpipe_kind_of[op] : -1;
}

/* vpipe_locate with the micro-batch's pipeline looked up, not recomputed (the hot path). */
static inline int vpipe_dev_of(const struct vpipe_index *x, int mb, int stage)
{
    switch (x->place) {
    case SCHEME_PLACE_CHIMERA: return x->mb_part[mb] == 0 ? stage : x->devices - 1 - stage;
    case SCHEME_PLACE_LOOP: return stage % x->devices;
    case SCHEME_PLACE_V: return stage < x->devices ? stage : 2 * x->devices - 1 - stage;
    default: return stage;
    }
}

/* vpipe_locate the same way (the index's check of every instruction's place). */
static inline void vpipe_locate_fast(const struct vpipe_index *x, int mb, int stage, int *dev,
                                     int *part)
{
    switch (x->place) {
    case SCHEME_PLACE_CHIMERA: *part = x->mb_part[mb]; break;
    case SCHEME_PLACE_LOOP: *part = stage / x->devices; break;
    case SCHEME_PLACE_V: *part = stage < x->devices ? 0 : 1; break;
    default: *part = 0; break;
    }
    *dev = vpipe_dev_of(x, mb, stage);
}

static inline int *vpipe_slot(const struct vpipe_index *x, enum op op, int mb, int stage)
{
    int k = vpipe_kind(op);
    if (k < 0 || (unsigned)stage >= (unsigned)x->stages)
        return NULL;
    if (k >= K__MB)
        return (unsigned)mb < (unsigned)x->key_rows
                   ? &x->keyed[k - K__MB][(size_t)mb * x->stages + stage]
                   : NULL;
    if ((unsigned)mb >= (unsigned)x->mbs)
        return NULL;
    return &x->rec[(size_t)mb * x->stages + stage].id[k];
}

void vpipe_index_free(struct vpipe_index *x)
{
    if (x == NULL)
        return;
    free(x->rec); /* the block of every table */
    free(x->mb_part);
    free(x->ckpt);
    free(x->ar_off);
    free(x->ar_ids);
    free(x);
}

/* The error of the instruction at position i of device d, which the index refused. */
static int vpipe_index_fail(const struct plan *p, const struct vpipe_index *x, int d, int i,
                            struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    const struct instr *in = plan_at(p, d, i);
    char what[32] = "";
    plan_instr_label(p, in, what, sizeof what);
    bool keyed_by_dev = (in->op == OP_AR || in->op == OP_OS) && !x->async;
    int *slot = vpipe_slot(x, in->op, keyed_by_dev ? d : in->mb, in->stage);
    if (slot == NULL)
        return err_set(e, MT_EINFEASIBLE,
                       "device %d, instruction %d (%s): mb %d / stage %d out of range", d, i,
                       what, in->mb, in->stage);
    int want_dev = d, want_part = in->part;
    if (!keyed_by_dev)
        vpipe_locate_fast(x, in->mb, in->stage, &want_dev, &want_part);
    if (want_dev != d || want_part != in->part)
        return err_set(e, MT_EINFEASIBLE,
                       "device %d, instruction %d (%s, stage %d): the %s scheme runs that stage "
                       "on device %d part %d",
                       d, i, what, in->stage, config_scheme_name(g->scheme), want_dev, want_part);
    return err_set(e, MT_EINFEASIBLE, "device %d, instruction %d: duplicate %s (stage %d)", d, i,
                   what, in->stage);
}

int vpipe_index_build(const struct plan *p, struct vpipe_index **out, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    struct vpipe_index *x = xcalloc(1, sizeof *x);
    x->mbs = g->mbs;
    x->stages = g->stages;
    x->devices = g->devices;
    x->place = vpipe_place(g);
    x->async = config_scheme_async(g->scheme);
    x->key_rows = x->async ? g->mbs : g->devices;
    x->update_interval = plan_config(p)->update_interval > 0 ? plan_config(p)->update_interval : 1;
    /* One block for every table, all -1 (every byte 0xff). */
    size_t per_mb = (size_t)g->mbs * g->stages, per_key = (size_t)x->key_rows * g->stages;
    size_t bytes = per_mb * sizeof(struct vpipe_rec) + 2 * per_key * sizeof(int);
    x->rec = xmalloc(bytes ? bytes : 1);
    memset(x->rec, 0xff, bytes);
    x->keyed[0] = (int *)(x->rec + per_mb);
    x->keyed[1] = x->keyed[0] + per_key;
    x->mb_part = xmalloc((size_t)g->mbs + 1);
    for (int mb = 0; mb < g->mbs; mb++)
        x->mb_part[mb] = (unsigned char)vpipe_mb_part(g, mb);
    x->ckpt = xcalloc(per_mb + 1, 1);
    *out = NULL;
    unsigned mbs = (unsigned)g->mbs, stages = (unsigned)g->stages;
    int n_ar = 0, cap_ar = 0, *ar = NULL; /* (stage, id) of each AR, devices in order */
    for (int d = 0; d < g->devices; d++) {
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0), n = plan_len(p, d);
        for (int i = 0; i < n; i++) {
            const struct instr *in = &ins[i];
            int k = vpipe_kind(in->op), mb = in->mb, s = in->stage;
            int *slot = NULL;
            if (k >= K__MB) {
                /* AR/OS of synchronous plans are keyed by device: any device may hold one. */
                slot = vpipe_slot(x, in->op, x->async ? mb : d, s);
                if (slot != NULL && x->async) {
                    int want_dev, want_part;
                    vpipe_locate_fast(x, mb, s, &want_dev, &want_part);
                    if (want_dev != d || want_part != in->part)
                        slot = NULL;
                }
            } else if (k >= 0 && (unsigned)mb < mbs && (unsigned)s < stages) {
                /* vpipe_slot's checks and address written out: every new plan passes here
                 * (30 -> 23 us for GPT3-13B X 32 x 64 over the generic lookup). */
                int want_dev, want_part;
                vpipe_locate_fast(x, mb, s, &want_dev, &want_part);
                if (want_dev == d && want_part == in->part)
                    slot = &x->rec[(size_t)mb * stages + s].id[k];
            }
            if (slot == NULL || *slot >= 0) {
                int rc = vpipe_index_fail(p, x, d, i, e);
                free(ar);
                vpipe_index_free(x);
                return rc;
            }
            *slot = base + i;
            if (in->op == OP_CFW)
                x->ckpt[(size_t)mb * stages + s] = 1;
            if (k == K_AR && !x->async) {
                if (n_ar == cap_ar) {
                    cap_ar = cap_ar ? 2 * cap_ar : 64;
                    ar = xreallocarray(ar, (size_t)cap_ar, 2 * sizeof(int));
                }
                ar[2 * n_ar] = s;
                ar[2 * n_ar++ + 1] = base + i;
            }
        }
    }
    if (!x->async) { /* the ARs by stage, each stage's by device (a stable counting sort) */
        x->ar_off = xcalloc((size_t)stages + 2, sizeof(int));
        x->ar_ids = xmalloc(((size_t)n_ar + 1) * sizeof(int));
        for (int k = 0; k < n_ar; k++)
            x->ar_off[ar[2 * k] + 2]++;
        for (unsigned st = 0; st < stages; st++)
            x->ar_off[st + 2] += x->ar_off[st + 1];
        for (int k = 0; k < n_ar; k++)
            x->ar_ids[x->ar_off[ar[2 * k] + 1]++] = ar[2 * k + 1];
    }
    free(ar);
    *out = x;
    return MT_OK;
}

static inline int vpipe_get(const struct vpipe_index *x, enum op op, int mb, int stage)
{
    int *slot = vpipe_slot(x, op, mb, stage);
    return slot ? *slot : -1;
}

int vpipe_lookup(const struct vpipe_index *x, enum op op, int mb, int stage)
{
    return vpipe_get(x, op, mb, stage);
}

void vpipe_lookup_cell(const struct vpipe_index *x, int mb, int stage, struct vpipe_cell *out)
{
    if ((unsigned)mb >= (unsigned)x->mbs || (unsigned)stage >= (unsigned)x->stages) {
        *out = (struct vpipe_cell){-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
        return;
    }
    const int *id = x->rec[(size_t)mb * x->stages + stage].id;
    *out = (struct vpipe_cell){id[K_FWD], id[K_BWD], id[K_RC], id[K_W],  id[K_OF], id[K_RL],
                               id[K_SA],  id[K_RA],  id[K_SG], id[K_RG],
                               vpipe_dev_of(x, mb, stage)};
}

/* Adds the id of (op, mb, stage) to deps, or records it as missing. */
static inline bool vpipe_need(const struct vpipe_index *x, enum op op, int mb, int stage, int dev,
                       int *deps, int *n, struct vpipe_missing *miss)
{
    int id = vpipe_get(x, op, mb, stage);
    if (id < 0) {
        if (miss)
            *miss = (struct vpipe_missing){op, mb, stage, dev};
        return false;
    }
    deps[(*n)++] = id;
    return true;
}

int vpipe_deps(const struct plan *p, const struct vpipe_index *x, int id,
               int deps[VPIPE_MAX_DEPS], struct vpipe_missing *miss)
{
    int dev, pos;
    plan_locate_id(p, id, &dev, &pos);
    return vpipe_deps_at(p, x, dev, pos, deps, miss);
}

int vpipe_deps_at(const struct plan *p, const struct vpipe_index *x, int dev, int pos,
                  int deps[VPIPE_MAX_DEPS], struct vpipe_missing *miss)
{
    return vpipe_deps_of(plan_geom(p), x, plan_at(p, dev, pos), dev, deps, miss);
}

/* vpipe_deps_of, inlined into the loop of vpipe_deps_all (GCC would otherwise keep one copy
 * for both, and the call costs as much as the lookups). */
static inline VPIPE_HOT int vpipe_deps_in(const struct plan_geom *g, const struct vpipe_index *x,
                                const struct instr *in, int dev, int *deps,
                                struct vpipe_missing *miss)
{
    int n = 0;
    int mb = in->mb, s = in->stage;
    bool ok = true;
    switch (in->op) {
    case OP_FW:
    case OP_CFW:
        if (s > 0) {
            int od = vpipe_dev_of(x, mb, s - 1);
            ok = od != dev ? vpipe_need(x, OP_RA, mb, s, dev, deps, &n, miss)
                           : vpipe_need(x, OP_FW, mb, s - 1, od, deps, &n, miss);
        }
        if (ok && x->async) {
            /* The weights the schedule gives the forward: stage s runs w = D-1-s forwards
             * ahead, so FW(mb) follows BW(mb-w-1) and the last update (every U) before it. A
             * rewrite may run it later (fresher weights), never before: no stage gets staler. */
            int w = g->devices - 1 - s < x->mbs ? g->devices - 1 - s : x->mbs;
            int U = x->update_interval;
            if (mb - w >= U)
                ok = vpipe_need(x, OP_OS, (mb - w) / U * U - 1, s, dev, deps, &n, miss);
        }
        break;
    case OP_SA:
        ok = vpipe_need(x, OP_FW, mb, s, dev, deps, &n, miss);
        break;
    case OP_RA:
    case OP_RG: {
        enum op pop = OP_SA; /* vpipe_peer sets both for a receive */
        int ps = -1;
        vpipe_peer(in->op, s, &pop, &ps);
        ok = vpipe_need(x, pop, mb, ps, in->peer, deps, &n, miss);
        break;
    }
    case OP_RC:
        ok = vpipe_need(x, OP_CFW, mb, s, dev, deps, &n, miss);
        if (ok && !x->ckpt[(size_t)mb * x->stages + s]) {
            if (miss)
                *miss = (struct vpipe_missing){OP_CFW, mb, s, dev};
            ok = false;
        }
        break;
    case OP_BW:
    case OP_B: {
        ok = vpipe_need(x, OP_FW, mb, s, dev, deps, &n, miss);
        if (ok && x->ckpt[(size_t)mb * x->stages + s])
            ok = vpipe_need(x, OP_RC, mb, s, dev, deps, &n, miss);
        else if (ok && vpipe_get(x, OP_OF, mb, s) >= 0) /* offloaded: back first */
            ok = vpipe_need(x, OP_RL, mb, s, dev, deps, &n, miss);
        if (ok && s < g->stages - 1) {
            int od = vpipe_dev_of(x, mb, s + 1);
            ok = od != dev ? vpipe_need(x, OP_RG, mb, s, dev, deps, &n, miss)
                           : vpipe_need(x, OP_BW, mb, s + 1, od, deps, &n, miss);
        }
        break;
    }
    case OP_W:
        ok = vpipe_need(x, OP_B, mb, s, dev, deps, &n, miss);
        break;
    case OP_OF:
        ok = vpipe_need(x, OP_FW, mb, s, dev, deps, &n, miss);
        break;
    case OP_RL:
        ok = vpipe_need(x, OP_OF, mb, s, dev, deps, &n, miss);
        break;
    case OP_SG:
        ok = vpipe_need(x, OP_BW, mb, s, dev, deps, &n, miss);
        break;
    case OP_OS: {
        /* Async: the update of (mb, s) follows the backward (W when split) of mb. */
        if (x->async)
            ok = vpipe_get(x, OP_W, mb, s) >= 0
                     ? vpipe_need(x, OP_W, mb, s, dev, deps, &n, miss)
                     : vpipe_need(x, OP_BW, mb, s, dev, deps, &n, miss);
        int ar = vpipe_get(x, OP_AR, x->async ? mb : dev, s);
        if (ok && ar >= 0)
            deps[n++] = ar;
        break;
    }
    default:
        break;
    }
    return ok ? n : -1;
}

int vpipe_deps_of(const struct plan_geom *g, const struct vpipe_index *x, const struct instr *in,
                  int dev, int deps[VPIPE_MAX_DEPS], struct vpipe_missing *miss)
{
    return vpipe_deps_in(g, x, in, dev, deps, miss);
}

int vpipe_deps_all(const struct plan *p, const struct vpipe_index *x, int *off, int *deps)
{
    const struct plan_geom *g = plan_geom(p);
    int n = 0;
    for (int d = 0; d < g->devices; d++) {
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0), len = plan_len(p, d);
        for (int i = 0; i < len; i++) {
            off[base + i] = n;
            int k = vpipe_deps_in(g, x, &ins[i], d, deps + n, NULL);
            if (k < 0)
                return base + i;
            n += k;
        }
    }
    off[plan_total(p)] = n;
    return -1;
}

static void vpipe_resolved_free(struct plan_cache *c)
{
    struct vpipe_resolved *r = (struct vpipe_resolved *)c;
    vpipe_index_free(r->x);
    free(r->off);
    free(r->deps);
    free(r);
}

int vpipe_resolve(const struct plan *p, const struct vpipe_resolved **out, struct mt_err *e)
{
    const struct plan_cache *c = plan_cache_get(p);
    if (c != NULL) {
        *out = (const struct vpipe_resolved *)c;
        return MT_OK;
    }
    *out = NULL;
    struct vpipe_index *x = NULL;
    TRY(vpipe_index_build(p, &x, e));
    struct vpipe_resolved *r = xcalloc(1, sizeof *r);
    r->base.destroy = vpipe_resolved_free;
    r->x = x;
    int total = plan_total(p);
    r->off = xmalloc(((size_t)total + 1) * sizeof(int));
    r->deps = xmalloc(((size_t)total * VPIPE_MAX_DEPS + 1) * sizeof(int));
    r->missing = vpipe_deps_all(p, x, r->off, r->deps);
    if (r->missing >= 0) { /* what vpipe_deps_of names, on demand */
        free(r->off);
        free(r->deps);
        r->off = r->deps = NULL;
    } else { /* what it holds: about one and a half an instruction, not four */
        r->deps = xreallocarray(r->deps, (size_t)r->off[total] + 1, sizeof(int));
    }
    *out = (const struct vpipe_resolved *)plan_cache_put(p, &r->base);
    return MT_OK;
}

int vpipe_ar_group(const struct plan *p, const struct vpipe_index *x, int id, int *ids, int max)
{
    int dev, pos, n = 0;
    plan_locate_id(p, id, &dev, &pos);
    int stage = plan_at(p, dev, pos)->stage;
    if (x->async && max > 0) { /* one replica is simulated, one device per stage */
        ids[0] = id;
        return 1;
    }
    if ((unsigned)stage >= (unsigned)x->stages)
        return 0;
    /* The AR of each device that holds one for the stage, devices in order, listed by the
     * index (looking each device up made the tune grid's 1,024-device plans quadratic). */
    for (int k = x->ar_off[stage]; k < x->ar_off[stage + 1] && n < max; k++)
        ids[n++] = x->ar_ids[k];
    return n;
}

bool vpipe_peer(enum op op, int stage, enum op *peer_op, int *peer_stage)
{
    switch (op) {
    case OP_SA: *peer_op = OP_RA, *peer_stage = stage + 1; return true;
    case OP_RA: *peer_op = OP_SA, *peer_stage = stage - 1; return true;
    case OP_SG: *peer_op = OP_RG, *peer_stage = stage - 1; return true;
    case OP_RG: *peer_op = OP_SG, *peer_stage = stage + 1; return true;
    default: return false;
    }
}

bool vpipe_peer_place(const struct plan_geom *g, const struct instr *in, int *dev, int *part)
{
    enum op pop;
    int ps;
    if (!vpipe_peer(in->op, in->stage, &pop, &ps) || ps < 0 || ps >= g->stages)
        return false;
    vpipe_locate(g, in->mb, ps, dev, part);
    return true;
}

int vpipe_partner_of(const struct vpipe_index *x, const struct instr *in)
{
    enum op pop;
    int ps;
    if (!vpipe_peer(in->op, in->stage, &pop, &ps))
        return -1;
    return vpipe_get(x, pop, in->mb, ps);
}

int vpipe_partner(const struct plan *p, const struct vpipe_index *x, int id)
{
    int dev, i;
    plan_locate_id(p, id, &dev, &i);
    const struct instr *in = plan_at(p, dev, i);
    enum op pop;
    int ps;
    if (!vpipe_peer(in->op, in->stage, &pop, &ps))
        return -1;
    return vpipe_lookup(x, pop, in->mb, ps);
}
