/* sim/search/search.c: the search's driver (sim/search/search.h). The starting plans are read as schedules
 * and join the base repaired to fit (the fewest checkpoints, longest-held first) and twelve list
 * schedules (sim/search/search_list.c: warm-ups of 0, 1, 2 and unbounded extra forwards; backward first,
 * recompute first, or recomputes as soon as their forwards ran); those that run and fit are
 * ranked by step. The local search (sim/search/search_local.c) gets a sixteenth of the budget on each
 * of the four best, 40 % on a multi-start of randomised list schedules with short descents (cut
 * short when they end 5 % over the best), and the rest goes to the final phase on the best so
 * far and on the best randomised list schedule (half each when they differ and it is within
 * 3 %): local search until it stalls, then a pass of large-neighbourhood moves
 * (sim/search/search_lns.c: micro-batches re-placed by the branch and bound), again while the budget
 * lasts. Last, for one stage per device under a cap, the fastest periodic schedule
 * (sim/search/search_periodic.c) with a short descent, kept when it beats that. The winner is
 * made a plan, validated and simulated (sim_run), and kept only if the
 * simulator agrees that it fits and beats every starting plan; else the best starting plan
 * under the cap is returned (or, when none fits, the one of lowest peak). */
#include <config.h>
#include "sim/search/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/search/search_internal.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "util/err.h"
#include "util/xalloc.h"

void search_opts_default(struct search_opts *o, const struct config *c)
{
    memset(o, 0, sizeof *o);
    o->cap = config_mem_cap(c);
    o->seed = 18;
}

long search_budget_default(int n_ops)
{
    /* the evaluation is linear in the ops: 6e6 / n evaluations take about as long whatever n
     * (~12,000 for 8 x 16 (1F1B), the floor of 4,000 for 32 x 64 (Chimera)); below 512 ops
     * (small cases, where the exact optimum is known and the search is held to within 2 % of
     * it) 512 / n times more, up to 400,000: a tenth of a second, where the large-neighbourhood
     * moves need their nodes */
    double n = n_ops > 1 ? n_ops : 1, b = 6e6 / n;
    if (n < 512)
        b *= 512 / n;
    return b < 4000 ? 4000 : b > 400000 ? 400000 : (long)b;
}

long search_budget(const struct search_opts *o, int n_ops)
{
    if (o->budget > 0)
        return o->budget;
    if (!o->quick)
        return search_budget_default(n_ops);
    long q = 6000000L / (n_ops > 1 ? n_ops : 1);
    return q < 4000 ? 4000 : q > 40000 ? 40000 : q;
}

/* The share of the budget the multi-start of randomised list schedules gets. */
enum { MULTI_PCT = 40 };

/* The final phase on s: its local search until it stalls (no better schedule in an eighth of
 * the budget), then a pass of large-neighbourhood moves (sim/search/search_lns.c: each window with its
 * own node limit, doubled when it ran out), again while the budget lasts, or until neither
 * finds anything and every window was searched through. The two kinds of move share the
 * budget by what they find, not by a fixed split. */
static void search_final(const struct search_ctx *c, struct search_sched *s, long budget,
                         unsigned seed, struct search_ls_stats *ls)
{
    long end = ls->evals + budget;
    long patience = budget / 8 < 500 ? 500 : budget / 8;
    struct search_lns z;
    search_lns_init(c, &z, 1000);
    bool stalled = false;
    while (ls->evals < end && !search_stopped(c)) {
        struct search_score before = {0, 0, 0}, after;
        struct search_eval ev;
        search_eval_init(c, &ev);
        search_eval_time(c, s, &ev);
        before = search_score_of(&ev);
        search_local(c, s, end - ls->evals, patience, seed++, ls);
        search_eval_time(c, s, &ev);
        after = search_score_of(&ev);
        search_eval_fini(&ev);
        if (search_better(after, before)) /* the windows see a new schedule */
            search_lns_reset(c, &z);
        else if (stalled && search_lns_exhausted(&z))
            break; /* nothing left to try */
        stalled = !search_better(after, before);
        if (ls->evals < end)
            search_lns(c, s, end - ls->evals, &z, ls);
    }
    search_lns_fini(&z);
}

static double search_peak_max(const struct sim_result *r)
{
    return pass_sim_peak_max(r);
}

static bool search_sim_fits(const struct sim_result *r, double cap)
{
    return !(cap > 0) || search_peak_max(r) <= cap;
}

/* The periodic schedule of every binding device and count of kept forwards that runs fastest
 * under the cap (sim/search/search_periodic.c), into *out; its score (ms infinite: none fits). */
