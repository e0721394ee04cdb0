/* sim/search/search_lns.c: the search's large-neighbourhood moves (sim/search/search_internal.h): the ops of a
 * few consecutive micro-batches are taken out of the schedule and put back by the branch and
 * bound of search_exact, everything else kept (each device's order of the other ops, their
 * checkpoint flags), in a bounded number of nodes.
 *
 * Why: the local moves change one device at a time, and a better schedule often differs on
 * several devices at once: the forwards of a micro-batch run later on every device, kept rather
 * than checkpointed, so that fewer are in flight and a recompute is saved on each (ZB-V 2 x 5
 * at 1.55 M_θ: F3 and F4 after the recomputes of 1 and 2 on both devices), or a backward runs
 * earlier on one device only to pay when the next one runs its own before a forward too. Each
 * change alone is a step uphill that first improvement never takes; the branch and bound
 * re-places every op of the window together. Windows that end at the last micro-batch come
 * first (there the kept rest fixes the least; most improvements on small cases were found
 * there), and a window that cannot shorten the step is cut by the frame's bound in a few nodes
 * (earliest starts along the data, the lanes and the kept orders, each plus its tail along
 * them). A window searched through without a faster schedule is skipped until the schedule
 * changes; one that ran out of nodes gets twice as many next time. */
#include <config.h>
#include "sim/search/search_internal.h"

#include <stdlib.h>

#include "sim/search/search.h"
#include "util/xalloc.h"

void search_lns_init(const struct search_ctx *c, struct search_lns *z, long limit)
{
    z->n = 3 * c->geom.mbs; /* windows of 3, 2 and 1 ending at each micro-batch */
    z->limit = xmalloc(((size_t)z->n + 1) * sizeof(long));
    z->exhausted = xcalloc((size_t)z->n + 1, 1);
    for (int k = 0; k < z->n; k++)
        z->limit[k] = limit;
    search_lns_reset(c, z);
}

void search_lns_reset(const struct search_ctx *c, struct search_lns *z)
{
    for (int k = 0; k < z->n; k++)
        z->exhausted[k] = c->geom.mbs - k / 3 - (3 - k % 3) < 0; /* no such window */
}

bool search_lns_exhausted(const struct search_lns *z)
{
    for (int k = 0; k < z->n; k++)
        if (!z->exhausted[k])
            return false;
    return true;
}

void search_lns_fini(struct search_lns *z)
{
    free(z->limit);
    free(z->exhausted);
}

bool search_lns(const struct search_ctx *c, struct search_sched *s, long budget,
                struct search_lns *z, struct search_ls_stats *st)
{
    struct search_eval ev;
    search_eval_init(c, &ev);
    search_eval_time(c, s, &ev);
    double ms = ev.makespan;
    search_eval_fini(&ev);
    struct search_sched out, fixed;
    search_sched_init(c, &out);
    search_sched_init(c, &fixed);
    unsigned char *free_op = xmalloc((size_t)c->n_ops + 1);
    int N = c->geom.mbs, k = 0;
    long spent = 0;
    bool found = false;
    for (int e = N; e >= 1; e--) /* windows ending at micro-batch e - 1, the last first */
        for (int w = 3; w >= 1; w--, k++) {
            int m0 = e - w;
            if (m0 < 0 || spent >= budget || search_stopped(c))
                continue;
            if (z->exhausted[k])
                continue;
            for (int op = 0; op < c->n_ops; op++)
                free_op[op] = c->op[op].mb >= m0 && c->op[op].mb < m0 + w;
            search_sched_copy(c, &fixed, s);
            struct search_frame fr = {&fixed, free_op};
            long nodes = z->limit[k];
            if (nodes > (budget - spent) / SEARCH_NODE_COST + 1)
                nodes = (budget - spent) / SEARCH_NODE_COST + 1;
            struct search_exact_result xr;
            bool got = search_exact_ctx(c, nodes, ms, &fr, &out, &xr);
            spent += xr.nodes * SEARCH_NODE_COST;
            if (got) { /* a new schedule: every window may pay again */
                search_sched_copy(c, s, &out);
                ms = xr.best;
                found = true;
                search_lns_reset(c, z);
                if (st)
                    st->improvements++;
            } else if (xr.finished) {
                z->exhausted[k] = 1;
            } else if (nodes == z->limit[k]) {
                z->limit[k] *= 2;
            }
        }
    if (st)
        st->evals += spent;
    free(free_op);
    search_sched_fini(&out);
    search_sched_fini(&fixed);
    return found;
}
