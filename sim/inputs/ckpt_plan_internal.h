/* sim/inputs/ckpt_plan_internal.h: the planner's state (sim/inputs/ckpt_plan.h), shared by its files: the
 * template and its memory profile (sim/inputs/ckpt_plan.c), the solvers (sim/inputs/ckpt_solve.c), the
 * plan cache and the report (sim/inputs/ckpt_cache.c). Not part of the interface. */
#ifndef MT_SIM_CKPT_PLAN_INTERNAL_H
#define MT_SIM_CKPT_PLAN_INTERNAL_H

#include "model/config.h"
#include "model/cost.h"
#include "sim/inputs/ckpt_plan.h"
#include "sim/plan/plan.h"

/* Relative slack of "fits the cap": the profile and the simulator sum the same terms in a
 * different order. */
#define CKPT_PLAN_EPS 1e-9

struct ckpt_plan {
    struct config cfg; /* the planned config; seqlen.max_positions fixed */
    struct plan *tmpl; /* owned: the template */
    int stages, devices, parts;
    double cap;
    int *layers, *first; /* [stages] */
    /* per device: the stages it runs (dev_st[d * parts + j], j < dev_nst[d]) */
    int *dev_nst, *dev_st;
    /* per device: RC instructions of each of its stages in the template, [d * parts + j] */
    int *dev_rc;
    /* per device: profile points, pt_n[d] of them from pt[pt_off[d]], 3 * dev_nst[d] + 1 ints
     * each (x of each stage, then y, then u, then the kind) */
    int *pt_off, *pt_n, *pt;
    /* per stage: the devices that run it, st_dev[st_off[j] .. st_off[j + 1]) */
    int *st_off, *st_dev;
    /* groups of coupled stages: stages grp_st[grp_off[g] .. grp_off[g + 1]) */
    int ngroups;
    int *grp_off, *grp_st, *grp_of;
    ckpt_plan_bytes_fn bytes; /* NULL: the analytic bytes */
    void *bytes_ctx;
};

/* What a choice makes of every stage's memory: keep[j] (what a forward keeps), none[j] (k = 0:
 * its forwards are FWs), and the costs (act, msg_bytes and the transients). */
struct cp_mem {
    const double *keep;
    const unsigned char *none;
    const struct cost_model *cost;
};

/* Dynamic peak of device d under a choice (>= 0, as sim_memory starts from nothing held). */
double cp_dev_dyn(const struct ckpt_plan *cp, int d, const struct cp_mem *mm);
/* What device d holds for good: the static bytes of the stages it runs. */
double cp_dev_static(const struct ckpt_plan *cp, const struct cost_model *cost, int d);
/* The step time of choice k at length s under the given costs (sim/inputs/ckpt_solve.c). */
int cp_simulate_cost(const struct ckpt_plan *cp, int s, const int *k,
                     const struct cost_model *cost, double *step, struct mt_err *e);

#endif
