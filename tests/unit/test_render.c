/* tests/unit/test_render.c: render/ against what a reader of the picture must find. The
 * SVG is read back: one <rect class="op-.."> per compute instruction, each at x = x0 +
 * start * scale with width = duration * scale, where x0 and scale come from the axis ticks
 * in the same file and the durations are the unit costs (F = 1, B = 2, RC = 1) themselves.
 * PNGs have the requested width (IHDR), PDFs the expected page count; the layout keeps boxes
 * of a lane apart and everything on the canvas for many widths and every scheme. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/scheme_registry.h"
#include "render/layout.h"
#include "render/paint_cairo.h"
#include "render/paint_svg.h"
#include "render/palette.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"
#include "util/xalloc.h"

static struct config unit_config(enum scheme_id scheme, int D, int N)
{
    return test_unit_config(scheme, D, N, 1, 2, 1);
}

struct fixture {
    struct plan *p;
    struct sim_result r;
};

static int fixture_make(struct fixture *f, struct config c)
{
    struct mt_err e = {0};
    f->p = NULL;
    memset(&f->r, 0, sizeof f->r);
    int rc = scheme_build(&c, &f->p, &e);
    if (rc == MT_OK)
        rc = validate_plan(f->p, &e);
    if (rc == MT_OK)
        rc = sim_run(f->p, &f->r, &e);
    if (rc != MT_OK)
        fprintf(stderr, "fixture %s D=%d N=%d: %s\n", config_scheme_name(c.scheme), c.num_device,
                c.num_microbatches, e.msg);
    return rc;
}

static void fixture_fini(struct fixture *f)
{
    sim_result_fini(&f->r);
    plan_free(f->p);
}

static struct layout *build(const struct layout_panel *panels, int n, struct layout_opts o)
{
    struct layout *l = NULL;
    struct mt_err e = {0};
    if (layout_build(panels, n, &o, &l, &e) != MT_OK)
        fprintf(stderr, "layout_build: %s\n", e.msg);
    return l;
}

/* With MT_RENDER_DUMP=DIR set, pictures the tests draw are kept there for a look. */
static void dump(const struct layout *l, const char *name)
{
    const char *dir = getenv("MT_RENDER_DUMP");
    if (dir == NULL || l == NULL)
        return;
    char path[512];
    struct mt_err e = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (paint_cairo_png(l, path, &e) != MT_OK)
        fprintf(stderr, "dump %s: %s\n", path, e.msg);
}

/* ---- reading the SVG back ---------------------------------------------------------------- */

/* The value of attribute name in the element [el, end). */
static bool svg_attr(const char *el, const char *end, const char *name, double *v)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(el, key);
    if (a == NULL || a >= end)
        return false;
    *v = strtod(a + strlen(key), NULL);
    return true;
}

struct svg_box {
    char op[8];
    bool measured;
    int id, dev, mb;
    double x, y, w, h;
};

/* Every instruction box in the document. */
static int svg_boxes(const char *svg, struct svg_box **out)
{
    int n = 0, cap = 64;
    struct svg_box *v = xmalloc((size_t)cap * sizeof *v);
    for (const char *p = svg; (p = strstr(p, "<rect class=\"op-")) != NULL; p++) {
        const char *end = strstr(p, "/>");
        struct svg_box b = {0};
        const char *op = p + strlen("<rect class=\"op-");
        size_t k = 0;
        while (op[k] && op[k] != ' ' && op[k] != '"' && k < sizeof b.op - 1) {
            b.op[k] = op[k];
            k++;
        }
        const char *cls_end = strchr(op, '"');
        b.measured = strstr(op, "measured") != NULL && strstr(op, "measured") < cls_end;
        double id = -1, dev = -1, mb = -1;
        svg_attr(p, end, "data-id", &id);
        svg_attr(p, end, "data-dev", &dev);
        svg_attr(p, end, "data-mb", &mb);
        b.id = (int)id, b.dev = (int)dev, b.mb = (int)mb;
        svg_attr(p, end, "x", &b.x);
        svg_attr(p, end, "y", &b.y);
        svg_attr(p, end, "width", &b.w);
        svg_attr(p, end, "height", &b.h);
        if (n == cap) {
            cap *= 2;
            v = xreallocarray(v, (size_t)cap, sizeof *v);
        }
        v[n++] = b;
    }
    *out = v;
    return n;
}

