/* sim/plan/footprint.c: a command's memory from its plan's size (see footprint.h). */
#include <config.h>
#include "sim/plan/footprint.h"

#include <stdio.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "util/err.h"
#include "util/str.h"
#include "util/sysmem.h"

double footprint_cell_bytes(enum footprint_use u)
{
    switch (u) {
    case FOOTPRINT_SIMULATE: return 1.0 * 1024;
    case FOOTPRINT_PASSES: return 4.0 * 1024;
    case FOOTPRINT_SEARCH: return 5.0 * 1024;
    case FOOTPRINT_TUNE: return 16.0 * 1024;
    }
    return 0;
}

static const char *footprint_use_name(enum footprint_use u)
{
    switch (u) {
    case FOOTPRINT_SIMULATE: return "the simulation";
    case FOOTPRINT_PASSES: return "Mario's passes";
    case FOOTPRINT_SEARCH: return "the passes and the schedule search";
    case FOOTPRINT_TUNE: return "the tuner";
    }
    return "?";
}

static double footprint_cells(const struct plan_geom *g)
{
    return (double)g->mbs * g->stages;
}

double footprint_bytes(const struct plan_geom *g, enum footprint_use u, int threads)
{
    return footprint_cells(g) * footprint_cell_bytes(u) *
           (u == FOOTPRINT_TUNE && threads > 1 ? threads : 1);
}

int footprint_check(const struct plan_geom *g, enum footprint_use u, int threads,
                    struct mt_err *e)
{
    const char *from;
    double left = sysmem_available(&from), need = footprint_bytes(g, u, threads);
    if (left < 0 || need <= left)
        return MT_OK;
    char n[32], l[32], per[32];
    str_format_bytes(need, n, sizeof n);
    str_format_bytes(left, l, sizeof l);
    str_format_bytes(footprint_cell_bytes(u), per, sizeof per);
    char workers[48] = "";
    if (u == FOOTPRINT_TUNE && threads > 1)
        snprintf(workers, sizeof workers, " x %d worker threads", threads);
    return err_set(e, MT_ENOMEM,
                   "%s would need about %s of memory for %d stages x %d micro-batches (%.0f "
                   "cells x %s%s), and %s is left (%s): give fewer devices or micro-batches, "
                   "or run it on a machine with more memory",
                   footprint_use_name(u), n, g->stages, g->mbs, footprint_cells(g), per, workers,
                   l, from);
}

int footprint_check_config(const struct config *c, enum footprint_use u, int threads,
                           struct mt_err *e)
{
    struct plan_geom g;
    if (scheme_geom(c, &g, NULL) != MT_OK)
        return MT_OK;
    return footprint_check(&g, u, threads, e);
}

double footprint_run_host_bytes(const struct plan *p)
{
    const struct config *c = plan_config(p);
    struct cost_model cm;
    if (scheme_costs(c, &cm, NULL) != MT_OK) /* the layers' split over the stages */
        return 0;
    double sum = 0;
    for (int s = 0; s < cm.num_stages; s++) {
        cost_stage_bytes_exec(c, c->model.seq_length, &cm.stage[s]);
        sum += cm.stage[s].static_bytes + cm.stage[s].act;
    }
    cost_model_fini(&cm);
    return sum * c->cluster.dp;
}

int footprint_check_run(const struct plan *p, struct mt_err *e)
{
    const char *from;
    double left = sysmem_available(&from), need = footprint_run_host_bytes(p);
    if (left < 0 || need <= left)
        return MT_OK;
    char n[32], l[32];
    str_format_bytes(need, n, sizeof n);
    str_format_bytes(left, l, sizeof l);
    const struct config *c = plan_config(p);
    return err_set(e, MT_ENOMEM,
                   "the CPU run needs at least %s of host memory (its %d ranks' weights, "
                   "gradients and AdamW state, 16 bytes a parameter in fp32, and one "
                   "micro-batch's activations a stage), and %s is left (%s): a smaller model "
                   "(--model tiny) or fewer layers",
                   n, plan_geom(p)->devices * c->cluster.dp, l, from);
}
