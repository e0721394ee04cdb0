/* sim/plan/plan.c: per-device growable instruction arrays. The flat-id offsets are recomputed
 * lazily after any edit, so passes may insert and move freely and the simulator still
 * indexes results by id. */
#include <config.h>
#include "sim/plan/plan.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/xalloc.h"

struct plan_device {
    struct instr *ins;
    int len, cap;
};

struct plan {
    struct config cfg;
    struct plan_geom geom;
    struct plan_device *dev; /* [geom.devices] */
    int *offset;             /* [geom.devices + 1], valid when !offset_stale */
    bool offset_stale;
    char origin[256]; /* where the order came from, "" for its scheme's generator */
    _Atomic(struct plan_cache *) cache; /* derived data, dropped by any change (plan_cache_get) */
};

/* Drops the derived data: the plan changed or goes. */
static void plan_cache_drop(struct plan *p)
{
    /* Whoever changes a plan holds it alone: a plain load first, as edits come by thousands
     * (the exchange is a locked instruction). */
    if (atomic_load_explicit(&p->cache, memory_order_relaxed) == NULL)
        return;
    struct plan_cache *c = atomic_exchange_explicit(&p->cache, NULL, memory_order_acq_rel);
    if (c)
        c->destroy(c);
}

const struct plan_cache *plan_cache_get(const struct plan *cp)
{
    struct plan *p = (struct plan *)cp; /* the cache is not state */
    return atomic_load_explicit(&p->cache, memory_order_acquire);
}

const struct plan_cache *plan_cache_put(const struct plan *cp, struct plan_cache *c)
{
    struct plan *p = (struct plan *)cp;
    struct plan_cache *none = NULL;
    if (atomic_compare_exchange_strong_explicit(&p->cache, &none, c, memory_order_acq_rel,
                                                memory_order_acquire))
        return c;
    c->destroy(c); /* another thread's came first */
    return none;
}

struct plan *plan_new(const struct config *cfg, const struct plan_geom *g)
{
    struct plan *p = xcalloc(1, sizeof *p);
    p->cfg = *cfg;
    p->geom = *g;
    p->dev = xcalloc((size_t)g->devices, sizeof *p->dev);
    p->offset = xcalloc((size_t)g->devices + 1, sizeof *p->offset);
    p->offset_stale = true;
    atomic_init(&p->cache, NULL);
    return p;
}

void plan_free(struct plan *p)
{
    if (p == NULL)
        return;
    plan_cache_drop(p);
    for (int d = 0; d < p->geom.devices; d++)
        free(p->dev[d].ins);
    free(p->dev);
    free(p->offset);
    free(p);
}

struct plan *plan_clone(const struct plan *p)
{
    struct plan *q = plan_new(&p->cfg, &p->geom);
    memcpy(q->origin, p->origin, sizeof q->origin);
    for (int d = 0; d < p->geom.devices; d++) {
        struct plan_device *src = &p->dev[d], *dst = &q->dev[d];
        dst->cap = dst->len = src->len;
        dst->ins = xreallocarray(NULL, (size_t)(src->len ? src->len : 1), sizeof *dst->ins);
        if (src->len)
            memcpy(dst->ins, src->ins, (size_t)src->len * sizeof *src->ins);
    }
    return q;
}

struct plan *plan_with_config(const struct plan *p, const struct config *cfg)
{
    struct plan *q = plan_clone(p);
    q->cfg = *cfg;
    return q;
}

const char *plan_origin(const struct plan *p)
{
    return p->origin;
}

void plan_set_origin(struct plan *p, const char *origin)
{
    snprintf(p->origin, sizeof p->origin, "%s", origin ? origin : "");
}

const struct config *plan_config(const struct plan *p)
{
    return &p->cfg;
}

const struct plan_geom *plan_geom(const struct plan *p)
{
    return &p->geom;
}

int plan_devices(const struct plan *p)
{
    return p->geom.devices;
}

int plan_len(const struct plan *p, int dev)
{
    return p->dev[dev].len;
}

const struct instr *plan_instrs(const struct plan *p, int dev)
{
    return p->dev[dev].ins;
}

const struct instr *plan_at(const struct plan *p, int dev, int i)
{
    return &p->dev[dev].ins[i];
}

static void plan_refresh_offsets(const struct plan *cp)
{
    struct plan *p = (struct plan *)cp; /* the offsets are a cache, not state */
    if (!p->offset_stale)
        return;
    p->offset[0] = 0;
    for (int d = 0; d < p->geom.devices; d++)
        p->offset[d + 1] = p->offset[d] + p->dev[d].len;
    p->offset_stale = false;
}

