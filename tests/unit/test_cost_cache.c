/* tests/unit/test_cost_cache.c: the memo of cost_model_build (model/cost_cache.h) is invisible.
 * Over a grid of configs (the paper's presets on the 2021 estimate, dense and MoE models on the
 * device model; tp, sp, cp, micro-batch size, dp and the distributed optimizer, chunked and
 * replicated pipelines, an uneven layout string) a build with a cache open, missed and then hit,
 * gives the same bytes as a build without one; configs one field apart do not share an entry;
 * more configs than entries evict and build again, still the same. And each stage's parameter
 * count, now summed from the parts built once per build, equals cost_stage_params_at's (which
 * builds the stage's lists itself), bit for bit. */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/cost_cache.h"
#include "model/presets.h"
#include "tests/check.h"
#include "util/err.h"

struct build {
    int stages, parts, group;
};

static bool same_model(const struct cost_model *a, const struct cost_model *b)
{
    return a->unit == b->unit && a->num_stages == b->num_stages &&
           a->parts_per_device == b->parts_per_device &&
           memcmp(a->stage, b->stage, (size_t)a->num_stages * sizeof *a->stage) == 0;
}

/* The config of model `name` at the degrees given; false when it does not validate (a
 * combination the model refuses, e.g. cp not dividing its heads). */
static bool make(struct config *c, const char *name, int tp, bool sp, int cp, int mbs, int dp,
                 bool distopt, int pp)
{
    struct mt_err e = {0};
    config_default(c);
    if (presets_model(name, &c->model, &e) != MT_OK) {
        fprintf(stderr, "preset %s: %s\n", name, e.msg);
        CHECK(false);
        return false;
    }
    c->cluster.tp = tp;
    c->cluster.cp = cp;
    c->cluster.dp = dp;
    c->sequence_parallel = sp;
    c->distributed_optimizer = distopt;
    c->micro_batch_size = mbs;
    c->global_batch_size = 64 * mbs * dp;
    c->memory_per_device = 0;
    config_set_pp(c, pp);
    return config_validate(c, &e) == MT_OK;
}

static int n_checked;

/* Uncached, then cached twice (a miss, then a hit): the same bytes each time. */
static void check_one(const struct config *c, struct build b)
{
    struct mt_err e = {0};
    struct cost_model plain, miss, hit;
    CHECK(!cost_cache_is_open());
    if (cost_model_build(c, b.stages, b.parts, b.group, &plain, &e) != MT_OK)
        return; /* refused alike with or without the cache (checked below) */
    cost_cache_open();
    long h0 = cost_cache_hits(), m0 = cost_cache_misses();
    CHECK(cost_model_build(c, b.stages, b.parts, b.group, &miss, &e) == MT_OK);
    CHECK_EQ_INT(cost_cache_misses(), m0 + 1);
    CHECK(cost_model_build(c, b.stages, b.parts, b.group, &hit, &e) == MT_OK);
    CHECK_EQ_INT(cost_cache_hits(), h0 + 1);
    CHECK(same_model(&plain, &miss));
    CHECK(same_model(&plain, &hit));
    CHECK(hit.stage != miss.stage); /* a copy each: each caller frees its own */
    cost_model_fini(&miss);
    cost_model_fini(&hit);
    cost_cache_close();
    /* each stage's parameters as the per-stage rule counts them */
    for (int i = 0; i < plain.num_stages; i++) {
        const struct stage_cost *st = &plain.stage[i];
        double want = cost_stage_params_at(c, st->first_layer, st->num_layers, st->has_embed,
                                           st->has_head);
        CHECK(memcmp(&st->params, &want, sizeof want) == 0);
    }
    cost_model_fini(&plain);
    n_checked++;
}

static void test_grid(void)
{
    static const char *const models[] = {"GPT3-1.6B", "GPT3-13B",    "LLaMA2-13B",
                                         "GPT-3-13B", "Llama-3.1-8B", "Llama-3.1-70B",
                                         "DeepSeek-V2-Lite", "Mixtral-8x7B"};
    static const int tps[] = {1, 2, 8};
    for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++)
        for (size_t ti = 0; ti < sizeof tps / sizeof *tps; ti++)
            for (int sp = 0; sp <= (tps[ti] > 1); sp++)
                for (int cp = 1; cp <= 2; cp++)
                    for (int mbs = 1; mbs <= 2; mbs++)
                        for (int dp = 1; dp <= 4; dp *= 4)
                            for (int d = 0; d <= (dp > 1); d++) {
                                struct config c;
                                if (!make(&c, models[mi], tps[ti], sp, cp, mbs, dp, d, 4))
                                    continue;
                                check_one(&c, (struct build){4, 1, dp});         /* V */
                                check_one(&c, (struct build){8, 2, dp});         /* W x2 */
                                check_one(&c, (struct build){4, 2, 2 * dp});     /* X */
                            }
    CHECK(n_checked > 300);
}

