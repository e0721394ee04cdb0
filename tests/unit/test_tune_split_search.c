/* tests/unit/test_tune_split_search.c: the tuner's split search (tune --search-split, issue 39
 * item 2) on a case where an uneven split is known to win, worked by hand.
 *
 * The paper's GPT3-1.6B block (h 1024, s 1024, f 4h, 16 heads, eager, b = 1) on A100-40G, the
 * 2021 estimate: a block's forward is 8bsh^2 + 4bs^2h + 4bshf = 28 x 2^30 FLOPs at 312e12 x
 * 0.551 x 1024 / (1024 + 512) FLOP/s (the fitted efficiency, half-saturated at 512 tokens),
 * 262.3 us, + 546 us of launches a pass (the fitted layer overhead); forward + backward 3x:
 * 2,425.0 us a block. The LM head, 2bshV FLOPs a forward, 3x with its backward: with V = 65,536
 * 3,597.6 us = 1.48 blocks (its launches are in the blocks' figure; the embedding has no FLOPs).
 * 8 blocks on 4 stages of 1F1B: today's even split [2,2,2,2] makes the last stage 2 + 1.48 =
 * 3.48 blocks long. The least slowest stage with every stage holding a block: the last holds
 * one (1 + 1.48 = 2.48), the other 7 blocks over 3 stages (3 at most), so the slowest is 3
 * blocks; of the splits that reach it, [3,2,2,1], [2,3,2,1] and [2,2,3,1] are the most even
 * (squares 9 + 4 + 4), and the tie goes to layers on earlier stages: [3,2,2,1], Megatron's
 * "Et*3|t*2|t*2|tL". Simulated, it must beat the even split. */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/launch.h"
#include "model/presets.h"
#include "sim/tune/tune.h"
#include "sim/tune/tune_split.h"
#include "tests/check.h"
#include "util/err.h"

static void make(struct config *c)
{
    config_default(c); /* GPT3-1.6B on A100-40G, the paper's stack */
    c->model.num_layers = 8;
    c->model.vocab_size = 65536;
    c->num_device = 4;
    c->cluster.dp = 1;
    c->cluster.tp = 1;
    c->global_batch_size = 16;
    c->micro_batch_size = 1;
}

/* The figures by hand (header) against the cost model's stages. */
static void test_hand_figures(void)
{
    struct config c;
    make(&c);
    double rate = 312e12 * 0.551 * 1024.0 / (1024 + 512) * 1e-6; /* FLOP/us */
    double layer_fw = 28.0 * 1073741824.0 / rate;
    double block = 3 * layer_fw + 3 * 546, head = 3 * 2.0 * 1024 * 1024 * 65536 / rate;
    CHECK_NEAR(block, 2425.0, 0.1);
    CHECK_NEAR(head, 3597.6, 0.1);
    struct cost_model cm;
    struct mt_err e = {0};
    CHECK(config_validate(&c, &e) == MT_OK);
    CHECK(cost_model_build(&c, 4, 1, 1, &cm, &e) == MT_OK);
    /* even split: the last stage is one head longer than the others */
    double t1 = cm.stage[1].fw + cm.stage[1].bw, t3 = cm.stage[3].fw + cm.stage[3].bw;
    CHECK_EQ_INT(cm.stage[1].num_layers, 2);
    CHECK_NEAR(t3 - t1, head, 1e-6 * head);
    cost_model_fini(&cm);
    /* the split proposed */
    char layout[CONFIG_LAYOUT_MAX];
    bool changed = false;
    CHECK(tune_split_propose(&c, 4, true, layout, sizeof layout, &changed, &e) == MT_OK);
    CHECK(changed);
    CHECK(strcmp(layout, "Et*3|t*2|t*2|tL") == 0);
    if (strcmp(layout, "Et*3|t*2|t*2|tL") != 0)
        fprintf(stderr, "proposed %s\n", layout);
    /* the model's own vocabulary: the head is 1.14 blocks, the same split (any head between 1
     * and 2 blocks) */
    c.model.vocab_size = 50257;
    CHECK(tune_split_propose(&c, 4, true, layout, sizeof layout, &changed, &e) == MT_OK);
    CHECK(strcmp(layout, "Et*3|t*2|t*2|tL") == 0);
    /* a head under 0.5 blocks (V = 8,192: 0.19): the even split is already the best */
    c.model.vocab_size = 8192;
    CHECK(tune_split_propose(&c, 4, true, layout, sizeof layout, &changed, &e) == MT_OK);
    CHECK(!changed);
    CHECK(strcmp(layout, "Et*2|t*2|t*2|t*2L") == 0);
    /* refused by name: a split already given, unit costs */
    make(&c);
    snprintf(c.pipeline_layout, sizeof c.pipeline_layout, "Et*2|t*2|t*2|t*2L");
    CHECK(tune_split_propose(&c, 4, true, layout, sizeof layout, &changed, &e) ==
          MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "already names its split");
}

