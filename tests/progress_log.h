/* tests/progress_log.h: a search_opts progress callback (sim/search/search.h) for the tests: it
 * counts its calls, remembers the last (done, budget), notes a report that goes backwards or
 * past the budget, and says stop at call stop_after (0: never). */
#ifndef MT_TESTS_PROGRESS_LOG_H
#define MT_TESTS_PROGRESS_LOG_H

#include <stdbool.h>

struct progress_log {
    int calls, stop_after;
    long last_done, last_budget;
    bool backwards;
};

static inline bool progress_cb(void *ctx, long done, long budget)
{
    struct progress_log *g = ctx;
    g->backwards = g->backwards || done < g->last_done || done > budget;
    g->last_done = done;
    g->last_budget = budget;
    return ++g->calls != g->stop_after;
}

#endif
