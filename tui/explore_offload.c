/* tui/explore_offload.c: offload in the explorer (issue 29 item 2): the search step (and the
 * tuner's search mode) may offload checkpointed forwards to host memory (OF after the forward,
 * RL before its backward) where that is faster, as `optimize --search --offload` and `tune
 * --search --offload` do (sim/passes/pass.h pass_pipeline_search, sim/tune/tune.h). O turns it
 * on or off: the search step made with the other setting is dropped and made again when
 * shown. A plan that offloads already is shown as given (the passes and the search take plans
 * without copies): there is nothing to search. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>

#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "util/err.h"

/* Why offload cannot change the shown pipeline, or NULL when it can. */
static const char *offload_refused(const struct explore *x)
{
    if (!x->have_pl || x->pl.n < 1)
        return "no plan";
    if (x->pl.as_given)
        return "the plan shown offloads already and is shown as given (no passes, no search)";
    if (config_scheme_async(plan_geom(x->pl.step[0].plan)->scheme))
        return "the scheme is asynchronous: no search step to offload in";
    return NULL;
}

int explore_set_offload(struct explore *x, bool on)
{
    const char *why = offload_refused(x);
    if (why != NULL) {
        snprintf(x->status, sizeof x->status, "O: %s", why);
        x->status_err = true;
        return R_REDRAW;
    }
    bool shown = x->row == PASS_ROW_SEARCH && !x->bucket_on;
    x->offload = on;
    pass_pipeline_unsearch(&x->pl); /* made with the other setting */
    x->bound_of = NULL;             /* the bound again: with or without its memory part */
    char what[64];
    snprintf(what, sizeof what, "offload %s", on ? "on" : "off");
    if (shown) { /* the search again, at once */
        if (explore_set_row(x, PASS_ROW_SEARCH) != MT_OK) {
            char was[sizeof x->status];
            snprintf(was, sizeof was, "%s", x->status);
            x->row = PASS_ROW_PREPOSE;
            explore_refresh(x);
            snprintf(x->status, sizeof x->status, "%s; %.1000s", what, was);
            x->status_err = true;
            return R_REDRAW;
        }
        explore_status_shown(x);
        char was[sizeof x->status];
        snprintf(was, sizeof was, "%s", x->status);
        snprintf(x->status, sizeof x->status, "%s; %.1100s", what, was);
        return R_REDRAW;
    }
    explore_refresh(x);
    snprintf(x->status, sizeof x->status,
             "%s: the search step %s (n to it; the tuner's S likewise)", what,
             on ? "may offload forwards to host memory (OF/RL) where faster"
                : "checkpoints only");
    x->status_err = false;
    return R_REDRAW;
}

int explore_toggle_offload(struct explore *x)
{
    return explore_set_offload(x, !x->offload);
}

int explore_open_search(struct explore *x, bool search, bool offload, struct mt_err *e)
{
    const char *why = offload_refused(x);
    if ((search || offload) && why != NULL)
        return err_set(e, MT_EINVAL, "--%s: %s", offload ? "offload" : "search", why);
    if (offload)
        explore_set_offload(x, true);
    if (search && explore_set_row(x, PASS_ROW_SEARCH) != MT_OK)
        return err_set(e, MT_EINVAL, "--search: %s", x->status);
    if (search)
        explore_status_shown(x);
    return MT_OK;
}
