/* model/microcal.c: micro-benchmark tables, their lookups and their pool (model/microcal.h).
 *
 * Every kind is the same problem: points with a class (the exact part of the key: dtype,
 * collective and link, ...) and up to three positive axes, a positive value each. They are
 * sorted by (class, axes), so that a class is a run of points whose corners a binary search
 * finds; each class keeps the sorted distinct values of each axis, which bracket a query. */
#include <config.h>
#include "model/microcal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

enum { MC_GEMM, MC_ATTN, MC_HBM, MC_COLL, MC__KINDS };
static const char *const mc_kind_names[MC__KINDS] = {"gemm", "attention", "hbm", "collectives"};
static const int mc_dims[MC__KINDS] = {3, 3, 1, 2};

#define MC_MAX_DIMS 3
#define MC_MAX_SIZE 1e18 /* bytes, FLOP/s scale figures: far beyond any device, finite in sums */
#define MC_MAX_DIM 1e9   /* sequence, head_dim, batch x heads */

struct mc_point {
    int cls;
    double x[MC_MAX_DIMS];
    double v;
    size_t row; /* the row's index as added (for messages), then in the table */
};

struct mc_class {
    int cls;
    size_t first, n; /* its points */
    double *axis[MC_MAX_DIMS];
    size_t naxis[MC_MAX_DIMS];
};

struct mc_kind_index {
    struct mc_point *pt;
    size_t n;
    struct mc_class *cls;
    size_t ncls;
};

struct microcal_index {
    struct mc_kind_index kind[MC__KINDS];
};

/* ---- the builder ------------------------------------------------------------------------ */
struct microcal_builder {
    struct microcal_gemm *gemm;
    struct microcal_attention *attn;
    struct microcal_hbm *hbm;
    struct microcal_coll *coll;
    size_t n[MC__KINDS], cap[MC__KINDS];
};

struct microcal_builder *microcal_builder_new(void)
{
    return xcalloc(1, sizeof(struct microcal_builder));
}

void microcal_builder_free(struct microcal_builder *b)
{
    if (b == NULL)
        return;
    free(b->gemm);
    free(b->attn);
    free(b->hbm);
    free(b->coll);
    free(b);
}

/* Room for one more row of kind k in *arr (elements of size sz). */
static void *mc_grow(struct microcal_builder *b, int k, void *arr, size_t sz)
{
    if (b->n[k] == b->cap[k]) {
        b->cap[k] = b->cap[k] ? 2 * b->cap[k] : 16;
        arr = xreallocarray(arr, b->cap[k], sz);
    }
    return arr;
}

void microcal_add_gemm(struct microcal_builder *b, const struct microcal_gemm *r)
{
    b->gemm = mc_grow(b, MC_GEMM, b->gemm, sizeof *r);
    b->gemm[b->n[MC_GEMM]++] = *r;
}

void microcal_add_attention(struct microcal_builder *b, const struct microcal_attention *r)
{
    b->attn = mc_grow(b, MC_ATTN, b->attn, sizeof *r);
    b->attn[b->n[MC_ATTN]++] = *r;
}

void microcal_add_hbm(struct microcal_builder *b, const struct microcal_hbm *r)
{
    b->hbm = mc_grow(b, MC_HBM, b->hbm, sizeof *r);
    b->hbm[b->n[MC_HBM]++] = *r;
}

void microcal_add_coll(struct microcal_builder *b, const struct microcal_coll *r)
{
    b->coll = mc_grow(b, MC_COLL, b->coll, sizeof *r);
    b->coll[b->n[MC_COLL]++] = *r;
}

void microcal_add_table(struct microcal_builder *b, const struct microcal *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n_gemm; i++)
        microcal_add_gemm(b, &t->gemm[i]);
    for (size_t i = 0; i < t->n_attn; i++)
        microcal_add_attention(b, &t->attn[i]);
    for (size_t i = 0; i < t->n_hbm; i++)
        microcal_add_hbm(b, &t->hbm[i]);
    for (size_t i = 0; i < t->n_coll; i++)
        microcal_add_coll(b, &t->coll[i]);
}

