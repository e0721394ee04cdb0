/* sim/inputs/ckpt_solve.c: the input-aware planner's solvers (sim/inputs/ckpt_plan.h ckpt_plan_solve):
 * the greedy one, group by group of coupled stages, and the exact branch and bound that checks
 * it; a choice made into a plan and simulated. The method is sim/inputs/ckpt_plan.c's header. */
#include <config.h>
#include "sim/inputs/ckpt_plan_internal.h"

#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/memory.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* ---------------------------------------------------------------------------------------
 * Solving
 * ------------------------------------------------------------------------------------- */

/* Per-length working state of a solve. */
struct cp_solve {
    const struct ckpt_plan *cp;
    struct cost_model cost;
    int s;
    double *keep, *stat, *dyn; /* [stages] [devices] [devices] */
    unsigned char *none;       /* [stages]: k = 0 */
    struct cp_mem mm;          /* keep, none and the costs */
    double *rc1;               /* [stages]: recompute time of one layer, us */
};

static void cp_solve_fini(struct cp_solve *w)
{
    cost_model_fini(&w->cost);
    free(w->keep);
    free(w->none);
    free(w->stat);
    free(w->rc1);
}

static int cp_solve_init(struct cp_solve *w, const struct ckpt_plan *cp, int s, struct mt_err *e)
{
    memset(w, 0, sizeof *w);
    w->cp = cp;
    w->s = s;
    TRY(ckpt_plan_costs(cp, s, &w->cost, e));
    int S = cp->stages, D = cp->devices;
    w->keep = xmalloc((size_t)S * sizeof(double));
    w->none = xcalloc((size_t)S, 1);
    w->mm = (struct cp_mem){w->keep, w->none, &w->cost};
    w->stat = xmalloc((size_t)D * 2 * sizeof(double));
    w->dyn = w->stat + D;
    w->rc1 = xmalloc((size_t)S * sizeof(double));
    for (int j = 0; j < S; j++) {
        w->keep[j] = w->cost.stage[j].act;
        w->none[j] = 1;
        w->rc1[j] = cp->layers[j] > 0 ? w->cost.stage[j].rc / cp->layers[j] : 0;
    }
    for (int d = 0; d < D; d++)
        w->stat[d] = cp_dev_static(cp, &w->cost, d);
    return MT_OK;
}

static bool cp_over(const struct cp_solve *w, int d)
{
    return w->stat[d] + w->dyn[d] > w->cp->cap * (1 + CKPT_PLAN_EPS);
}

/* Sets keep[j] for k[j] and refreshes the peaks of the devices running j. */
static void cp_set(struct cp_solve *w, const int *k, int j)
{
    const struct ckpt_plan *cp = w->cp;
    w->keep[j] = mem_forward_keep(&w->cost.stage[j], k[j]);
    w->none[j] = k[j] <= 0;
    for (int i = cp->st_off[j]; i < cp->st_off[j + 1]; i++) {
        int d = cp->st_dev[i];
        w->dyn[d] = cp_dev_dyn(cp, d, &w->mm);
    }
}

/* Every layer checkpointed: the least any choice keeps. MT_EINVAL naming the worst device. */
static int cp_check_all(struct cp_solve *w, int *k, struct mt_err *e)
{
    const struct ckpt_plan *cp = w->cp;
    ckpt_plan_all(cp, k);
    for (int j = 0; j < cp->stages; j++) {
        w->keep[j] = mem_forward_keep(&w->cost.stage[j], k[j]);
        w->none[j] = k[j] <= 0;
    }
    int worst = -1;
    double over = 0;
    for (int d = 0; d < cp->devices; d++) {
        w->dyn[d] = cp_dev_dyn(cp, d, &w->mm);
        double o = w->stat[d] + w->dyn[d] - cp->cap;
        if (cp_over(w, d) && o > over)
            worst = d, over = o;
    }
    if (worst < 0)
        return MT_OK;
    char need[32], capb[32], ob[32];
    str_format_bytes(w->stat[worst] + w->dyn[worst], need, sizeof need);
    str_format_bytes(cp->cap, capb, sizeof capb);
    str_format_bytes(over, ob, sizeof ob);
    return err_set(e, MT_EINVAL,
                   "no checkpointing plan fits a batch of %d tokens: even with every layer "
                   "checkpointed device %d needs %s, %s (%.0f bytes) over the %s cap",
                   w->s, worst, need, ob, over, capb);
}

/* The recompute one iteration adds to device d with choice k. */
static double cp_dev_rc(const struct cp_solve *w, const int *k, int d)
{
    const struct ckpt_plan *cp = w->cp;
    double t = 0;
    for (int j = 0; j < cp->dev_nst[d]; j++) {
        int st = cp->dev_st[d * cp->parts + j];
        int kk = k[st] < cp->layers[st] ? k[st] : cp->layers[st];
        t += cp->dev_rc[d * cp->parts + j] * w->rc1[st] * kk;
    }
    return t;
}