/* The axis from the tick marks: x = x0 + t * scale (first and last tick of the first axis). */
static bool svg_axis(const char *svg, double *x0, double *scale)
{
    double t_first = 0, x_first = 0, t_last = 0, x_last = 0;
    int n = 0;
    for (const char *p = svg; (p = strstr(p, "<line class=\"tick\" data-t=\"")) != NULL; p++) {
        const char *end = strstr(p, "/>");
        double t, x;
        t = strtod(p + strlen("<line class=\"tick\" data-t=\""), NULL);
        if (!svg_attr(p, end, "x1", &x))
            continue;
        if (n > 0 && t <= t_last)
            break; /* the next panel's (or memory strips') axis starts again at 0 */
        if (n == 0)
            t_first = t, x_first = x;
        t_last = t, x_last = x;
        n++;
    }
    if (n < 2)
        return false;
    *scale = (x_last - x_first) / (t_last - t_first);
    *x0 = x_first - t_first * *scale;
    return true;
}

static char *svg_of(const struct layout *l)
{
    char *s;
    size_t len;
    paint_svg_render(l, &s, &len);
    return s;
}

static double unit_cost(enum op op, int chunks)
{
    switch (op) {
    case OP_FW:
    case OP_CFW:
    case OP_RC: return 1.0 / chunks;
    case OP_BW: return 2.0 / chunks;
    case OP_B:
    case OP_W: return 1.0 / chunks;
    default: return 0;
    }
}

/* One box per compute instruction, at its simulated start, as wide as its unit cost. */
static void check_svg_boxes(const struct fixture *f, const char *svg, int chunks)
{
    double x0, scale;
    CHECK(svg_axis(svg, &x0, &scale));
    struct svg_box *b;
    int n = svg_boxes(svg, &b);
    int want = 0, counts[OP__COUNT] = {0}, got[OP__COUNT] = {0};
    for (int d = 0; d < plan_devices(f->p); d++)
        for (int i = 0; i < plan_len(f->p, d); i++)
            if (plan_op_is_compute(plan_at(f->p, d, i)->op)) {
                want++;
                counts[plan_at(f->p, d, i)->op]++;
            }
    int compute = 0;
    char *seen = xcalloc((size_t)plan_total(f->p) + 1, 1);
    for (int k = 0; k < n; k++) {
        int op = plan_op_parse(b[k].op);
        if (op < 0 || !plan_op_is_compute((enum op)op))
            continue;
        compute++;
        got[op]++;
        CHECK(b[k].id >= 0 && b[k].id < plan_total(f->p));
        if (b[k].id < 0 || b[k].id >= plan_total(f->p))
            continue;
        CHECK(!seen[b[k].id]);
        seen[b[k].id] = 1;
        int dev, i;
        plan_locate_id(f->p, b[k].id, &dev, &i);
        const struct instr *in = plan_at(f->p, dev, i);
        CHECK_EQ_INT(in->op, op);
        CHECK_EQ_INT(in->mb, b[k].mb);
        CHECK_EQ_INT(dev, b[k].dev);
        CHECK_NEAR(b[k].x, x0 + f->r.start[b[k].id] * scale, 0.02);
        CHECK_NEAR(b[k].w, unit_cost(in->op, chunks) * scale, 0.02);
    }
    CHECK_EQ_INT(compute, want);
    for (int op = 0; op < OP__COUNT; op++)
        CHECK_EQ_INT(got[op], counts[op]);
    free(seen);
    free(b);
}

/* The paper's Figure 2 baseline (4 devices, 4 micro-batches, 1F1B): 21t; the last BW of
 * device 0 ends at the right end of the time range. */
