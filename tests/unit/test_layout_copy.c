/* tests/unit/test_layout_copy.c: the copy lane of a plan that offloads (render/layout_copy.c):
 * one box per OF and RL at its simulated interval, in a thin band under its device's rows
 * (OF in the top half, RL hatched in the bottom half), a row of its own in no lane; the
 * legend's entries; the SVG's classes; and a plan without copies laid out as before (no
 * band: its figure is the golden one). The plan is the fuzz corpus's offloading Figure 2. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/paint_svg.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "tests/check.h"
#include "util/err.h"

static struct plan *load(void)
{
    const char *top = getenv("top_srcdir");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/plan/offload-v-4dev-4mb-unit.json",
             top ? top : ".");
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (plan_load(path, &p, &e) != MT_OK)
        fprintf(stderr, "%s\n", e.msg);
    return p;
}

/* p without its copies. */
static struct plan *strip(const struct plan *p)
{
    struct plan *q = plan_clone(p);
    for (int d = 0; d < plan_devices(q); d++)
        for (int i = plan_len(q, d) - 1; i >= 0; i--)
            if (plan_op_is_copy(plan_at(q, d, i)->op))
                plan_remove(q, d, i);
    return q;
}

static struct layout *lay(const struct plan *p, struct sim_result *r)
{
    struct mt_err e = {0};
    struct layout *l = NULL;
    if (sim_run(p, r, &e) != MT_OK)
        return NULL;
    struct layout_panel panel = {NULL, p, r, NULL};
    struct layout_opts o = {0};
    if (layout_build(&panel, 1, &o, &l, &e) != MT_OK)
        fprintf(stderr, "%s\n", e.msg);
    return l;
}

int main(void)
{
    struct plan *p = load();
    if (p == NULL) {
        CHECK(0);
        return check_report("test_layout_copy");
    }
    struct plan *q = strip(p);
    struct sim_result r, rq;
    struct layout *l = lay(p, &r), *lq = lay(q, &rq);
    CHECK(l != NULL && lq != NULL);
    if (l != NULL && lq != NULL) {
        int copies = 0, boxes = 0;
        for (int d = 0; d < plan_devices(p); d++)
            for (int i = 0; i < plan_len(p, d); i++)
                copies += plan_op_is_copy(plan_at(p, d, i)->op);
        int nrows;
        const struct layout_row *rows = layout_rows(l, 0, &nrows);
        double x0, scale;
        layout_time_axis(l, &x0, &scale);
        bool legend_of = false, legend_rl = false;
        for (int k = 0; k < layout_count(l); k++) {
            const struct layout_item *it = &layout_items(l)[k];
            if (it->kind == LAYOUT_TEXT && it->role == LAYOUT_ROLE_LEGEND && it->text) {
                legend_of |= strcmp(it->text, "OF offload to host") == 0;
                legend_rl |= strcmp(it->text, "RL reload") == 0;
            }
            if (it->kind != LAYOUT_BOX || it->role != LAYOUT_ROLE_INSTR ||
                !plan_op_is_copy(it->op))
                continue;
            boxes++;
            CHECK_EQ_INT(it->row, -1);
            /* at its simulated interval */
            CHECK_NEAR(it->x, x0 + r.start[it->id] * scale, 1e-9);
            CHECK_NEAR(it->w, (r.end[it->id] - r.start[it->id]) * scale, 1e-9);
            /* under the device's (one) lane, OF above RL, RL hatched */
            const struct layout_row *row = &rows[it->dev];
            CHECK(it->y >= row->y + row->h - 1e-9);
            CHECK(it->op == OP_OF ? !(it->style & LAYOUT_HATCH) : (it->style & LAYOUT_HATCH) != 0);
            if (it->op == OP_RL)
                CHECK_NEAR(it->y, row->y + row->h + it->h, 1e-9);
        }
        CHECK_EQ_INT(boxes, copies);
        CHECK(legend_of && legend_rl);
        /* four devices, a band each: the figure is taller by four bands, nothing else */
        CHECK(layout_height(l) > layout_height(lq));
        CHECK_EQ_INT(nrows, plan_devices(p));
        char *svg = NULL;
        size_t n = 0;
        paint_svg_render(l, &svg, &n);
        CHECK(svg != NULL && strstr(svg, ".op-OF{") != NULL && strstr(svg, "class=\"op-RL") != NULL);
        free(svg);
        paint_svg_render(lq, &svg, &n);
        CHECK(svg != NULL && strstr(svg, ".op-OF{") == NULL);
        free(svg);
    }
    layout_free(l);
    layout_free(lq);
    sim_result_fini(&r);
    sim_result_fini(&rq);
    plan_free(p);
    plan_free(q);
    return check_report("test_layout_copy");
}
