/* sim/core/critical.c: the critical path (sim/core/critical.h), walked backwards over the simulated
 * start and end times and the virtual pipeline's dependencies. */
#include <config.h>
#include "sim/core/critical.h"

#include <math.h>
#include <string.h>

#include "sim/core/vpipe.h"
#include "util/err.h"

int sim_critical_path(const struct plan *p, const struct sim_result *r, unsigned char *on_path,
                      struct mt_err *e)
{
    int total = plan_total(p);
    memset(on_path, 0, (size_t)total);
    const struct vpipe_resolved *rv; /* kept with the plan: the simulator's, or shared with it */
    if (vpipe_resolve(p, &rv, e) != MT_OK)
        return -1;
    const struct vpipe_index *vx = rv->x;
    int cur = -1, count = 0;
    for (int id = 0; id < total; id++)
        if (cur < 0 || r->end[id] > r->end[cur])
            cur = id;
    double eps = 1e-9 * (r->step_time > 1 ? r->step_time : 1);
    for (int guard = 0; cur >= 0 && guard <= total; guard++) {
        on_path[cur] = 1;
        count++;
        int dev, pos, deps[VPIPE_MAX_DEPS], next = -1;
        plan_locate_id(p, cur, &dev, &pos);
        int n = vpipe_deps(p, vx, cur, deps, NULL);
        for (int k = 0; k < n && next < 0; k++)
            if (fabs(r->end[deps[k]] - r->start[cur]) <= eps && r->start[cur] > 0)
                next = deps[k];
        for (int i = pos - 1; i >= 0 && next < 0; i--) {
            int id = plan_id(p, dev, i);
            if (vpipe_is_send(plan_at(p, dev, i)->op)) /* sends do not hold the device */
                continue;
            if (fabs(r->end[id] - r->start[cur]) <= eps && r->start[cur] > 0)
                next = id;
            break;
        }
        cur = next;
    }
    return count;
}