/* Mimose's greedy on group g, then pruned to a minimal choice. */
static void cp_greedy_group(struct cp_solve *w, int *k, int g)
{
    const struct ckpt_plan *cp = w->cp;
    const int *gs = cp->grp_st + cp->grp_off[g];
    int m = cp->grp_off[g + 1] - cp->grp_off[g];
    for (int i = 0; i < m; i++) {
        k[gs[i]] = 0;
        cp_set(w, k, gs[i]);
    }
    for (;;) {
        int best = -1;
        double best_ratio = -1, best_fallback = -1;
        bool any_db = false;
        for (int i = 0; i < m; i++) {
            int j = gs[i];
            if (k[j] >= cp->layers[j])
                continue;
            bool held_by_over = false;
            for (int q = cp->st_off[j]; q < cp->st_off[j + 1] && !held_by_over; q++)
                held_by_over = cp_over(w, cp->st_dev[q]);
            if (!held_by_over)
                continue;
            double old_keep = w->keep[j];
            unsigned char old_none = w->none[j];
            double new_keep = mem_forward_keep(&w->cost.stage[j], k[j] + 1);
            double db = 0;
            w->keep[j] = new_keep;
            w->none[j] = 0;
            for (int q = cp->st_off[j]; q < cp->st_off[j + 1]; q++) {
                int d = cp->st_dev[q];
                if (cp_over(w, d))
                    db += w->dyn[d] - cp_dev_dyn(cp, d, &w->mm);
            }
            w->keep[j] = old_keep;
            w->none[j] = old_none;
            double dt = w->rc1[j] > 0 ? w->rc1[j] : 1e-9;
            double ratio = db / dt, fallback = (old_keep - new_keep) / dt;
            if (db > 0 && (!any_db || ratio > best_ratio)) {
                any_db = true;
                best_ratio = ratio;
                best = j;
            } else if (!any_db && fallback > best_fallback) {
                best_fallback = fallback;
                best = j;
            }
        }
        if (best < 0)
            break; /* nothing over the cap (cp_check_all made sure all-on fits) */
        k[best]++;
        cp_set(w, k, best);
    }
    /* Prune: give back layers, the most expensive recompute first, while the group fits. */
    int *order = xmalloc((size_t)m * sizeof(int));
    for (int i = 0; i < m; i++) { /* stages by recompute per layer, descending (stable) */
        int t = i;
        for (; t > 0 && w->rc1[order[t - 1]] < w->rc1[gs[i]]; t--)
            order[t] = order[t - 1];
        order[t] = gs[i];
    }
    bool changed = true;
    while (changed) {
        changed = false;
        for (int i = 0; i < m; i++) {
            int j = order[i];
            while (k[j] > 0) {
                k[j]--;
                cp_set(w, k, j);
                bool fits = true;
                for (int q = cp->st_off[j]; q < cp->st_off[j + 1] && fits; q++)
                    fits = !cp_over(w, cp->st_dev[q]);
                if (!fits) {
                    k[j]++;
                    cp_set(w, k, j);
                    break;
                }
                changed = true;
            }
        }
    }
    free(order);
}

static void cp_solution(const struct cp_solve *w, const int *k, struct ckpt_plan_solution *sol)
{
    const struct ckpt_plan *cp = w->cp;
    double *keep = xmalloc((size_t)cp->stages * sizeof(double));
    unsigned char *none = xmalloc((size_t)cp->stages);
    for (int j = 0; j < cp->stages; j++) {
        keep[j] = mem_forward_keep(&w->cost.stage[j], k[j]);
        none[j] = k[j] <= 0;
    }
    struct cp_mem mm = {keep, none, &w->cost};
    sol->s = w->s;
    sol->peak_bytes = 0;
    sol->peak_device = 0;
    sol->rc_us = 0;
    for (int d = 0; d < cp->devices; d++) {
        double v = w->stat[d] + cp_dev_dyn(cp, d, &mm);
        if (v > sol->peak_bytes)
            sol->peak_bytes = v, sol->peak_device = d;
        double rc = cp_dev_rc(w, k, d);
        if (rc > sol->rc_us)
            sol->rc_us = rc;
    }
    free(keep);
    free(none);
}

int cp_simulate_cost(const struct ckpt_plan *cp, int s, const int *k,
                     const struct cost_model *cost, double *step, struct mt_err *e)
{
    struct plan *p = ckpt_plan_apply(cp, s, k);
    struct sim_result r;
    int rc = sim_run_costs(p, cost, &r, e);
    if (rc == MT_OK) {
        *step = r.step_time;
        sim_result_fini(&r);
    }
    plan_free(p);
    return rc;
}