static void test_svg_v4x4(void)
{
    struct fixture f;
    if (fixture_make(&f, unit_config(SCHEME_V, 4, 4)) != MT_OK) {
        CHECK(false);
        return;
    }
    CHECK_NEAR(f.r.step_time, 21, 1e-9);
    struct layout_panel pn = {.plan = f.p, .sim = &f.r};
    struct layout *l = build(&pn, 1, (struct layout_opts){.width = 1000});
    CHECK(l != NULL);
    if (l == NULL) {
        fixture_fini(&f);
        return;
    }
    char *svg = svg_of(l);
    CHECK_STR_CONTAINS(svg, "<svg");
    CHECK_STR_CONTAINS(svg, "step time 21 t");
    CHECK_STR_CONTAINS(svg, "time (t)");
    check_svg_boxes(&f, svg, 1);
    /* 4 x 4 forwards and backwards. */
    struct svg_box *b;
    int n = svg_boxes(svg, &b);
    CHECK_EQ_INT(n, 32);
    double x0, scale, lx0, lscale;
    CHECK(svg_axis(svg, &x0, &scale));
    layout_time_axis(l, &lx0, &lscale);
    CHECK_NEAR(x0, lx0, 0.02);
    CHECK_NEAR(scale, lscale, 1e-3);
    double right = 0;
    for (int k = 0; k < n; k++)
        if (b[k].dev == 0 && b[k].x + b[k].w > right)
            right = b[k].x + b[k].w;
    CHECK_NEAR(right, x0 + 21 * scale, 0.03);
    /* Device 3 (last stage) has no bubble between F0 and B0: B0 starts when F0 ends (t 4). */
    for (int k = 0; k < n; k++)
        if (b[k].dev == 3 && b[k].mb == 0 && strcmp(b[k].op, "BW") == 0)
            CHECK_NEAR(b[k].x, x0 + 4 * scale, 0.02);
    /* Micro-batch numbers are drawn inside the boxes at this width. */
    CHECK_STR_CONTAINS(svg, "class=\"label\"");
    CHECK_STR_CONTAINS(svg, "class=\"bubble\"");
    free(b);
    free(svg);
    layout_free(l);
    fixture_fini(&f);
}

