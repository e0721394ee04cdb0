/* tests/unit/test_jackson.c: Jackson's preemptive schedule (sim/core/jackson.h), the lower bound's
 * device term: hand-worked cases, then random integer instances against a slot-by-slot
 * simulation of the same rule (with integer r and p every event falls on an integer time, so
 * running the released job of largest tail one unit at a time is the preemptive schedule), and
 * the sort it leaves behind: by r, equal r in their first order. */
#include <config.h>

#include <stdlib.h>

#include "sim/core/jackson.h"
#include "tests/check.h"

static double run(struct jackson_job *jobs, int n)
{
    int *heap = malloc(sizeof(int) * (size_t)(n + 1));
    struct jackson_job *tmp = malloc(sizeof *tmp * (size_t)(n + 1));
    double v = jackson_preemptive(jobs, n, heap, tmp);
    free(heap);
    free(tmp);
    return v;
}

static void test_hand_worked(void)
{
    CHECK_NEAR(run(NULL, 0), 0, 0);
    struct jackson_job one[] = {{0, 2, 3}};
    CHECK_NEAR(run(one, 1), 5, 0); /* 0..2, then its tail */
    struct jackson_job late[] = {{5, 1, 0}};
    CHECK_NEAR(run(late, 1), 6, 0); /* idle until its release */
    /* A (r 0, p 4, q 1) runs; B (r 1, p 1, q 10) preempts it at 1: B ends at 2 (12), A at 5 (6) */
    struct jackson_job pre[] = {{1, 1, 10}, {0, 4, 1}};
    CHECK_NEAR(run(pre, 2), 12, 0);
    /* the same without preemption's gain: B's tail small, A first to 4, B 4..5: max(5, 5 + 0) */
    struct jackson_job nopre[] = {{0, 4, 1}, {1, 1, 0}};
    CHECK_NEAR(run(nopre, 2), 5, 0);
    /* three at once, largest tail first: C (q 5) 0..1 -> 6, B (q 3) 1..3 -> 6, A (q 0) 3..6 */
    struct jackson_job three[] = {{0, 3, 0}, {0, 2, 3}, {0, 1, 5}};
    CHECK_NEAR(run(three, 3), 6, 0);
}

/* The same rule one unit of time at a time (integer r, p, q): O(T n). */
static double slotwise(const struct jackson_job *in, int n)
{
    int *left = malloc(sizeof(int) * (size_t)(n + 1));
    int todo = 0;
    for (int i = 0; i < n; i++)
        todo += left[i] = (int)in[i].p;
    double best = 0;
    for (int t = 0; todo > 0; t++) {
        int pick = -1;
        for (int i = 0; i < n; i++)
            if (left[i] > 0 && in[i].r <= t && (pick < 0 || in[i].q > in[pick].q))
                pick = i;
        if (pick < 0)
            continue;
        todo--;
        if (--left[pick] == 0 && t + 1 + in[pick].q > best)
            best = t + 1 + in[pick].q;
    }
    free(left);
    return best;
}

static void test_random(void)
{
    srand(27);
    int sorted_ok = 1, stable_ok = 1;
    for (int round = 0; round < 600; round++) {
        int n = 1 + rand() % (round < 300 ? 12 : 200);
        struct jackson_job *jobs = malloc(sizeof *jobs * (size_t)n);
        struct jackson_job *ref = malloc(sizeof *ref * (size_t)n);
        int span = 1 + rand() % 40;
        for (int i = 0; i < n; i++) {
            /* runs of increasing r broken at random, as a device's list is */
            double r = rand() % 3 == 0 || i == 0 ? rand() % span : jobs[i - 1].r + rand() % 3;
            jobs[i] = ref[i] = (struct jackson_job){r, 1 + rand() % 5, rand() % 20};
        }
        CHECK_NEAR(run(jobs, n), slotwise(ref, n), 0);
        free(ref);
        /* the order left behind: by r, ties in their first order (tags in q, p spent) */
        for (int i = 0; i < n; i++)
            jobs[i] = (struct jackson_job){rand() % 7, 0, i};
        struct jackson_job *tagged = malloc(sizeof *tagged * (size_t)n);
        for (int i = 0; i < n; i++)
            tagged[i] = jobs[i];
        run(jobs, n);
        for (int i = 1; i < n; i++) {
            sorted_ok &= jobs[i - 1].r <= jobs[i].r;
            stable_ok &= jobs[i - 1].r < jobs[i].r || jobs[i - 1].q < jobs[i].q;
        }
        int seen = 0; /* a permutation: every tag once */
        for (int i = 0; i < n; i++)
            seen += tagged[(int)jobs[i].q].r == jobs[i].r;
        CHECK_EQ_INT(seen, n);
        free(tagged);
        free(jobs);
    }
    CHECK(sorted_ok);
    CHECK(stable_ok);
}

int main(void)
{
    test_hand_worked();
    test_random();
    return check_report("test_jackson");
}