/* Lower bound of the step time: a device's busy time. base[d]: without recompute. */
static double cp_bound(const struct cp_solve *w, const double *base, const int *k)
{
    double lb = 0;
    for (int d = 0; d < w->cp->devices; d++) {
        double v = base[d] + cp_dev_rc(w, k, d);
        if (v > lb)
            lb = v;
    }
    return lb;
}

/* The exact search (see the file comment). k holds greedy's choice on entry (the first
 * incumbent) and the best on return. */
static int cp_exact(struct cp_solve *w, int *k, struct ckpt_plan_solution *sol, struct mt_err *e)
{
    const struct ckpt_plan *cp = w->cp;
    int S = cp->stages, G = cp->ngroups;
    int **front = xcalloc((size_t)G, sizeof *front); /* [g]: nf[g] choices of m ints */
    int *nf = xcalloc((size_t)G, sizeof(int));
    int *kk = xmalloc((size_t)S * sizeof(int));
    double *base = xcalloc((size_t)cp->devices, sizeof(double));
    int rc = MT_OK;
    long combos = 1;
    for (int g = 0; g < G && rc == MT_OK; g++) {
        const int *gs = cp->grp_st + cp->grp_off[g];
        int m = cp->grp_off[g + 1] - cp->grp_off[g];
        long count = 1;
        for (int i = 0; i < m && count <= CKPT_PLAN_EXACT_MAX_GROUP; i++)
            count *= cp->layers[gs[i]] + 1;
        if (count > CKPT_PLAN_EXACT_MAX_GROUP) {
            rc = err_set(e, MT_EUNSUPPORTED,
                         "exact search: stages coupled with stage %d have over %d choices", gs[0],
                         CKPT_PLAN_EXACT_MAX_GROUP);
            break;
        }
        unsigned char *fit = xcalloc((size_t)count, 1);
        int *digit = xcalloc((size_t)m, sizeof(int));
        memcpy(kk, k, (size_t)S * sizeof(int));
        for (int i = 0; i < m; i++) {
            kk[gs[i]] = 0;
            cp_set(w, kk, gs[i]);
        }
        for (long idx = 0; idx < count; idx++) {
            bool ok = true;
            for (int i = 0; i < m && ok; i++)
                for (int q = cp->st_off[gs[i]]; q < cp->st_off[gs[i] + 1] && ok; q++)
                    ok = !cp_over(w, cp->st_dev[q]);
            fit[idx] = ok;
            for (int i = 0; i < m; i++) { /* next choice, digit 0 fastest */
                if (++digit[i] <= cp->layers[gs[i]]) {
                    kk[gs[i]] = digit[i];
                    cp_set(w, kk, gs[i]);
                    break;
                }
                digit[i] = 0;
                kk[gs[i]] = 0;
                cp_set(w, kk, gs[i]);
            }
        }
        /* minimal: fits, and no single layer fewer fits */
        memset(digit, 0, (size_t)m * sizeof(int));
        for (long idx = 0; idx < count; idx++) {
            bool minimal = fit[idx];
            long stride = 1;
            for (int i = 0; i < m && minimal; i++) {
                if (digit[i] > 0 && fit[idx - stride])
                    minimal = false;
                stride *= cp->layers[gs[i]] + 1;
            }
            if (minimal) {
                front[g] = xreallocarray(front[g], (size_t)nf[g] + 1, (size_t)m * sizeof(int));
                memcpy(front[g] + (size_t)nf[g] * m, digit, (size_t)m * sizeof(int));
                nf[g]++;
            }
            for (int i = 0; i < m; i++) {
                if (++digit[i] <= cp->layers[gs[i]])
                    break;
                digit[i] = 0;
            }
        }
        free(digit);
        free(fit);
        if (nf[g] == 0) /* cp_check_all passed, so all-on fits: cannot happen */
            rc = err_set(e, MT_EINFEASIBLE, "exact search: no choice fits stage %d", gs[0]);
        else if (combos > CKPT_PLAN_EXACT_MAX_COMBOS / nf[g])
            rc = err_set(e, MT_EUNSUPPORTED,
                         "exact search: over %ld combinations of minimal choices",
                         CKPT_PLAN_EXACT_MAX_COMBOS);
        else
            combos *= nf[g];
    }
    /* base busy time of every device: the template's compute without recompute */
    if (rc == MT_OK) {
        const struct plan *p = cp->tmpl;
        for (int d = 0; d < cp->devices; d++)
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                if (in->op == OP_RC)
                    continue;
                if (plan_op_is_compute(in->op) || in->op == OP_AR || in->op == OP_OS)
                    base[d] += sim_instr_latency(&w->cost, in);
            }
    }
    double best = 0, best_rc = 0;
    long sims = 0;
    if (rc == MT_OK) {
        rc = cp_simulate_cost(cp, w->s, k, &w->cost, &best, e);
        sims++;
        for (int d = 0; d < cp->devices; d++)
            best_rc += cp_dev_rc(w, k, d);
    }
    int *pick = xcalloc((size_t)G, sizeof(int));
    for (long c = 0; rc == MT_OK && c < combos; c++) {
        for (int g = 0; g < G; g++) {
            const int *gs = cp->grp_st + cp->grp_off[g];
            int m = cp->grp_off[g + 1] - cp->grp_off[g];
            for (int i = 0; i < m; i++)
                kk[gs[i]] = front[g][(size_t)pick[g] * m + i];
        }
        for (int g = 0; g < G; g++) /* next combination */
            if (++pick[g] < nf[g])
                break;
            else
                pick[g] = 0;
        if (memcmp(kk, k, (size_t)S * sizeof(int)) == 0)
            continue;
        double lb = cp_bound(w, base, kk);
        if (lb >= best * (1 - CKPT_PLAN_EPS))
            continue;
        if (sims >= CKPT_PLAN_EXACT_MAX_SIMS) {
            rc = err_set(e, MT_EUNSUPPORTED, "exact search: over %d simulations",
                         CKPT_PLAN_EXACT_MAX_SIMS);
            break;
        }
        double t;
        rc = cp_simulate_cost(cp, w->s, kk, &w->cost, &t, e);
        sims++;
        double trc = 0;
        for (int d = 0; rc == MT_OK && d < cp->devices; d++)
            trc += cp_dev_rc(w, kk, d);
        if (rc == MT_OK && (t < best * (1 - CKPT_PLAN_EPS) ||
                            (t <= best * (1 + CKPT_PLAN_EPS) && trc < best_rc))) {
            best = t;
            best_rc = trc;
            memcpy(k, kk, (size_t)S * sizeof(int));
        }
    }
    if (rc == MT_OK) {
        sol->step_time = best;
        sol->sims = sims;
        sol->combos = combos;
    }
    for (int g = 0; g < G; g++)
        free(front[g]);
    free(front);
    free(nf);
    free(kk);
    free(base);
    free(pick);
    return rc;
}