size_t microcal_builder_rows(const struct microcal_builder *b)
{
    size_t n = 0;
    for (int k = 0; k < MC__KINDS; k++)
        n += b->n[k];
    return n;
}

/* ---- rows as points --------------------------------------------------------------------- */
static int mc_attn_class(enum op_dtype dt, bool causal, enum op_pass pass)
{
    return ((int)dt * 2 + (causal ? 1 : 0)) * 2 + (pass == PASS_B ? 1 : 0);
}

static int mc_coll_class(enum op_coll c, enum op_link l)
{
    return (int)c * LINK__COUNT + (int)l;
}

/* A size or rate: finite, > 0, at most hi. */
static bool mc_positive(double v, double hi)
{
    return v > 0 && v <= hi;
}

/* Row i of kind k as a point; false with what filled when a value is out of range. */
static bool mc_point_of(const struct microcal_builder *b, int k, size_t i, struct mc_point *p,
                        char *what, size_t n)
{
    memset(p, 0, sizeof *p);
    p->row = i;
    switch (k) {
    case MC_GEMM: {
        const struct microcal_gemm *r = &b->gemm[i];
        if ((unsigned)r->dtype >= OP_DTYPE__COUNT)
            return snprintf(what, n, "dtype %d is not a known one", (int)r->dtype), false;
        if (!mc_positive(r->m, MC_MAX_SIZE) || !mc_positive(r->n, MC_MAX_SIZE) ||
            !mc_positive(r->k, MC_MAX_SIZE))
            return snprintf(what, n, "m, n, k (%g, %g, %g) must be in (0, %g]", r->m, r->n, r->k,
                            MC_MAX_SIZE),
                   false;
        if (!mc_positive(r->tflops, MC_MAX_SIZE))
            return snprintf(what, n, "tflops %g must be in (0, %g]", r->tflops, MC_MAX_SIZE), false;
        *p = (struct mc_point){(int)r->dtype, {r->m, r->n, r->k}, r->tflops, i};
        return true;
    }
    case MC_ATTN: {
        const struct microcal_attention *r = &b->attn[i];
        if ((unsigned)r->dtype >= OP_DTYPE__COUNT)
            return snprintf(what, n, "dtype %d is not a known one", (int)r->dtype), false;
        if (r->pass != PASS_FW && r->pass != PASS_B)
            return snprintf(what, n, "pass must be the forward or the backward"), false;
        double bh = r->batch * r->heads;
        if (!mc_positive(r->batch, MC_MAX_DIM) || !mc_positive(r->heads, MC_MAX_DIM) ||
            !mc_positive(bh, MC_MAX_DIM) || !mc_positive(r->seq, MC_MAX_DIM) ||
            !mc_positive(r->head_dim, MC_MAX_DIM))
            return snprintf(what, n,
                            "batch, heads, batch x heads, seq, head_dim (%g, %g, %g, %g, %g) must "
                            "be in (0, %g]",
                            r->batch, r->heads, bh, r->seq, r->head_dim, MC_MAX_DIM),
                   false;
        if (!mc_positive(r->tflops, MC_MAX_SIZE))
            return snprintf(what, n, "tflops %g must be in (0, %g]", r->tflops, MC_MAX_SIZE), false;
        *p = (struct mc_point){mc_attn_class(r->dtype, r->causal, r->pass),
                               {bh, r->seq, r->head_dim}, r->tflops, i};
        return true;
    }
    case MC_HBM: {
        const struct microcal_hbm *r = &b->hbm[i];
        if (!mc_positive(r->bytes, MC_MAX_SIZE) || !mc_positive(r->gbps, MC_MAX_SIZE))
            return snprintf(what, n, "bytes %g and gbps %g must be in (0, %g]", r->bytes, r->gbps,
                            MC_MAX_SIZE),
                   false;
        *p = (struct mc_point){0, {r->bytes}, r->gbps, i};
        return true;
    }
    default: {
        const struct microcal_coll *r = &b->coll[i];
        if ((unsigned)r->coll >= COLL__COUNT || (unsigned)r->link >= LINK__COUNT)
            return snprintf(what, n, "collective %d or link %d is not a known one", (int)r->coll,
                            (int)r->link),
                   false;
        if (r->ranks < 2 || r->ranks > (1 << 20))
            return snprintf(what, n, "ranks %d must be in [2, %d]", r->ranks, 1 << 20), false;
        if (!mc_positive(r->bytes, MC_MAX_SIZE) || !mc_positive(r->busbw_gbps, MC_MAX_SIZE))
            return snprintf(what, n, "bytes %g and busbw_gbps %g must be in (0, %g]", r->bytes,
                            r->busbw_gbps, MC_MAX_SIZE),
                   false;
        *p = (struct mc_point){mc_coll_class(r->coll, r->link), {r->bytes, (double)r->ranks},
                               r->busbw_gbps, i};
        return true;
    }
    }
}

