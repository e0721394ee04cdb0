/* bench/bench_render.c: the picture's speed on the case: 1F1B, 64 devices x 512
 * micro-batches (65,536 compute boxes) under unit costs, 1200 units wide. Times the layout,
 * then layout + SVG and layout + PNG into memory (the goal: <= 200 ms each), with and without
 * the memory view; prints the median and quartiles over repeated runs. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "model/config.h"
#include "render/layout.h"
#include "render/paint_cairo.h"
#include "render/paint_svg.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "util/err.h"

static double bench_report(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    printf("%-36s median %8.2f ms   p25 %8.2f   p75 %8.2f   (%d runs)\n", what, t[n / 2], t[n / 4],
           t[3 * n / 4], n);
    return t[n / 2];
}

enum bench_what { BENCH_LAYOUT, BENCH_SVG, BENCH_PNG };

static int bench_once(const struct layout_panel *pn, const struct layout_opts *o,
                      enum bench_what what, double *ms, size_t *bytes)
{
    struct mt_err e = {0};
    struct layout *l = NULL;
    double t0 = bench_now_ms();
    if (layout_build(pn, 1, o, &l, &e) != MT_OK) {
        fprintf(stderr, "bench_render: %s\n", e.msg);
        return 1;
    }
    char *svg = NULL;
    unsigned char *png = NULL;
    size_t len = 0;
    int rc = MT_OK;
    if (what == BENCH_SVG)
        paint_svg_render(l, &svg, &len);
    else if (what == BENCH_PNG)
        rc = paint_cairo_png_render(l, &png, &len, &e);
    *ms = bench_now_ms() - t0;
    *bytes = len;
    free(svg);
    free(png);
    layout_free(l);
    if (rc != MT_OK) {
        fprintf(stderr, "bench_render: %s\n", e.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 10;
    if (runs < 4)
        runs = 4;
    struct config c;
    config_default(&c);
    c.scheme = SCHEME_V;
    c.num_device = 64;
    c.num_microbatches = 512;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct mt_err e = {0};
    struct plan *p = NULL;
    struct sim_result r;
    if (scheme_build(&c, &p, &e) != MT_OK || sim_run(p, &r, &e) != MT_OK) {
        fprintf(stderr, "bench_render: %s\n", e.msg);
        return 1;
    }
    printf("1F1B, 64 devices, 512 micro-batches: %d instructions, width 1200\n", plan_total(p));
    struct layout_panel pn = {.plan = p, .sim = &r};
    double *t = malloc(sizeof(double) * (size_t)runs);
    static const char *const names[] = {"layout", "layout + SVG (in memory)",
                                        "layout + PNG (in memory)"};
    int status = 0;
    for (int memory = 0; memory < 2; memory++) {
        struct layout_opts o = {.width = 1200, .memory = memory};
        for (int w = BENCH_LAYOUT; w <= BENCH_PNG; w++) {
            size_t bytes = 0;
            for (int i = 0; i < runs; i++)
                if (bench_once(&pn, &o, (enum bench_what)w, &t[i], &bytes) != 0)
                    return 1;
            char what[80];
            snprintf(what, sizeof what, "%s%s", names[w], memory ? ", memory view" : "");
            double med = bench_report(what, t, runs);
            if (w != BENCH_LAYOUT) {
                printf("%36s %zu bytes; goal <= 200 ms: %s\n", "", bytes,
                       med <= 200 ? "met" : "MISSED");
                status |= med > 200;
            }
        }
    }
    free(t);
    sim_result_fini(&r);
    plan_free(p);
    return status;
}