int plan_total(const struct plan *p)
{
    plan_refresh_offsets(p);
    return p->offset[p->geom.devices];
}

int plan_id(const struct plan *p, int dev, int i)
{
    plan_refresh_offsets(p);
    return p->offset[dev] + i;
}

void plan_locate_id(const struct plan *p, int id, int *dev, int *i)
{
    plan_refresh_offsets(p);
    int lo = 0, hi = p->geom.devices - 1;
    while (lo < hi) { /* last device whose offset <= id */
        int mid = (lo + hi + 1) / 2;
        if (p->offset[mid] <= id)
            lo = mid;
        else
            hi = mid - 1;
    }
    *dev = lo;
    *i = id - p->offset[lo];
}

static void plan_reserve(struct plan_device *d, int extra)
{
    if (d->len + extra <= d->cap)
        return;
    int cap = d->cap ? d->cap * 2 : 64;
    while (cap < d->len + extra)
        cap *= 2;
    d->ins = xreallocarray(d->ins, (size_t)cap, sizeof *d->ins);
    d->cap = cap;
}

void plan_append(struct plan *p, int dev, struct instr in)
{
    struct plan_device *d = &p->dev[dev];
    plan_reserve(d, 1); /* no shift: generators append by the million */
    d->ins[d->len++] = in;
    p->offset_stale = true;
    plan_cache_drop(p);
}

void plan_insert(struct plan *p, int dev, int pos, struct instr in)
{
    struct plan_device *d = &p->dev[dev];
    plan_reserve(d, 1);
    memmove(&d->ins[pos + 1], &d->ins[pos], (size_t)(d->len - pos) * sizeof *d->ins);
    d->ins[pos] = in;
    d->len++;
    p->offset_stale = true;
    plan_cache_drop(p);
}

void plan_set_list(struct plan *p, int dev, const struct instr *ins, int n)
{
    struct plan_device *d = &p->dev[dev];
    d->len = 0;
    plan_reserve(d, n);
    if (n)
        memcpy(d->ins, ins, (size_t)n * sizeof *ins);
    d->len = n;
    p->offset_stale = true;
    plan_cache_drop(p);
}

void plan_adopt_list(struct plan *p, int dev, struct instr *ins, int n, int cap)
{
    struct plan_device *d = &p->dev[dev];
    free(d->ins);
    d->ins = ins;
    d->len = n;
    d->cap = cap;
    p->offset_stale = true;
    plan_cache_drop(p);
}

void plan_remove(struct plan *p, int dev, int pos)
{
    struct plan_device *d = &p->dev[dev];
    memmove(&d->ins[pos], &d->ins[pos + 1], (size_t)(d->len - pos - 1) * sizeof *d->ins);
    d->len--;
    p->offset_stale = true;
    plan_cache_drop(p);
}

void plan_move(struct plan *p, int dev, int from, int to)
{
    struct instr in = p->dev[dev].ins[from];
    plan_remove(p, dev, from);
    plan_insert(p, dev, to > from ? to - 1 : to, in);
}

int plan_find(const struct plan *p, int dev, enum op op, int mb, int stage)
{
    const struct plan_device *d = &p->dev[dev];
    for (int i = 0; i < d->len; i++)
        if (d->ins[i].op == op && d->ins[i].mb == mb && d->ins[i].stage == stage)
            return i;
    return -1;
}

static const char *const op_names[OP__COUNT] = {"FW", "CFW", "RC", "BW", "B",  "W",
                                                "SA", "RA",  "SG", "RG", "AR", "OS",
                                                "OF", "RL"};

const char *plan_op_name(enum op op)
{
    return (unsigned)op < OP__COUNT ? op_names[op] : "?";
}

int plan_op_parse(const char *s)
{
    for (int i = 0; i < OP__COUNT; i++)
        if (strcasecmp(s, op_names[i]) == 0)
            return i;
    return -1;
}

int plan_instr_label(const struct plan *p, const struct instr *in, char *buf, int n)
{
    if (in->mb < 0)
        return snprintf(buf, (size_t)n, "%s", plan_op_name(in->op));
    if (p->geom.parts > 1)
        return snprintf(buf, (size_t)n, "%s%d.%d", plan_op_name(in->op), in->mb, in->part);
    return snprintf(buf, (size_t)n, "%s%d", plan_op_name(in->op), in->mb);
}