/* Orders points by class then axes; equal keys compare by row (the earlier first). */
static int mc_key_cmp(const struct mc_point *a, const struct mc_point *b)
{
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    for (int d = 0; d < MC_MAX_DIMS; d++)
        if (a->x[d] != b->x[d])
            return a->x[d] < b->x[d] ? -1 : 1;
    return 0;
}

static int mc_point_cmp(const void *pa, const void *pb)
{
    const struct mc_point *a = pa, *b = pb;
    int c = mc_key_cmp(a, b);
    return c ? c : a->row < b->row ? -1 : a->row > b->row;
}

static int mc_double_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The classes of the sorted points of ki, each with its axes. */
static void mc_classes(struct mc_kind_index *ki, int dims)
{
    ki->ncls = 0;
    ki->cls = NULL;
    for (size_t i = 0; i < ki->n;) {
        size_t j = i;
        while (j < ki->n && ki->pt[j].cls == ki->pt[i].cls)
            j++;
        ki->cls = xreallocarray(ki->cls, ki->ncls + 1, sizeof *ki->cls);
        struct mc_class *c = &ki->cls[ki->ncls++];
        memset(c, 0, sizeof *c);
        *c = (struct mc_class){.cls = ki->pt[i].cls, .first = i, .n = j - i};
        for (int d = 0; d < dims; d++) {
            double *a = xmalloc((j - i) * sizeof *a);
            for (size_t q = i; q < j; q++)
                a[q - i] = ki->pt[q].x[d];
            qsort(a, j - i, sizeof *a, mc_double_cmp);
            size_t m = 0;
            for (size_t q = 0; q < j - i; q++)
                if (m == 0 || a[q] != a[m - 1])
                    a[m++] = a[q];
            c->axis[d] = a;
            c->naxis[d] = m;
        }
        i = j;
    }
}

/* ---- the pool --------------------------------------------------------------------------- */
struct mc_pooled {
    struct microcal t;
    struct microcal_index index;
    struct mc_pooled *next;
};

static pthread_mutex_t mc_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mc_pooled *mc_pool;
static size_t mc_pool_n;

static void mc_index_free(struct microcal_index *ix)
{
    for (int k = 0; k < MC__KINDS; k++) {
        struct mc_kind_index *ki = &ix->kind[k];
        for (size_t c = 0; c < ki->ncls; c++)
            for (int d = 0; d < MC_MAX_DIMS; d++)
                free(ki->cls[c].axis[d]);
        free(ki->cls);
        free(ki->pt);
    }
}

static void mc_pooled_free(struct mc_pooled *p)
{
    free((void *)p->t.gemm);
    free((void *)p->t.attn);
    free((void *)p->t.hbm);
    free((void *)p->t.coll);
    mc_index_free(&p->index);
    free(p);
}

