/* render/layout_a2a.c: render/layout_a2a.h. */
#include <config.h>
#include "render/layout_a2a.h"

#include <math.h>

#include "render/layout_internal.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"

static bool layout_a2a_in(const struct layout_panel *p)
{
    const struct sim_result *s = p->sim;
    if (s == NULL || s->a2a_hidden == NULL)
        return false;
    for (int id = 0; id < s->total; id++)
        if (s->a2a_hidden[id] > 0 || s->a2a_exposed[id] > 0)
            return true;
    return false;
}

double layout_a2a_height(const struct layout_panel *p, double lane_h)
{
    return layout_a2a_in(p) ? fmax(3, 0.35 * lane_h) : 0;
}

bool layout_a2a_any(const struct layout_panel *panels, int n)
{
    for (int k = 0; k < n; k++)
        if (layout_a2a_in(&panels[k]))
            return true;
    return false;
}

static void layout_a2a_bar(struct layout *l, enum pal color, double x0, double scale, double t0,
                           double t1, double y, double h, int pi, int d)
{
    if (!(t1 > t0))
        return;
    struct layout_item *it =
        layout_add_box(l, LAYOUT_ROLE_DECOR, color, x0 + t0 * scale, y, (t1 - t0) * scale, h, 0);
    it->panel = pi, it->dev = d, it->row = -1;
    it->t0 = t0, it->t1 = t1;
}

void layout_a2a_boxes(struct layout *l, const struct layout_panel *p, int pi, int d, double x0,
                      double scale, double y, double h)
{
    const struct sim_result *s = p->sim;
    const struct plan *pl = p->plan;
    for (int i = 0; i < plan_len(pl, d); i++) {
        int id = plan_id(pl, d, i), q = s->a2a_partner[id];
        double hid = s->a2a_hidden[id], exp_ = s->a2a_exposed[id];
        /* exposed: the end of its own box; hidden: the start of its partner's */
        layout_a2a_bar(l, PAL_MEM_OVER, x0, scale, s->end[id] - exp_, s->end[id], y, h, pi, d);
        if (q >= 0 && hid > 0)
            layout_a2a_bar(l, PAL_SYNC, x0, scale, s->start[q], s->start[q] + hid, y, h, pi, d);
    }
}
