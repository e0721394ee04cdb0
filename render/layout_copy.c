/* render/layout_copy.c: render/layout_copy.h. */
#include <config.h>
#include "render/layout_copy.h"

#include <math.h>

#include "render/layout_internal.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"

static bool layout_copy_in(const struct plan *p)
{
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            if (plan_op_is_copy(plan_at(p, d, i)->op))
                return true;
    return false;
}

double layout_copy_height(const struct layout_panel *p, double lane_h)
{
    return layout_copy_in(p->plan) ? fmax(4, 0.5 * lane_h) : 0;
}

bool layout_copy_any(const struct layout_panel *panels, int n)
{
    for (int k = 0; k < n; k++)
        if (layout_copy_in(panels[k].plan))
            return true;
    return false;
}

void layout_copy_boxes(struct layout *l, const struct layout_panel *p, int pi, int d, double x0,
                       double scale, double y, double h)
{
    const struct plan *pl = p->plan;
    for (int i = 0; i < plan_len(pl, d); i++) {
        const struct instr *in = plan_at(pl, d, i);
        if (!plan_op_is_copy(in->op))
            continue;
        int id = plan_id(pl, d, i);
        double t0 = p->sim->start[id], t1 = p->sim->end[id];
        double w = (t1 - t0) * scale;
        double half = h / 2, by = y + (in->op == OP_RL ? half : 0);
        unsigned style = (w >= 3 ? LAYOUT_BORDER : 0) | (in->op == OP_RL ? LAYOUT_HATCH : 0);
        struct layout_item *it = layout_add_box(l, LAYOUT_ROLE_INSTR, palette_of_op(in->op),
                                                x0 + t0 * scale, by, w, half, style);
        it->panel = pi, it->dev = d, it->row = -1;
        it->id = id, it->mb = in->mb, it->part = in->part, it->stage = in->stage, it->op = in->op;
        it->t0 = t0, it->t1 = t1;
    }
}