/* An uneven split (Megatron's layout string) and a calibration-free 405B at depth 16 */
static void test_layout(void)
{
    struct config c;
    if (make(&c, "Llama-3.1-8B", 2, true, 1, 1, 2, true, 4)) {
        snprintf(c.pipeline_layout, sizeof c.pipeline_layout, "Et*7|t*9|t*9|t*7L");
        check_one(&c, (struct build){4, 1, 2});
    } else {
        CHECK(false);
    }
    CHECK(make(&c, "Llama-3.1-405B", 8, true, 1, 1, 8, true, 16));
    check_one(&c, (struct build){16, 1, 8});
}

/* One field apart: a different entry (the key is the whole config); more configs than entries:
 * the first is evicted and built again, the same. */
static void test_keys(void)
{
    struct config a, b;
    struct mt_err e = {0};
    CHECK(make(&a, "Llama-3.1-8B", 2, false, 1, 1, 4, false, 4));
    b = a;
    b.distributed_optimizer = true;
    struct cost_model ma, mb, plain_b;
    CHECK(cost_model_build(&b, 4, 1, 4, &plain_b, &e) == MT_OK);
    cost_cache_open();
    CHECK(cost_model_build(&a, 4, 1, 4, &ma, &e) == MT_OK);
    CHECK(cost_model_build(&b, 4, 1, 4, &mb, &e) == MT_OK);
    CHECK_EQ_INT(cost_cache_hits(), 0);
    CHECK(same_model(&mb, &plain_b));
    CHECK(ma.stage[0].static_bytes != mb.stage[0].static_bytes);
    cost_model_fini(&ma);
    cost_model_fini(&mb);
    /* the same config with another group (dp's reduction): a miss */
    CHECK(cost_model_build(&a, 4, 1, 8, &ma, &e) == MT_OK);
    CHECK_EQ_INT(cost_cache_hits(), 0);
    cost_model_fini(&ma);
    /* twenty micro-batch sizes: past the entries, then the first again */
    struct cost_model first;
    for (int mbs = 1; mbs <= 20; mbs++) {
        struct config c = a;
        c.micro_batch_size = mbs;
        struct cost_model m;
        CHECK(cost_model_build(&c, 4, 1, 4, &m, &e) == MT_OK);
        if (mbs == 1)
            first = m;
        else
            cost_model_fini(&m);
    }
    long hits = cost_cache_hits();
    struct cost_model again;
    CHECK(cost_model_build(&a, 4, 1, 4, &again, &e) == MT_OK); /* mbs 1: evicted by now */
    CHECK_EQ_INT(cost_cache_hits(), hits);
    CHECK(same_model(&first, &again));
    cost_model_fini(&first);
    cost_model_fini(&again);
    /* nested opens share one cache until the outer close */
    cost_cache_open();
    cost_cache_close();
    CHECK(cost_cache_is_open());
    cost_cache_close();
    CHECK(!cost_cache_is_open());
    cost_model_fini(&plain_b);
}

/* A refused build is refused alike: more stages than the layout names */
static void test_refused(void)
{
    struct config c;
    struct mt_err e1 = {0}, e2 = {0};
    CHECK(make(&c, "Llama-3.1-8B", 1, false, 1, 1, 1, false, 4));
    snprintf(c.pipeline_layout, sizeof c.pipeline_layout, "Et*15|t*17L");
    struct cost_model m;
    int rc1 = cost_model_build(&c, 4, 1, 1, &m, &e1);
    cost_cache_open();
    int rc2 = cost_model_build(&c, 4, 1, 1, &m, &e2);
    int rc3 = cost_model_build(&c, 4, 1, 1, &m, &e2);
    cost_cache_close();
    CHECK(rc1 != MT_OK);
    CHECK_EQ_INT(rc2, rc1);
    CHECK_EQ_INT(rc3, rc1);
    CHECK(strcmp(e1.msg, e2.msg) == 0);
}

int main(void)
{
    test_grid();
    test_layout();
    test_keys();
    test_refused();
    return check_report("test_cost_cache");
}