/* Through the tuner: V at pp 4, the split candidate added, simulated, best; its config carries
 * the layout, and Megatron's launch names it. */
static void test_tuner(void)
{
    struct config c;
    make(&c);
    struct tune_opts o;
    tune_opts_default(&o);
    o.threads = 1;
    o.pp = 4;
    o.tp = 1;
    o.mbs = 1;
    o.schemes = 1u << SCHEME_V;
    o.optimize = NULL;
    o.search_split = true;
    struct tune_result r;
    struct mt_err e = {0};
    CHECK(tune_grid_search(&c, &o, &r, &e) == MT_OK);
    CHECK_EQ_INT(r.n, 2); /* V-4-1 and V-4-1-split */
    int even = -1, split = -1;
    for (int i = 0; i < r.n; i++)
        if (r.cand[i].layout)
            split = i;
        else
            even = i;
    CHECK(even >= 0 && split >= 0);
    if (even < 0 || split < 0) {
        tune_result_fini(&r);
        return;
    }
    CHECK(r.cand[split].status == TUNE_OK);
    CHECK(strcmp(r.cand[split].layout, "Et*3|t*2|t*2|tL") == 0);
    CHECK_EQ_INT(r.best, split);
    /* each step is at least 16 micro-batches of its slowest stage (forward + backward, each
     * instruction with the fitted 3,360 us of the framework): even, the last stage's 2 blocks +
     * the head; split, the first stage's 3 blocks */
    double rate = 312e12 * 0.551 * 1024.0 / (1024 + 512) * 1e-6;
    double block = 3 * (28.0 * 1073741824.0 / rate) + 3 * 546, op = 3360;
    double head = 3 * 2.0 * 1024 * 1024 * 65536 / rate;
    CHECK(r.cand[even].step_time * 1e6 >= 16 * (2 * block + head + 2 * op));
    CHECK(r.cand[split].step_time * 1e6 >= 16 * (3 * block + 2 * op));
    CHECK(r.cand[split].step_time < r.cand[even].step_time);
    CHECK(r.cand[split].throughput > r.cand[even].throughput);
    char label[48];
    tune_label(&r.cand[split], label, sizeof label);
    CHECK(strcmp(label, "V-4-1-split") == 0);
    struct config best;
    tune_candidate_config(&c, &r.cand[r.best], &best);
    CHECK(strcmp(best.pipeline_layout, "Et*3|t*2|t*2|tL") == 0);
    CHECK(config_validate(&best, &e) == MT_OK);
    char *text = NULL;
    CHECK(launch_write(LAUNCH_MEGATRON, &best, NULL, &text, &e) == MT_OK);
    CHECK_STR_CONTAINS(text, "--pipeline-model-parallel-layout \"Et*3|t*2|t*2|tL\"");
    free(text);
    CHECK(launch_write(LAUNCH_TORCHTITAN, &best, NULL, &text, &e) == MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "layout string");
    char *json = tune_report_json(&r);
    CHECK_STR_CONTAINS(json, "\"pipeline_layout\":\t\"Et*3|t*2|t*2|tL\"");
    free(json);
    tune_result_fini(&r);
    /* without the flag: the grid as before, one candidate */
    o.search_split = false;
    CHECK(tune_grid_search(&c, &o, &r, &e) == MT_OK);
    CHECK_EQ_INT(r.n, 1);
    CHECK(r.cand[0].layout == NULL);
    tune_result_fini(&r);
}

int main(void)
{
    test_hand_figures();
    test_tuner();
    return check_report("test_tune_split_search");
}