int ckpt_plan_solve(const struct ckpt_plan *cp, int s, enum ckpt_plan_algo algo, int *k,
                    struct ckpt_plan_solution *sol, struct mt_err *e)
{
    struct ckpt_plan_solution dummy;
    if (sol == NULL)
        sol = &dummy;
    memset(sol, 0, sizeof *sol);
    if (s < 1)
        return err_set(e, MT_EINVAL, "sequence length %d: must be >= 1", s);
    struct cp_solve w;
    TRY(cp_solve_init(&w, cp, s, e));
    int *kk = xmalloc((size_t)cp->stages * sizeof(int));
    int rc = cp_check_all(&w, kk, e);
    if (rc == MT_OK) {
        for (int g = 0; g < cp->ngroups; g++)
            cp_greedy_group(&w, kk, g);
        if (algo == CKPT_PLAN_EXACT)
            rc = cp_exact(&w, kk, sol, e);
    }
    if (rc == MT_OK) {
        cp_solution(&w, kk, sol);
        memcpy(k, kk, (size_t)cp->stages * sizeof(int));
    }
    free(kk);
    cp_solve_fini(&w);
    return rc;
}

struct plan *ckpt_plan_apply(const struct ckpt_plan *cp, int s, const int *k)
{
    struct config cs = cp->cfg;
    cs.model.seq_length = s;
    const struct plan *t = cp->tmpl;
    struct plan *p = plan_new(&cs, plan_geom(t));
    for (int d = 0; d < plan_devices(t); d++)
        for (int i = 0; i < plan_len(t, d); i++) {
            struct instr in = *plan_at(t, d, i);
            if (in.op == OP_CFW || in.op == OP_RC) {
                int kj = k[in.stage], n = cp->layers[in.stage];
                if (kj <= 0) {
                    if (in.op == OP_RC)
                        continue;
                    in.op = OP_FW;
                    in.ckpt_layers = 0;
                } else {
                    in.ckpt_layers = mem_ckpt_layers(kj, n);
                }
            }
            plan_append(p, d, in);
        }
    return p;
}

int ckpt_plan_simulate(const struct ckpt_plan *cp, int s, const int *k, struct sim_result *out,
                       struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    struct cost_model cost;
    TRY(ckpt_plan_costs(cp, s, &cost, e));
    struct plan *p = ckpt_plan_apply(cp, s, k);
    int rc = sim_run_costs(p, &cost, out, e);
    plan_free(p);
    cost_model_fini(&cost);
    return rc;
}
