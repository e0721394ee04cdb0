/* render/layout_copy.h: the copy lane of a plan that offloads (OF/RL, issue 29): a thin lane
 * under each device's rows where its offloads (top half, device to host) and reloads (bottom
 * half, host to device) run beside its compute. Called by the Gantt layout
 * (render/layout_gantt.c); a plan without copies gets no lane, so its picture is unchanged. */
#ifndef MT_RENDER_LAYOUT_COPY_H
#define MT_RENDER_LAYOUT_COPY_H

#include <stdbool.h>

struct layout;
struct layout_panel;

/* The height of the copy lane under each device of panel p (lanes lane_h tall), 0 when the
 * plan has no OF or RL. */
double layout_copy_height(const struct layout_panel *p, double lane_h);
/* Device d's copies of panel p (the simulated timeline) as instruction boxes at x0 + t * scale,
 * in the band [y, y + h): OF in its top half, RL (hatched) in its bottom half. Their row is -1:
 * they belong to no lane of the rows (a terminal draws none). */
void layout_copy_boxes(struct layout *l, const struct layout_panel *p, int pi, int d, double x0,
                       double scale, double y, double h);
/* Whether any panel offloads (the legend's OF/RL entries). */
bool layout_copy_any(const struct layout_panel *panels, int n);

#endif
