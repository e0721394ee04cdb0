/* render/layout_a2a.h: the expert all-to-alls' lane of a MoE plan (issue 38): a thin row under
 * each device's rows where its dispatch and combine run (sim/core/overlap.h): an instruction's
 * exposed all-to-all at the end of its own box (vermillion), the part it hid under the box of
 * its F&B partner (grey). Called by the Gantt layout (render/layout_gantt.c) beside the copy
 * lane; a simulation without all-to-alls gets no lane, so its picture is unchanged. */
#ifndef MT_RENDER_LAYOUT_A2A_H
#define MT_RENDER_LAYOUT_A2A_H

#include <stdbool.h>

struct layout;
struct layout_panel;

/* The height of the lane under each device of panel p (lanes lane_h tall), 0 without
 * all-to-alls. */
double layout_a2a_height(const struct layout_panel *p, double lane_h);
/* Device d's all-to-alls of panel p at x0 + t * scale in the band [y, y + h). */
void layout_a2a_boxes(struct layout *l, const struct layout_panel *p, int pi, int d, double x0,
                      double scale, double y, double h);
/* Whether any panel has the lane (the legend's entries). */
bool layout_a2a_any(const struct layout_panel *panels, int n);

#endif