/* Same rows, in the same (canonical) order. Field by field: the rows hold padding. */
static bool mc_same(const struct microcal *a, const struct microcal *b)
{
    if (a->n_gemm != b->n_gemm || a->n_attn != b->n_attn || a->n_hbm != b->n_hbm ||
        a->n_coll != b->n_coll)
        return false;
    for (size_t i = 0; i < a->n_gemm; i++) {
        const struct microcal_gemm *x = &a->gemm[i], *y = &b->gemm[i];
        if (x->dtype != y->dtype || x->m != y->m || x->n != y->n || x->k != y->k ||
            x->tflops != y->tflops)
            return false;
    }
    for (size_t i = 0; i < a->n_attn; i++) {
        const struct microcal_attention *x = &a->attn[i], *y = &b->attn[i];
        if (x->dtype != y->dtype || x->causal != y->causal || x->pass != y->pass ||
            x->batch != y->batch || x->heads != y->heads || x->seq != y->seq ||
            x->head_dim != y->head_dim || x->tflops != y->tflops)
            return false;
    }
    for (size_t i = 0; i < a->n_hbm; i++)
        if (a->hbm[i].bytes != b->hbm[i].bytes || a->hbm[i].gbps != b->hbm[i].gbps)
            return false;
    for (size_t i = 0; i < a->n_coll; i++) {
        const struct microcal_coll *x = &a->coll[i], *y = &b->coll[i];
        if (x->coll != y->coll || x->link != y->link || x->ranks != y->ranks ||
            x->bytes != y->bytes || x->busbw_gbps != y->busbw_gbps)
            return false;
    }
    return true;
}

void microcal_pool_clear(void)
{
    pthread_mutex_lock(&mc_pool_lock);
    struct mc_pooled *p = mc_pool;
    mc_pool = NULL;
    mc_pool_n = 0;
    pthread_mutex_unlock(&mc_pool_lock);
    while (p) {
        struct mc_pooled *next = p->next;
        mc_pooled_free(p);
        p = next;
    }
}

size_t microcal_pool_size(void)
{
    pthread_mutex_lock(&mc_pool_lock);
    size_t n = mc_pool_n;
    pthread_mutex_unlock(&mc_pool_lock);
    return n;
}

/* ---- build ------------------------------------------------------------------------------ */
static int mc_fault(struct microcal_fault *f, struct mt_err *e, int k, size_t row, size_t first,
                    const char *key, const char *what)
{
    if (f) {
        f->kind = mc_kind_names[k];
        f->row = row;
        f->first = first;
        f->key = key;
        snprintf(f->what, sizeof f->what, "%s", what);
    }
    return err_set(e, MT_EINVAL, "%s row %zu: %s", mc_kind_names[k], row, what);
}

int microcal_build(const struct microcal_builder *b, const struct microcal **out,
                   struct microcal_fault *fault, struct mt_err *e)
{
    *out = NULL;
    if (microcal_builder_rows(b) == 0)
        return MT_OK;
    struct mc_pooled *p = xcalloc(1, sizeof *p);
    char what[160];
    for (int k = 0; k < MC__KINDS; k++) {
        size_t n = b->n[k];
        if (n > MICROCAL_MAX_ROWS) {
            snprintf(what, sizeof what, "more than %d rows of %s", MICROCAL_MAX_ROWS,
                     mc_kind_names[k]);
            mc_pooled_free(p);
            return mc_fault(fault, e, k, MICROCAL_MAX_ROWS, SIZE_MAX, NULL, what);
        }
        struct mc_kind_index *ki = &p->index.kind[k];
        ki->n = n;
        ki->pt = n ? xmalloc(n * sizeof *ki->pt) : NULL;
        for (size_t i = 0; i < n; i++)
            if (!mc_point_of(b, k, i, &ki->pt[i], what, sizeof what)) {
                mc_pooled_free(p);
                return mc_fault(fault, e, k, i, SIZE_MAX, NULL, what);
            }
        if (n > 1)
            qsort(ki->pt, n, sizeof *ki->pt, mc_point_cmp);
        for (size_t i = 1; i < n; i++)
            if (mc_key_cmp(&ki->pt[i - 1], &ki->pt[i]) == 0) {
                static const char *const key[MC__KINDS] = {
                    "dtype, m, n and k", "dtype, causal, pass, batch x heads, seq and head_dim",
                    "bytes", "collective, link, bytes and ranks"};
                size_t row = ki->pt[i].row, first = ki->pt[i - 1].row;
                snprintf(what, sizeof what, "the same %s as row %zu", key[k], first);
                mc_pooled_free(p);
                return mc_fault(fault, e, k, row, first, key[k], what);
            }
        mc_classes(ki, mc_dims[k]);
    }
    /* the rows in the points' order; the points then name rows of the table */
    struct microcal *t = &p->t;
    t->n_gemm = b->n[MC_GEMM];
    t->n_attn = b->n[MC_ATTN];
    t->n_hbm = b->n[MC_HBM];
    t->n_coll = b->n[MC_COLL];
    struct microcal_gemm *g = t->n_gemm ? xmalloc(t->n_gemm * sizeof *g) : NULL;
    struct microcal_attention *a = t->n_attn ? xmalloc(t->n_attn * sizeof *a) : NULL;
    struct microcal_hbm *h = t->n_hbm ? xmalloc(t->n_hbm * sizeof *h) : NULL;
    struct microcal_coll *c = t->n_coll ? xmalloc(t->n_coll * sizeof *c) : NULL;
    for (int k = 0; k < MC__KINDS; k++) {
        struct mc_kind_index *ki = &p->index.kind[k];
        for (size_t i = 0; i < ki->n; i++) {
            size_t r = ki->pt[i].row;
            if (k == MC_GEMM)
                g[i] = b->gemm[r];
            else if (k == MC_ATTN)
                a[i] = b->attn[r];
            else if (k == MC_HBM)
                h[i] = b->hbm[r];
            else
                c[i] = b->coll[r];
            ki->pt[i].row = i;
        }
    }
    t->gemm = g;
    t->attn = a;
    t->hbm = h;
    t->coll = c;
    t->index = &p->index;

