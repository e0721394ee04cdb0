/* tests/unit/test_offload_search.c: the search that chooses offload (issue 29 item 2): its
 * evaluator bit for bit with sim_run on plans with OF/RL, the issue's own check worked by
 * hand, and its budget, progress and stop. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/bound.h"
#include "sim/core/simulate.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/search/search_internal.h"
#include "sim/search/search_offload.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static int find(const struct search_ctx *c, const struct search_sched *s, int d, int op)
{
    for (int i = 0; i < s->len[d]; i++)
        if (s->ord[(size_t)d * c->stride + i] == op)
            return i;
    return -1;
}

/* Offloads forwards of s at random: a checkpointed one's RC slot becomes its RL, a kept one
 * gets its RL right before its backward; each RL then moved up to three places earlier while
 * it may cross what it passes (never before its forward). */
static void offload_at_random(const struct search_ctx *c, struct search_sched *s, uint64_t *rng)
{
    for (int key = 0; key < c->keys; key++) {
        if (rng_next(rng) % 2)
            continue;
        int d = c->op[SEARCH_OP(key, SK_F)].dev, *a = s->ord + (size_t)d * c->stride;
        if (s->ck[key] == SEARCH_CK_KEEP) {
            int b = find(c, s, d, SEARCH_OP(key, SK_B));
            memmove(a + b + 1, a + b, (size_t)(s->len[d] - b) * sizeof(int));
            a[b] = SEARCH_OP(key, SK_RC);
            s->len[d]++;
        }
        s->ck[key] = SEARCH_CK_OFFLOAD;
        int i = find(c, s, d, SEARCH_OP(key, SK_RC));
        for (int back = (int)(rng_next(rng) % 4); back > 0 && i > 0; back--, i--) {
            if (!search_may_swap(c, a[i - 1], a[i]))
                break;
            int t = a[i - 1];
            a[i - 1] = a[i];
            a[i] = t;
        }
    }
}

/* The offload evaluator held bit for bit to sim_run, as test_search's test_eval_bit_for_bit
 * holds the one without: every synchronous scheme whose channels carry one lane's messages
 * (the offload search's domain), unit costs with O = 0.25, 0.5, 1 and 4 and the analytic
 * costs (p2p latencies, message buffers, the A100's PCIe link), dp 1 and 2; Mario's steps
 * and list schedules read as schedules, forwards offloaded at random; the step, every device's
 * peak (walked at the copies' times) and the sum of finishes equal sim_run's of the plan. */
static void test_eval_bit_for_bit(void)
{
    struct mt_err e = {0};
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false), checked = 0, bad = 0, copies = 0;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    static const double os[] = {0.25, 0.5, 1, 4, 0};
    for (int k = 0; k < n_schemes; k++)
        for (int v = 0; v < 10; v++) {
            int D = 4, N = 8;
            struct config c = test_unit_config(schemes[k], D, N, 1, 2, 1);
            c.chunks = 2;
            c.unit.enabled = os[v % 5] > 0;
            c.unit.o = os[v % 5];
            c.cluster.dp = 1 + v / 5;
            test_fit_scheme(&c, &D, &N, 2);
            c.num_device = D * c.cluster.dp;
            c.num_microbatches = N;
            struct plan *p = NULL;
            struct pass_pipeline pl;
            if (scheme_build(&c, &p, &e) != MT_OK || pass_pipeline_run(p, &pl, &e) != MT_OK) {
                plan_free(p);
                continue; /* a shape the scheme does not take: test_search covers them */
            }
            struct search_ctx x;
            CHECK_EQ_INT(search_ctx_init(&x, p, 0, &e), MT_OK);
            if (x.mixed_channels) {
                search_ctx_fini(&x);
                pass_pipeline_fini(&pl);
                plan_free(p);
                continue;
            }
            x.offload = true;
            struct search_sched s;
            struct search_eval ev;
            search_sched_init(&x, &s);
            search_eval_init(&x, &ev);
            for (int i = 0; i < pl.n + 3; i++) {
                if (i < pl.n ? search_sched_from_plan(&x, pl.step[i].plan, &s, NULL) != MT_OK
                             : !search_list(&x, i - pl.n, 0, (unsigned)i, &s))
                    continue;
                offload_at_random(&x, &s, &rng);
                struct plan *q = search_sched_plan(&x, &s);
                struct sim_result r;
                bool ran = search_eval_time(&x, &s, &ev);
                if (validate_plan_sim(q, &r, &e) != MT_OK) {
                    CHECK(!ran);
                    plan_free(q);
                    continue;
                }
                copies += bound_plan_offloads(q);
                int f = !ran || ev.makespan != r.step_time;
                double sf = 0;
                for (int d = 0; d < x.D; d++) {
                    f += search_eval_peak(&x, &s, d, &ev) != r.dev[d].peak_mem;
                    sf += r.dev[d].finish;
                }
                f += ev.sum_finish != sf && fabs(ev.sum_finish - sf) > 1e-12 * sf;
                if (f) {
                    bad++;
                    fprintf(stderr, "  %s dp %d O %g plan %d: step %.17g against %.17g\n",
                            config_scheme_name(schemes[k]), c.cluster.dp, c.unit.o, i,
                            ev.makespan, r.step_time);
                    for (int d = 0; d < x.D; d++)
                        fprintf(stderr, "    device %d peak %.17g against %.17g\n", d,
                                search_eval_peak(&x, &s, d, &ev), r.dev[d].peak_mem);
                }
                checked++;
                sim_result_fini(&r);
                plan_free(q);
            }
            search_eval_fini(&ev);
            search_sched_fini(&s);
            search_ctx_fini(&x);
            pass_pipeline_fini(&pl);
            plan_free(p);
        }
    printf("offload evaluation: %d schedules (%d with copies) bit for bit with sim_run\n",
           checked, copies);
    CHECK(checked >= 100);
    CHECK(copies >= checked * 9 / 10);
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_eval_bit_for_bit();
    return check_report("test_offload_search");
}
