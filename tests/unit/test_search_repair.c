/* tests/unit/test_search_repair.c: the search's repair (sim/search/search_repair.c, issue 27:
 * O((n + checkpoints) log n) a device) against the repair it replaced, kept here as the
 * reference: on each device over the cap every W moved next to its B, then, until a walk of
 * the device's whole list says it fits, the forward kept longest (places between it and its
 * backward, the first of equals) checkpointed, its RC right before its B.
 *
 * On random plans of every synchronous scheme (unit costs and bytes, dp 1 and 2), their orders
 * shuffled by legal swaps (Ws away from their Bs, forwards of several stages interleaved), some
 * forwards checkpointed already, at caps drawn between the all-checkpointed peak and the plan's
 * own, and at caps equal to a peak the reference met on its way (the walk's own sums then
 * decide): the same answer, the same order on every device and the same checkpoints. And
 * search_strip_checkpoints (one pass a device) against dropping each checkpoint in turn. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/search/search_internal.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static int *ref_ord(const struct search_ctx *c, struct search_sched *s, int d)
{
    return s->ord + (size_t)d * c->stride;
}

static int ref_find(const struct search_ctx *c, struct search_sched *s, int d, int op)
{
    const int *a = ref_ord(c, s, d);
    for (int i = 0; i < s->len[d]; i++)
        if (a[i] == op)
            return i;
    return -1;
}

/* key's forward checkpointed, its RC right before its B */
static void ref_ckpt(const struct search_ctx *c, struct search_sched *s, int key)
{
    int d = c->op[SEARCH_OP(key, SK_B)].dev, i = ref_find(c, s, d, SEARCH_OP(key, SK_B));
    int *a = ref_ord(c, s, d);
    memmove(a + i + 1, a + i, (size_t)(s->len[d] - i) * sizeof(int));
    a[i] = SEARCH_OP(key, SK_RC);
    s->len[d]++;
    s->ck[key] = 1;
}

static int ref_longest_kept(const struct search_ctx *c, struct search_sched *s, int d)
{
    const int *a = ref_ord(c, s, d);
    int best = -1, span = -1;
    for (int i = 0; i < s->len[d]; i++) {
        int op = a[i], key = SEARCH_KEY(op);
        if (SEARCH_KIND(op) != SK_F || s->ck[key])
            continue;
        int j = i + 1;
        while (j < s->len[d] && a[j] != SEARCH_OP(key, SK_B))
            j++;
        if (j - i > span) {
            span = j - i;
            best = key;
        }
    }
    return best;
}

static void ref_w_after_b(const struct search_ctx *c, struct search_sched *s, int d)
{
    int *a = ref_ord(c, s, d);
    for (int i = 0; i < s->len[d]; i++) {
        if (SEARCH_KIND(a[i]) != SK_W)
            continue;
        int b = ref_find(c, s, d, SEARCH_OP(SEARCH_KEY(a[i]), SK_B));
        if (b + 1 < i) {
            int w = a[i];
            memmove(a + b + 2, a + b + 1, (size_t)(i - b - 1) * sizeof(int));
            a[b + 1] = w;
        }
    }
}

/* key's checkpoint dropped, the way search_strip_checkpoints did it one key at a time */
static void ref_unckpt(const struct search_ctx *c, struct search_sched *s, int key)
{
    if (!s->ck[key])
        return;
    int d = c->op[SEARCH_OP(key, SK_RC)].dev, i = ref_find(c, s, d, SEARCH_OP(key, SK_RC));
    int *a = ref_ord(c, s, d);
    memmove(a + i, a + i + 1, (size_t)(s->len[d] - i - 1) * sizeof(int));
    s->len[d]--;
    s->ck[key] = 0;
}

/* The reference; seen (may be NULL) gets a peak it met over the cap, on the way */
static bool ref_repair(const struct search_ctx *c, struct search_sched *s, struct search_eval *ev,
                       double *seen)
{
    for (int d = 0; d < c->D; d++) {
        if (!search_fits(c, search_eval_peak(c, s, d, ev)))
            ref_w_after_b(c, s, d);
        double pk;
        while (!search_fits(c, pk = search_eval_peak(c, s, d, ev))) {
            if (seen != NULL && (*seen == 0 || rand() % 4 == 0))
                *seen = pk;
            int key = ref_longest_kept(c, s, d);
            if (key < 0)
                return false;
            ref_ckpt(c, s, key);
        }
    }
    return true;
}

/* s shuffled by legal swaps of neighbours (search_may_swap). */
static void shuffle(const struct search_ctx *c, struct search_sched *s, int swaps)
{
    for (int k = 0; k < swaps; k++) {
        int d = rand() % c->D;
        if (s->len[d] < 2)
            continue;
        int *a = ref_ord(c, s, d), i = rand() % (s->len[d] - 1);
        if (search_may_swap(c, a[i], a[i + 1])) {
            int t = a[i];
            a[i] = a[i + 1];
            a[i + 1] = t;
        }
    }
}

static double peak_max(const struct search_ctx *c, struct search_sched *s,
                       struct search_eval *ev)
{
    double m = 0;
    for (int d = 0; d < c->D; d++) {
        double p = search_eval_peak(c, s, d, ev);
        m = p > m ? p : m;
    }
    return m;
}