static struct search_score search_periodic_best(struct search_ctx *c, struct search_sched *tmp,
                                                struct search_eval *ev, struct search_sched *out)
{
    struct search_score pbest = {INFINITY, INFINITY, INFINITY};
    /* kept forwards at once: at most what the tightest device holds, at most 3 */
    int keeps = 3;
    for (int d = 0; d < c->D; d++) {
        double act = c->cost.stage[d].act; /* device d holds stage d here */
        int k = act > 0 ? (int)((c->cap - c->stat[d]) / act) : 3;
        keeps = k < keeps ? k : keeps;
    }
    for (int keep = 1; keep <= keeps && !search_stopped(c); keep++)
        for (int b = 0; b < c->D && !search_stopped(c); b++) {
            search_periodic(c, b, keep, tmp);
            bool fits = search_eval_time(c, tmp, ev) && search_better(search_score_of(ev), pbest);
            for (int d = 0; d < c->D && fits; d++)
                fits = search_fits(c, search_eval_peak(c, tmp, d, ev));
            if (fits && search_better(search_score_of(ev), pbest)) {
                pbest = search_score_of(ev);
                search_sched_copy(c, out, tmp);
            }
        }
    return pbest;
}

/* The lower bound under the search's cap of any schedule of p's work (sim/core/bound.h;
 * without its memory part when the search may offload); infinite when there is none. */
static double search_lower_bound(const struct search_ctx *c, const struct plan *p, bool offload)
{
    struct bound_result b;
    struct mt_err e = {0};
    if (bound_compute(p, &c->cost, c->cap, &b, &e) != MT_OK)
        return INFINITY;
    if (offload)
        bound_allow_offload(&b);
    double lb = bound_value(&b, true);
    return lb > 0 && isfinite(lb) ? lb : INFINITY;
}