/* X, W and GPipe, with comm marks and the memory view: still one box per instruction. */
static void test_svg_schemes(void)
{
    struct {
        enum scheme_id s;
        int D, N, chunks;
    } cases[] = {{SCHEME_X, 4, 4, 1},
                 {SCHEME_W, 4, 8, 2},
                 {SCHEME_GPIPE, 4, 4, 1},
                 {SCHEME_V, 8, 16, 1},
                 {SCHEME_W, 4, 8, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c = unit_config(cases[i].s, cases[i].D, cases[i].N);
        c.chunks = cases[i].chunks > 1 ? cases[i].chunks : c.chunks;
        struct fixture f;
        if (fixture_make(&f, c) != MT_OK) {
            CHECK(false);
            continue;
        }
        struct layout_panel pn = {.plan = f.p, .sim = &f.r};
        for (int memory = 0; memory < 2; memory++) {
            struct layout *l =
                build(&pn, 1, (struct layout_opts){.width = 1400, .memory = memory, .comm = true});
            CHECK(l != NULL);
            if (l == NULL)
                continue;
            char *svg = svg_of(l);
            const struct scheme_record *rec = scheme_registry_get(cases[i].s);
            bool chunks = rec->chunks == SCHEME_CHUNKS_CONFIG; /* W's lanes: "chunk k" */
            check_svg_boxes(&f, svg, chunks ? cases[i].chunks : 1);
            /* One mark per send to another device, from the sender's row to the peer's. */
            int sends = 0, marks = 0, bad = 0;
            for (int d = 0; d < plan_devices(f.p); d++)
                for (int k = 0; k < plan_len(f.p, d); k++) {
                    const struct instr *in = plan_at(f.p, d, k);
                    sends += (in->op == OP_SA || in->op == OP_SG) && in->peer != d;
                }
            const struct layout_item *it = layout_items(l);
            for (int k = 0; k < layout_count(l); k++)
                if (it[k].role == LAYOUT_ROLE_COMM) {
                    marks++;
                    int dev, pos;
                    plan_locate_id(f.p, it[k].id, &dev, &pos);
                    bool down = plan_at(f.p, dev, pos)->peer > dev;
                    bad += dev != it[k].dev || (down ? it[k].h <= 0 : it[k].h >= 0);
                }
            CHECK_EQ_INT(marks, sends);
            CHECK_EQ_INT(bad, 0);
            if (rec->replicas == 2) /* Chimera's up pipeline is hatched */
                CHECK_STR_CONTAINS(svg, "class=\"hatch\"");
            if (chunks)
                CHECK_STR_CONTAINS(svg, "chunk 1");
            if (memory) {
                CHECK_STR_CONTAINS(svg, "class=\"mem-static\"");
                CHECK_STR_CONTAINS(svg, "class=\"mem-dyn\"");
                CHECK_STR_CONTAINS(svg, "class=\"mem-curve\"");
            }
            free(svg);
            layout_free(l);
        }
        fixture_fini(&f);
    }
}

/* Peak bars: static + activations wide in proportion, the cap a line, red above it. A real
 * (non-unit) config with a cap below the peak. */
static void test_memory_bars(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 8;
    struct fixture f;
    if (fixture_make(&f, c) != MT_OK) {
        CHECK(false);
        return;
    }
    double peak = 0;
    for (int d = 0; d < f.r.devices; d++)
        peak = fmax(peak, f.r.dev[d].peak_mem);
    f.r.cap = 0.8 * peak; /* pretend a smaller device */
    struct layout_panel pn = {.plan = f.p, .sim = &f.r};
    struct layout *l = build(&pn, 1, (struct layout_opts){.width = 1200, .memory = true});
    CHECK(l != NULL);
    if (l == NULL) {
        fixture_fini(&f);
        return;
    }
    const struct layout_item *it = layout_items(l);
    double st_w[8] = {0}, dyn_w[8] = {0}, over_w[8] = {0};
    int caps = 0, over = 0;
    for (int i = 0; i < layout_count(l); i++) {
        if (it[i].kind == LAYOUT_BOX && it[i].role == LAYOUT_ROLE_MEM_STATIC && it[i].dev >= 0 &&
            it[i].w < 300) /* the bars, not the strips' static floor */
            st_w[it[i].dev] = it[i].w;
        if (it[i].kind == LAYOUT_BOX && it[i].role == LAYOUT_ROLE_MEM_DYN)
            dyn_w[it[i].dev] = it[i].w;
        if (it[i].kind == LAYOUT_BOX && it[i].role == LAYOUT_ROLE_MEM_OVER) {
            over++;
            if (it[i].h > 5 && over_w[it[i].dev] == 0)
                over_w[it[i].dev] = it[i].w;
        }
        if (it[i].role == LAYOUT_ROLE_MEM_CAP)
            caps++;
    }
    CHECK(caps >= 1);
    CHECK(over >= 1);
    for (int d = 0; d < 4; d++) {
        const struct sim_device *dv = &f.r.dev[d];
        CHECK(st_w[d] > 0);
        /* Widths are in proportion to the bytes. */
        CHECK_NEAR(dyn_w[d] / st_w[d], dv->peak_dynamic / dv->static_mem, 1e-6);
    }
    /* Device 0 holds the most activations in 1F1B: it is over the cap. */
    CHECK(f.r.dev[0].peak_mem > f.r.cap);
    CHECK(over_w[0] > 0);
    char *svg = svg_of(l);
    CHECK_STR_CONTAINS(svg, "time (ms)");
    CHECK_STR_CONTAINS(svg, "GiB");
    CHECK_STR_CONTAINS(svg, "class=\"mem-over\"");
    dump(l, "memory-over-cap.png");
    free(svg);
    layout_free(l);
    fixture_fini(&f);
}

/* A measured timeline (synthetic: 10% slower plus a 0.5 t start offset, one instruction not
 * measured) gets its own row under each device's simulated row. */
static void test_measured(void)
{
    struct fixture f;
    if (fixture_make(&f, unit_config(SCHEME_V, 4, 4)) != MT_OK) {
        CHECK(false);
        return;
    }
    int total = plan_total(f.p);
    double *ms = xmalloc((size_t)total * sizeof(double)),
           *me = xmalloc((size_t)total * sizeof(double));
    for (int id = 0; id < total; id++) {
        ms[id] = 0.5 + 1.1 * f.r.start[id];
        me[id] = 0.5 + 1.1 * f.r.end[id];
    }
    int missing = plan_id(f.p, 2, plan_find(f.p, 2, OP_BW, 1, 2));
    CHECK(missing >= 0);
    ms[missing] = 1, me[missing] = 0; /* not measured */
    int early = plan_id(f.p, 0, plan_find(f.p, 0, OP_FW, 0, 0));
    ms[early] = -1; /* before the trace's origin: not drawn either */
    struct layout_timeline tl = {.name = "measured", .start = ms, .end = me};
    struct layout_panel pn = {.plan = f.p, .sim = &f.r, .measured = &tl};
    struct layout *l = build(&pn, 1, (struct layout_opts){.width = 1200});
    CHECK(l != NULL);
    if (l) {
        char *svg = svg_of(l);
        struct svg_box *b;
        int n = svg_boxes(svg, &b);
        double x0, scale;
        CHECK(svg_axis(svg, &x0, &scale));
        int sim = 0, meas = 0;
        for (int k = 0; k < n; k++) {
            if (!b[k].measured) {
                sim++;
                continue;
            }
            meas++;
            CHECK(b[k].id != missing && b[k].id != early);
            CHECK_NEAR(b[k].x, x0 + ms[b[k].id] * scale, 0.02);
            CHECK_NEAR(b[k].w, (me[b[k].id] - ms[b[k].id]) * scale, 0.02);
            /* Its simulated twin sits above it, in the same device block. */
            for (int j = 0; j < n; j++)
                if (!b[j].measured && b[j].id == b[k].id)
                    CHECK(b[j].y < b[k].y && b[k].y - b[j].y < 3 * b[j].h);
        }
        CHECK_EQ_INT(sim, 32);
        CHECK_EQ_INT(meas, 30);
        /* The axis reaches the measured end: 0.5 + 1.1 * 21. */
        double lx0, lscale;
        layout_time_axis(l, &lx0, &lscale);
        CHECK_NEAR(lscale, scale, 1e-3);
        CHECK_STR_CONTAINS(svg, "measured");
        dump(l, "measured.png");
        free(b);
        free(svg);
        layout_free(l);
    }
    free(ms);
    free(me);
    fixture_fini(&f);
}

/* Several panels (the before/after figure takes any list of (name, plan)): one time axis. */
static void test_panels(void)
{
    struct fixture a, b;
    if (fixture_make(&a, unit_config(SCHEME_V, 4, 4)) != MT_OK ||
        fixture_make(&b, unit_config(SCHEME_GPIPE, 4, 6)) != MT_OK) {
        CHECK(false);
        return;
    }
    struct layout_panel pn[2] = {{.name = "1F1B", .plan = a.p, .sim = &a.r},
                                 {.name = "GPipe", .plan = b.p, .sim = &b.r}};
    struct layout *l = build(pn, 2, (struct layout_opts){.width = 900});
    CHECK(l != NULL);
    if (l) {
        char *svg = svg_of(l);
        CHECK_STR_CONTAINS(svg, "1F1B \xc2\xb7 step 21 t");
        CHECK_STR_CONTAINS(svg, "GPipe \xc2\xb7 step 27 t");
        struct svg_box *bx;
        int n = svg_boxes(svg, &bx);
        CHECK_EQ_INT(n, 32 + 48);
        double x0, scale;
        layout_time_axis(l, &x0, &scale);
        /* The longer plan (GPipe, 27 t) fills the axis; both panels use the same scale. */
        CHECK_NEAR(x0 + 27 * scale, 900 - 16, 0.01);
        const struct layout_item *it = layout_items(l);
        for (int i = 0; i < layout_count(l); i++)
            if (it[i].role == LAYOUT_ROLE_INSTR) {
                const struct fixture *f = it[i].panel == 0 ? &a : &b;
                CHECK_NEAR(it[i].x, x0 + f->r.start[it[i].id] * scale, 1e-9);
            }
        free(bx);
        free(svg);
        layout_free(l);
    }
    fixture_fini(&a);
    fixture_fini(&b);
}

/* No two boxes of one lane overlap; every item lies on the canvas; labels inside their box. */
static void check_layout_sane(const struct layout *l, const char *what)
{
    const struct layout_item *it = layout_items(l);
    int n = layout_count(l);
    double W = layout_width(l), H = layout_height(l);
    int bad_bounds = 0, bad_overlap = 0, bad_label = 0;
    for (int i = 0; i < n; i++) {
        double x0, y0, x1, y1;
        layout_item_bounds(&it[i], &x0, &y0, &x1, &y1);
        if (x0 < -0.5 || y0 < -0.5 || x1 > W + 0.5 || y1 > H + 0.5) {
            if (bad_bounds++ < 3)
                fprintf(stderr, "%s: item %d (kind %d role %d '%s') at [%g,%g]-[%g,%g] off %gx%g\n",
                        what, i, it[i].kind, it[i].role, it[i].text ? it[i].text : "", x0, y0, x1,
                        y1, W, H);
        }
        if (it[i].role == LAYOUT_ROLE_LABEL && i > 0) {
            /* The label follows its box. */
            const struct layout_item *bx = &it[i - 1];
            if (bx->role != LAYOUT_ROLE_INSTR || bx->id != it[i].id || x0 < bx->x - 0.5 ||
                x1 > bx->x + bx->w + 0.5 || y0 < bx->y - 1.5 || y1 > bx->y + bx->h + 1.5)
                bad_label++;
        }
    }
    /* Overlap within (panel, row): boxes come per device in program order. */
    for (int i = 0; i < n; i++) {
        if (it[i].role != LAYOUT_ROLE_INSTR)
            continue;
        for (int j = i + 1; j < n && j < i + 400; j++) {
            if (it[j].role != LAYOUT_ROLE_INSTR || it[j].panel != it[i].panel ||
                it[j].row != it[i].row)
                continue;
            double a0 = it[i].x, a1 = it[i].x + it[i].w, b0 = it[j].x, b1 = it[j].x + it[j].w;
            if (fmin(a1, b1) - fmax(a0, b0) > 1e-6 && bad_overlap++ < 3)
                fprintf(stderr, "%s: boxes %d and %d overlap in row %d\n", what, i, j, it[i].row);
        }
    }
    CHECK_EQ_INT(bad_bounds, 0);
    CHECK_EQ_INT(bad_overlap, 0);
    CHECK_EQ_INT(bad_label, 0);
}

static void test_layout_widths(void)
{
    struct {
        enum scheme_id s;
        int D, N, chunks;
    } cases[] = {{SCHEME_V, 4, 4, 1},  {SCHEME_X, 4, 8, 1},     {SCHEME_W, 16, 32, 2},
                 {SCHEME_V, 1, 3, 1},  {SCHEME_GPIPE, 8, 8, 1}, {SCHEME_W, 4, 8, 3},
                 {SCHEME_V, 32, 64, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c = unit_config(cases[i].s, cases[i].D, cases[i].N);
        if (cases[i].chunks > 1)
            c.chunks = cases[i].chunks;
        struct fixture f;
        if (fixture_make(&f, c) != MT_OK) {
            CHECK(false);
            continue;
        }
        int total = plan_total(f.p);
        double *ms = xmalloc((size_t)total * sizeof(double)),
               *me = xmalloc((size_t)total * sizeof(double));
        for (int id = 0; id < total; id++)
            ms[id] = 1.2 * f.r.start[id], me[id] = 1.2 * f.r.end[id];
        struct layout_timeline tl = {.start = ms, .end = me};
        for (double w = LAYOUT_MIN_WIDTH; w <= 5000; w = w * 1.37 + 11) {
            for (int variant = 0; variant < 4; variant++) {
                struct layout_panel pn = {.plan = f.p,
                                          .sim = &f.r,
                                          .measured = variant == 3 ? &tl : NULL,
                                          .name = variant == 2 ? "a rather long panel name" : NULL};
                struct layout_opts o = {.width = w, .memory = variant >= 1, .comm = variant == 2};
                struct layout *l = build(&pn, 1, o);
                CHECK(l != NULL);
                if (l == NULL)
                    continue;
                char what[96];
                snprintf(what, sizeof what, "%s D=%d w=%g v=%d", config_scheme_name(cases[i].s),
                         cases[i].D, w, variant);
                CHECK_NEAR(layout_width(l), w, 1e-9);
                check_layout_sane(l, what);
                layout_free(l);
            }
        }
        free(ms);
        free(me);
        fixture_fini(&f);
    }
}

static void test_errors(void)
{
    struct fixture f, g;
    if (fixture_make(&f, unit_config(SCHEME_V, 4, 4)) != MT_OK ||
        fixture_make(&g, unit_config(SCHEME_V, 2, 4)) != MT_OK) {
        CHECK(false);
        return;
    }
    struct layout *l = NULL;
    struct mt_err e = {0};
    struct layout_panel pn = {.plan = f.p, .sim = &f.r};
    CHECK_EQ_INT(layout_build(&pn, 1, &(struct layout_opts){.width = 100}, &l, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "width");
    CHECK(l == NULL);
    CHECK_EQ_INT(layout_build(&pn, 0, NULL, &l, &e), MT_EINVAL);
    struct layout_panel wrong = {.plan = f.p, .sim = &g.r};
    CHECK_EQ_INT(layout_build(&wrong, 1, NULL, &l, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "another plan");
    /* Default options: 1200 wide. */
    CHECK_EQ_INT(layout_build(&pn, 1, NULL, &l, &e), MT_OK);
    if (l)
        CHECK_NEAR(layout_width(l), LAYOUT_DEFAULT_WIDTH, 0);
    layout_free(l);
    fixture_fini(&f);
    fixture_fini(&g);
}

static unsigned be32(const unsigned char *p)
{
    return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

static void test_png(void)
{
    struct fixture f;
    if (fixture_make(&f, unit_config(SCHEME_X, 4, 8)) != MT_OK) {
        CHECK(false);
        return;
    }
    struct layout_panel pn = {.plan = f.p, .sim = &f.r};
    int widths[] = {320, 777, 1200, 2048};
    for (size_t i = 0; i < 4; i++) {
        struct layout *l =
            build(&pn, 1, (struct layout_opts){.width = widths[i], .memory = i % 2 == 1});
        if (l == NULL) {
            CHECK(false);
            continue;
        }
        unsigned char *png;
        size_t len;
        struct mt_err e = {0};
        CHECK_EQ_INT(paint_cairo_png_render(l, &png, &len, &e), MT_OK);
        CHECK(len > 33);
        if (len > 33) {
            CHECK(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
            CHECK(memcmp(png + 12, "IHDR", 4) == 0);
            CHECK_EQ_INT(be32(png + 16), widths[i]);
            CHECK_EQ_INT(be32(png + 20), (unsigned)ceil(layout_height(l)));
        }
        free(png);
        layout_free(l);
    }
    /* Through a file, written atomically. */
    struct layout *l = build(&pn, 1, (struct layout_opts){.width = 640});
    struct mt_err e = {0};
    char path[] = "test_render.tmp.png";
    CHECK_EQ_INT(paint_cairo_png(l, path, &e), MT_OK);
    FILE *fp = fopen(path, "rb");
    unsigned char head[24] = {0};
    CHECK(fp != NULL);
    if (fp) {
        CHECK_EQ_INT(fread(head, 1, 24, fp), 24);
        fclose(fp);
    }
    CHECK_EQ_INT(be32(head + 16), 640);
    remove(path);
    CHECK(paint_cairo_png(l, "/nonexistent-dir/x.png", &e) == MT_EIO);
    layout_free(l);
    fixture_fini(&f);
}

static int count_pages(const unsigned char *pdf, size_t len)
{
    int n = 0;
    const char *key = "/Type /Page";
    size_t k = strlen(key);
    for (size_t i = 0; i + k < len; i++)
        if (memcmp(pdf + i, key, k) == 0 && pdf[i + k] != 's')
            n++;
    return n;
}

static void test_pdf(void)
{
    struct fixture f[3];
    enum scheme_id s[3] = {SCHEME_V, SCHEME_GPIPE, SCHEME_X};
    for (int i = 0; i < 3; i++)
        if (fixture_make(&f[i], unit_config(s[i], 4, 4)) != MT_OK) {
            CHECK(false);
            return;
        }
    struct layout *pages[3];
    for (int i = 0; i < 3; i++) {
        struct layout_panel pn = {.name = config_scheme_name(s[i]), .plan = f[i].p, .sim = &f[i].r};
        pages[i] = build(&pn, 1, (struct layout_opts){.width = 600 + 100 * i, .t_max = 30});
        CHECK(pages[i] != NULL);
    }
    for (int n = 1; n <= 3; n++) {
        unsigned char *pdf;
        size_t len;
        struct mt_err e = {0};
        CHECK_EQ_INT(paint_cairo_pdf_render((const struct layout *const *)pages, n, &pdf, &len, &e),
                     MT_OK);
        CHECK(len > 8 && memcmp(pdf, "%PDF-", 5) == 0);
        CHECK_EQ_INT(count_pages(pdf, len), n);
        free(pdf);
    }
    /* t_max puts separately built pages on one scale. */
    double x0a, sa, x0b, sb;
    layout_time_axis(pages[0], &x0a, &sa);
    layout_time_axis(pages[1], &x0b, &sb);
    CHECK_NEAR((600 - 16 - x0a) / sa, 30, 1e-9);
    CHECK_NEAR((700 - 16 - x0b) / sb, 30, 1e-9);
    /* A t_max shorter than the plan is raised to its step time (21 t), nothing falls off. */
    struct layout_panel pn0 = {.plan = f[0].p, .sim = &f[0].r};
    struct layout *shortl = build(&pn0, 1, (struct layout_opts){.width = 600, .t_max = 5});
    if (shortl) {
        layout_time_axis(shortl, &x0a, &sa);
        CHECK_NEAR((600 - 16 - x0a) / sa, 21, 1e-9);
        check_layout_sane(shortl, "short t_max");
    }
    layout_free(shortl);
    for (int i = 0; i < 3; i++) {
        layout_free(pages[i]);
        fixture_fini(&f[i]);
    }
}

static void test_palette(void)
{
    /* Every op colour differs from the others and from the bubble grey. */
    enum pal ops[] = {PAL_FW, PAL_CFW, PAL_RC, PAL_BW, PAL_B, PAL_W, PAL_BUBBLE};
    for (size_t i = 0; i < 7; i++)
        for (size_t j = i + 1; j < 7; j++) {
            struct rgb a = palette_rgb(ops[i]), b = palette_rgb(ops[j]);
            CHECK(abs(a.r - b.r) + abs(a.g - b.g) + abs(a.b - b.b) > 60);
        }
    /* Ink: white on the dark blue forward, black on orange and sky blue. */
    CHECK_EQ_INT(palette_text_on(PAL_FW), PAL_BG);
    CHECK_EQ_INT(palette_text_on(PAL_RC), PAL_TEXT);
    CHECK_EQ_INT(palette_text_on(PAL_CFW), PAL_TEXT);
    char hex[8];
    CHECK(strcmp(palette_hex(PAL_FW, hex), "#0072b2") == 0);
    CHECK_EQ_INT(palette_of_op(OP_RC), PAL_RC);
    CHECK(strcmp(palette_name(PAL_BUBBLE), "bubble") == 0);
}

int main(void)
{
    test_palette();
    test_svg_v4x4();
    test_svg_schemes();
    test_memory_bars();
    test_measured();
    test_panels();
    test_layout_widths();
    test_errors();
    test_png();
    test_pdf();
    return check_report("test_render");
}