    pthread_mutex_lock(&mc_pool_lock);
    for (struct mc_pooled *q = mc_pool; q; q = q->next)
        if (mc_same(&q->t, t)) {
            pthread_mutex_unlock(&mc_pool_lock);
            mc_pooled_free(p);
            *out = &q->t;
            return MT_OK;
        }
    if (mc_pool_n >= MICROCAL_POOL_MAX) {
        pthread_mutex_unlock(&mc_pool_lock);
        mc_pooled_free(p);
        return err_set(e, MT_EINVAL, "more than %d distinct micro-benchmark tables in one process",
                       MICROCAL_POOL_MAX);
    }
    p->next = mc_pool;
    mc_pool = p;
    mc_pool_n++;
    pthread_mutex_unlock(&mc_pool_lock);
    *out = t;
    return MT_OK;
}

/* ---- lookups ---------------------------------------------------------------------------- */
/* q's bracket on the sorted axis a[0..n): lo == hi at a measured value or held at an edge
 * within MICROCAL_REACH; else lo < hi and t in (0, 1) the position in log space. */
static bool mc_bracket(const double *a, size_t n, double q, size_t *lo, size_t *hi, double *t)
{
    *t = 0;
    if (!(q > 0) || !isfinite(q) || n == 0)
        return false;
    if (q <= a[0]) {
        *lo = *hi = 0;
        return q * MICROCAL_REACH >= a[0];
    }
    if (q >= a[n - 1]) {
        *lo = *hi = n - 1;
        return q <= a[n - 1] * MICROCAL_REACH;
    }
    size_t l = 0, h = n - 1; /* a[l] < q < a[h] or equal to a[l] */
    while (h - l > 1) {
        size_t m = l + (h - l) / 2;
        if (a[m] <= q)
            l = m;
        else
            h = m;
    }
    if (a[l] == q) {
        *lo = *hi = l;
        return true;
    }
    *lo = l;
    *hi = h;
    *t = (log(q) - log(a[l])) / (log(a[h]) - log(a[l]));
    return true;
}

/* The value of class c's point at x (exact axis values), or false when not measured. */
static bool mc_find(const struct mc_kind_index *ki, const struct mc_class *c, const double *x,
                    int dims, double *v)
{
    struct mc_point key = {.cls = c->cls};
    for (int d = 0; d < dims; d++)
        key.x[d] = x[d];
    size_t l = c->first, h = c->first + c->n;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        int cmp = mc_key_cmp(&ki->pt[m], &key);
        if (cmp == 0) {
            *v = ki->pt[m].v;
            return true;
        }
        if (cmp < 0)
            l = m + 1;
        else
            h = m;
    }
    return false;
}