int search_run(const struct plan *const *seeds, const char *const *names, int n,
               const struct search_opts *o, struct plan **out, struct sim_result *out_sim,
               struct search_stats *st, struct mt_err *e)
{
    *out = NULL;
    if (out_sim)
        memset(out_sim, 0, sizeof *out_sim);
    memset(st, 0, sizeof *st);
    if (n < 1)
        return err_set(e, MT_EINVAL, "the search needs a plan to start from");
    struct search_ctx c;
    TRY(search_ctx_init(&c, seeds[0], o->cap, e));
    struct search_eval ev;
    search_eval_init(&c, &ev);
    struct search_sched s, start;
    search_sched_init(&c, &s);
    search_sched_init(&c, &start);
    /* The seeds by the simulator: the best that fits, and the lowest peak as a last resort. */
    int best = -1, lowest = 0, rc = MT_OK;
    double best_step = INFINITY, low_peak = INFINITY, low_step = INFINITY;
    struct sim_result best_sim = {0};
    for (int i = 0; i < n && rc == MT_OK; i++) {
        struct sim_result r;
        rc = sim_run(seeds[i], &r, e);
        if (rc != MT_OK)
            break;
        double pk = search_peak_max(&r);
        if (pk < low_peak * (1 - 1e-12) ||
            (pk <= low_peak * (1 + 1e-12) && r.step_time < low_step)) {
            low_peak = pk;
            low_step = r.step_time;
            lowest = i;
        }
        if (search_sim_fits(&r, o->cap)) {
            st->seeds++;
            if (r.step_time < best_step * (1 - 1e-12)) {
                best_step = r.step_time;
                best = i;
                sim_result_fini(&best_sim);
                best_sim = r;
                continue;
            }
        }
        sim_result_fini(&r);
    }
    if (rc != MT_OK)
        goto done;
    long budget = search_budget(o, c.n_ops);
    /* the same work between reports whatever the plan's size (one evaluation at 2,048
     * micro-batches x 32 devices takes ~40 ms: 256 of them were ten seconds without a report,
     * or a stop) */
    struct search_progress prog = search_progress_make(o, budget, c.n_ops);
    if (o->progress != NULL)
        c.prog = &prog;
    struct search_ls_stats ls = {0};
    /* the starts: the best seed that fits, the base repaired to fit, and list schedules */
    enum { N_STARTS = 16, N_RUNS = 4 };
    struct search_sched cand[N_STARTS];
    const char *cand_name[N_STARTS];
    double cand_ms[N_STARTS];
    int nc = 0;
    for (int i = 0; i < N_STARTS; i++)
        search_sched_init(&c, &cand[i]);
    struct search_sched s_p, s_r;
    search_sched_init(&c, &s_p);
    search_sched_init(&c, &s_r);
    /* The periodic schedule first: where it meets the lower bound under the cap no schedule is
     * faster, and the search ends there (1F1B 8 x 16 at 1.05 M_θ: 78 t, in a fraction of the
     * budget). Elsewhere it waits for its turn after the other phases (below). */
    bool periodic = search_periodic_applies(&c);
    struct search_score pbest = {INFINITY, INFINITY, INFINITY}, ps = pbest;
    struct search_ls_stats pls = {0}; /* its descent's, added to ls where it would have run */
    const char *from = NULL;
    if (periodic) {
        pbest = search_periodic_best(&c, &start, &ev, &s_p);
        if (isfinite(pbest.ms)) { /* a short descent of its own (a hundredth of the budget) */
            search_local(&c, &s_p, budget / 100 > 200 ? budget / 100 : 200, 0, o->seed + 5,
                         &pls);
            search_eval_time(&c, &s_p, &ev);
            ps = search_score_of(&ev);
        }
        if (ps.ms <= search_lower_bound(&c, seeds[0], o->offload) * (1 + 1e-12)) {
            search_sched_copy(&c, &s, &s_p);
            from = "periodic, at the bound"; /* seed_name[32] */
            ls.evals += pls.evals;
            ls.improvements += pls.improvements;
            goto searched;
        }
    }
    if (best >= 0 && search_sched_from_plan(&c, seeds[best], &cand[nc], NULL) == MT_OK) {
        cand_name[nc] = names && names[best] ? names[best] : "start";
        nc++;
    }
    if (search_sched_from_plan(&c, seeds[0], &start, NULL) == MT_OK) {
        search_strip_checkpoints(&c, &start);
        if (search_repair(&c, &start, &ev)) {
            search_sched_copy(&c, &cand[nc], &start);
            cand_name[nc++] = "repaired base";
        }
    }
    static const int extras[] = {0, 1, 2, 1 << 20};
    static const unsigned flags[] = {0, SEARCH_LIST_RC_FIRST, SEARCH_LIST_RC_EARLY};
    static const char *const list_names[] = {"list schedule", "list schedule (recompute first)",
                                             "list schedule (early recompute)"};
    for (int k = 0; k < 12 && nc < N_STARTS && !search_stopped(&c); k++)
        if (search_list(&c, extras[k / 3], flags[k % 3], 0, &cand[nc]))
            cand_name[nc++] = list_names[k % 3];
    /* keep the ones that run and fit, by step */
    int kept = 0;
    for (int i = 0; i < nc; i++) {
        bool fits = search_eval_time(&c, &cand[i], &ev);
        for (int d = 0; d < c.D && fits; d++)
            fits = search_fits(&c, search_eval_peak(&c, &cand[i], d, &ev));
        if (!fits)
            continue;
        cand_ms[kept] = ev.makespan;
        cand_name[kept] = cand_name[i];
        if (kept != i)
            search_sched_copy(&c, &cand[kept], &cand[i]);
        /* insertion by step */
        for (int j = kept; j > 0 && cand_ms[j] < cand_ms[j - 1]; j--) {
            struct search_sched t = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = t;
            double tm = cand_ms[j];
            cand_ms[j] = cand_ms[j - 1];
            cand_ms[j - 1] = tm;
            const char *tn = cand_name[j];
            cand_name[j] = cand_name[j - 1];
            cand_name[j - 1] = tn;
        }
        kept++;
    }
    struct search_score found = {INFINITY, INFINITY, INFINITY};
    struct search_score found_r = found; /* the best randomised list schedule */
    /* a sixteenth of the budget each on the four best starts (one descent's end depends on
     * where it starts; four make the result less a matter of chance), MULTI_PCT % on
     * randomised list schedules with a short descent each (a multi-start: list schedules are
     * varied, the descent repairs them locally), then the rest on the best so far (below) */
    int runs = kept < N_RUNS ? kept : N_RUNS;
    for (int i = 0; i < runs; i++) {
        search_local(&c, &cand[i], budget / 16, 0, o->seed + (unsigned)i, &ls);
        search_eval_time(&c, &cand[i], &ev);
        if (search_better(search_score_of(&ev), found)) {
            found = search_score_of(&ev);
            from = cand_name[i];
            search_sched_copy(&c, &s, &cand[i]);
        }
    }
    long short_ls = budget / 100 > 200 ? budget / 100 : 200;
    long multi_end = ls.evals + budget * MULTI_PCT / 100;
    /* a list schedule costs about as much as n_ops / 256 evaluations; when the deterministic
     * ones all failed (memory or a channel locked them), the random ones would too */
    long list_cost = 1 + c.n_ops / 256;
    int lists_ok = 0;
    for (int i = 0; i < kept; i++)
        lists_ok += strncmp(cand_name[i], "list", 4) == 0;
    long multi_start = ls.evals;
    for (unsigned k = 1; lists_ok > 0 && ls.evals < multi_end && k < 10000; k++) {
        /* a quarter through, list schedules that end well over the best (interleaved W: 5 %
         * and more) leave the rest of their share to the final phase */
        if (ls.evals - multi_start > (multi_end - multi_start) / 4 &&
            found_r.ms > found.ms * 1.05)
            break;
        ls.evals += list_cost;
        search_progress_add(&c, list_cost);
        if (search_stopped(&c))
            break;
        unsigned lflags = (k % 2 == 0 ? SEARCH_LIST_RC_FIRST : 0) |
                         (k % 3 == 0 ? SEARCH_LIST_RC_EARLY : 0);
        if (!search_list(&c, 0, lflags, o->seed * 7919 + k, &start))
            continue;
        search_local(&c, &start, short_ls, 0, o->seed + k, &ls);
        search_eval_time(&c, &start, &ev);
        if (search_better(search_score_of(&ev), found_r)) {
            found_r = search_score_of(&ev);
            search_sched_copy(&c, &s_r, &start);
        }
        if (search_better(search_score_of(&ev), found)) {
            found = search_score_of(&ev);
            from = "randomised list schedule";
            search_sched_copy(&c, &s, &start);
        }
    }
    /* the rest: the best randomised list schedule, when the best came from elsewhere, and the
     * best each get half (two schedules of different shapes, as the best of each kind may end
     * where the other could not go: GPipe 4 x 8 at 1.05 M_θ, the passes' template stops at
     * 37t, a list schedule's burst of forwards reaches 36t), each its final phase */
    bool two = from != NULL && isfinite(found_r.ms) &&
               strcmp(from, "randomised list schedule") != 0 && found_r.ms <= found.ms * 1.03;
    if (two)
        search_final(&c, &s_r, (budget - ls.evals) / 2, o->seed + 8, &ls);
    if (from != NULL && ls.evals < budget)
        search_final(&c, &s, budget - ls.evals, o->seed + 7, &ls);
    if (two) {
        struct search_score a, b2;
        search_eval_time(&c, &s, &ev);
        a = search_score_of(&ev);
        search_eval_time(&c, &s_r, &ev);
        b2 = search_score_of(&ev);
        if (search_better(b2, a)) {
            search_sched_copy(&c, &s, &s_r);
            from = "randomised list schedule";
        }
    }
    /* the periodic schedule found above, after the rest */
    if (periodic) {
        /* a short descent of its own, after the rest (ranked with the other starts, or
         * taken as the best before the final phase, it changed what they find where it does
         * not win: 8 x 16 at 2.05 M_θ 76t against 74t); its evaluations come on top of the
         * budget (a hundredth) */
        if (isfinite(pbest.ms)) {
            ls.evals += pls.evals; /* its descent ran first (above) */
            ls.improvements += pls.improvements;
            bool better = from == NULL;
            if (!better) {
                search_eval_time(&c, &s, &ev);
                better = search_better(ps, search_score_of(&ev));
            }
            if (better) {
                search_sched_copy(&c, &s, &s_p);
                from = "periodic schedule";
            }
        }
    }
searched:
    search_sched_fini(&s_p);
    search_sched_fini(&s_r);
    for (int i = 0; i < N_STARTS; i++)
        search_sched_fini(&cand[i]);
    st->evals = ls.evals;
    st->improvements = ls.improvements;
    st->stopped = prog.stop;
    if (o->progress != NULL && !prog.stop)
        o->progress(o->progress_ctx, budget, budget); /* done (what it says is not asked) */
    c.prog = NULL; /* the checks below are not the search's */
    st->seed_step = best >= 0 ? best_step : 0;
    /* what the simulator says about the search's best */
    if (from != NULL) {
        struct plan *p = search_sched_plan(&c, &s);
        struct sim_result r;
        struct mt_err why = {0};
        if (validate_plan_sim(p, &r, &why) == MT_OK && search_sim_fits(&r, o->cap) &&
            (best < 0 || r.step_time < best_step * (1 - 1e-12))) {
            *out = p;
            snprintf(st->seed_name, sizeof st->seed_name, "%s", from);
            st->fits = st->improved = true;
            if (out_sim)
                *out_sim = r;
            else
                sim_result_fini(&r);
            goto done;
        }
        sim_result_fini(&r);
        plan_free(p);
    }
    /* nothing better: the best start, or the one of lowest peak */
    int pick = best >= 0 ? best : lowest;
    *out = plan_clone(seeds[pick]);
    snprintf(st->seed_name, sizeof st->seed_name, "%s",
             names && names[pick] ? names[pick] : "start");
    st->fits = best >= 0;
    if (out_sim) {
        if (best >= 0) {
            *out_sim = best_sim;
            best_sim = (struct sim_result){0};
        } else {
            rc = sim_run(*out, out_sim, e);
        }
    }
done:
    sim_result_fini(&best_sim);
    search_sched_fini(&s);
    search_sched_fini(&start);
    search_eval_fini(&ev);
    search_ctx_fini(&c);
    if (rc != MT_OK) {
        plan_free(*out);
        *out = NULL;
    }
    return rc;
}