static bool same_sched(const struct search_ctx *c, const struct search_sched *a,
                       const struct search_sched *b)
{
    for (int d = 0; d < c->D; d++)
        if (a->len[d] != b->len[d] ||
            memcmp(a->ord + (size_t)d * c->stride, b->ord + (size_t)d * c->stride,
                   (size_t)a->len[d] * sizeof(int)) != 0)
            return false;
    return memcmp(a->ck, b->ck, (size_t)c->keys) == 0;
}

static int compared, checkpoints, at_seen;

/* Both repairs of s at cap; the same result. */
static void compare(struct search_ctx *c, const struct search_sched *s, double cap,
                    struct search_eval *ev, double *seen, const char *what)
{
    struct search_sched a, b;
    search_sched_init(c, &a);
    search_sched_init(c, &b);
    search_sched_copy(c, &a, s);
    search_sched_copy(c, &b, s);
    c->cap = cap;
    bool ok_ref = ref_repair(c, &a, ev, seen), ok = search_repair(c, &b, ev);
    CHECK(ok_ref == ok);
    bool same = same_sched(c, &a, &b);
    CHECK(same);
    if (ok_ref != ok || !same)
        fprintf(stderr, "  %s: cap %.17g: reference %d, incremental %d\n", what, cap, ok_ref,
                ok);
    compared++;
    for (int d = 0; d < c->D; d++)
        checkpoints += a.len[d] - s->len[d];
    search_sched_fini(&a);
    search_sched_fini(&b);
}

static void test_random(void)
{
    srand(27);
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false);
    for (int trial = 0; trial < 300; trial++) {
        enum scheme_id sc = schemes[rand() % n_schemes];
        int D = 2 + rand() % 7, N = 2 + rand() % 23;
        struct config cfg = test_unit_config(sc, D, N, 0.5 + rand() % 3, 1 + rand() % 3,
                                             0.5 * (rand() % 3));
        cfg.unit.enabled = rand() % 3 != 0;
        cfg.cluster.dp = 1 + (rand() % 4 == 0);
        if (scheme_registry_get(sc)->chunks == SCHEME_CHUNKS_CONFIG)
            test_fit_scheme(&cfg, &D, &N, 1 + rand() % 3);
        else
            test_fit_scheme(&cfg, &D, &N, 1);
        cfg.num_device = D * cfg.cluster.dp;
        cfg.num_microbatches = N;
        struct plan *p = NULL;
        struct mt_err e = {0};
        if (scheme_build(&cfg, &p, &e) != MT_OK) {
            plan_free(p);
            continue;
        }
        struct search_ctx c;
        if (search_ctx_init(&c, p, 0, &e) != MT_OK) {
            plan_free(p);
            continue;
        }
        struct search_eval ev;
        search_eval_init(&c, &ev);
        struct search_sched s, all;
        search_sched_init(&c, &s);
        search_sched_init(&c, &all);
        CHECK_EQ_INT(search_sched_from_plan(&c, p, &s, &e), MT_OK);
        search_strip_checkpoints(&c, &s);
        shuffle(&c, &s, rand() % 3 == 0 ? 0 : c.n_ops * (1 + rand() % 4));
        /* some forwards checkpointed already (their RC right before their B) */
        if (rand() % 3 == 0)
            for (int key = 0; key < c.keys; key++)
                if (rand() % 5 == 0)
                    ref_ckpt(&c, &s, key);
        /* the caps: between every forward checkpointed and the plan's own peak */
        search_sched_copy(&c, &all, &s);
        for (int key = 0; key < c.keys; key++)
            if (!all.ck[key])
                ref_ckpt(&c, &all, key);
        /* search_strip_checkpoints in one pass, as one key at a time */
        struct search_sched one, strip;
        search_sched_init(&c, &one);
        search_sched_init(&c, &strip);
        search_sched_copy(&c, &one, &s);
        search_sched_copy(&c, &strip, &s);
        for (int key = 0; key < c.keys; key++)
            ref_unckpt(&c, &one, key);
        search_strip_checkpoints(&c, &strip);
        CHECK(same_sched(&c, &one, &strip));
        search_sched_fini(&one);
        search_sched_fini(&strip);
        double hi = peak_max(&c, &s, &ev), lo = peak_max(&c, &all, &ev);
        char what[96];
        snprintf(what, sizeof what, "trial %d %s D=%d N=%d unit=%d", trial,
                 config_scheme_name(sc), D, N, cfg.unit.enabled);
        for (int k = 0; k < 4; k++) {
            double u = (double)rand() / RAND_MAX;
            double seen = 0;
            /* k = 3: below every forward checkpointed, where some device cannot fit */
            double cap = k == 3 ? lo * 0.97 : lo + u * (hi - lo);
            compare(&c, &s, cap, &ev, &seen, what);
            if (seen > 0) { /* a peak met on the way as the cap itself */
                compare(&c, &s, seen, &ev, NULL, what);
                at_seen++;
            }
        }
        search_sched_fini(&s);
        search_sched_fini(&all);
        search_eval_fini(&ev);
        search_ctx_fini(&c);
        plan_free(p);
    }
    printf("repair: %d comparisons (%d at a peak met on the way), %d checkpoints added\n",
           compared, at_seen, checkpoints);
    CHECK(compared > 1000);
    CHECK(at_seen > 200);
}

int main(void)
{
    test_random();
    return check_report("test_search_repair");
}