static bool mc_lookup(const struct microcal *t, int kind, int cls, const double *q, double *out)
{
    if (t == NULL || t->index == NULL)
        return false;
    const struct mc_kind_index *ki = &t->index->kind[kind];
    const struct mc_class *c = NULL;
    size_t l = 0, h = ki->ncls;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (ki->cls[m].cls == cls) {
            c = &ki->cls[m];
            break;
        }
        if (ki->cls[m].cls < cls)
            l = m + 1;
        else
            h = m;
    }
    if (c == NULL)
        return false;
    int dims = mc_dims[kind];
    size_t lo[MC_MAX_DIMS], hi[MC_MAX_DIMS];
    double w[MC_MAX_DIMS];
    bool exact = true;
    for (int d = 0; d < dims; d++) {
        if (!mc_bracket(c->axis[d], c->naxis[d], q[d], &lo[d], &hi[d], &w[d]))
            return false;
        exact = exact && lo[d] == hi[d];
    }
    double x[MC_MAX_DIMS], v;
    if (exact) { /* a measured shape: its figure as measured */
        for (int d = 0; d < dims; d++)
            x[d] = c->axis[d][lo[d]];
        if (!mc_find(ki, c, x, dims, &v))
            return false;
        *out = v;
        return true;
    }
    double acc = 0;
    for (int corner = 0; corner < (1 << dims); corner++) {
        double weight = 1;
        bool used = true;
        for (int d = 0; d < dims; d++) {
            bool up = (corner >> d) & 1;
            if (up && lo[d] == hi[d]) {
                used = false; /* a collapsed axis has one side */
                break;
            }
            x[d] = c->axis[d][up ? hi[d] : lo[d]];
            weight *= up ? w[d] : 1 - w[d];
        }
        if (!used)
            continue;
        if (!mc_find(ki, c, x, dims, &v))
            return false; /* a corner of the cell was not measured */
        acc += weight * log(v);
    }
    *out = exp(acc);
    return isfinite(*out) && *out > 0;
}

bool microcal_gemm_efficiency(const struct microcal *t, double m, double n, double k,
                              enum op_dtype dtype, double peak, double *eff)
{
    double q[3] = {m, n, k}, tflops;
    if (!(peak > 0) || !isfinite(peak) || (unsigned)dtype >= OP_DTYPE__COUNT ||
        !mc_lookup(t, MC_GEMM, (int)dtype, q, &tflops))
        return false;
    double f = tflops * 1e12 / peak;
    *eff = f < 1 ? f : 1;
    return true;
}

bool microcal_attention_flops(const struct microcal *t, double batch, double seq, double heads,
                              double head_dim, bool causal, enum op_dtype dtype, enum op_pass pass,
                              double *flops)
{
    double q[3] = {batch * heads, seq, head_dim}, tflops;
    if ((pass != PASS_FW && pass != PASS_B) || (unsigned)dtype >= OP_DTYPE__COUNT ||
        !mc_lookup(t, MC_ATTN, mc_attn_class(dtype, causal, pass), q, &tflops))
        return false;
    *flops = tflops * 1e12;
    return true;
}

bool microcal_hbm_gbps(const struct microcal *t, double bytes, double *gbps)
{
    double q[1] = {bytes};
    return mc_lookup(t, MC_HBM, 0, q, gbps);
}

bool microcal_busbw(const struct microcal *t, enum op_coll coll, double bytes, int ranks,
                    enum op_link link, double *gbps)
{
    double q[2] = {bytes, (double)ranks};
    if ((unsigned)coll >= COLL__COUNT || (unsigned)link >= LINK__COUNT)
        return false;
    return mc_lookup(t, MC_COLL, mc_coll_class(coll, link), q, gbps);
}

/* nccl-tests' GetBw (src/all_reduce.cu and the others): all-reduce moves 2(n-1)/n of the buffer over each rank's link,
 * all-gather, reduce-scatter and all-to-all (n-1)/n, send/recv all of it. */
double microcal_bus_factor(enum op_coll coll, int n)
{
    double r = n > 0 ? n : 1;
    switch (coll) {
    case COLL_ALL_REDUCE: return 2 * (r - 1) / r;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL: return (r - 1) / r;
    default: return 1;
    }
}
