/* tests/unit/test_plan_json.c: plan files round-trip (same lists, same config, same
 * simulated step time), bad plan files are refused with the file and the field named, and
 * the Chrome trace of a simulated plan has one "X" event per instruction keyed like it. */
#include <config.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "traces/chrome.h"
#include "util/err.h"

static struct plan *build(enum scheme_id s, int D, int N)
{
    struct config c;
    config_default(&c);
    c.scheme = s;
    c.num_device = D;
    c.num_microbatches = N;
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (scheme_build(&c, &p, &e) != MT_OK)
        fprintf(stderr, "build: %s\n", e.msg);
    return p;
}

static void test_round_trip(void)
{
    enum scheme_id schemes[] = {SCHEME_V, SCHEME_X, SCHEME_W, SCHEME_GPIPE};
    for (int k = 0; k < 4; k++) {
        struct plan *p = build(schemes[k], 4, 8);
        CHECK(p != NULL);
        if (p == NULL)
            continue;
        char *text = plan_to_json(p);
        struct plan *q = NULL;
        struct mt_err e = {0};
        CHECK_EQ_INT(plan_load_string(text, strlen(text), "rt.json", &q, &e), MT_OK);
        if (q == NULL) {
            fprintf(stderr, "%s\n", e.msg);
            free(text);
            plan_free(p);
            continue;
        }
        CHECK_EQ_INT(plan_total(q), plan_total(p));
        int diff = 0;
        for (int d = 0; d < plan_devices(p); d++) {
            diff += plan_len(p, d) != plan_len(q, d);
            for (int i = 0; i < plan_len(p, d) && i < plan_len(q, d); i++)
                diff += memcmp(plan_at(p, d, i), plan_at(q, d, i), sizeof(struct instr)) != 0;
        }
        CHECK_EQ_INT(diff, 0);
        CHECK_EQ_INT(plan_config(q)->scheme, schemes[k]);
        struct sim_result a, b;
        CHECK(sim_run(p, &a, &e) == MT_OK);
        CHECK(sim_run(q, &b, &e) == MT_OK);
        CHECK_NEAR(a.step_time, b.step_time, 1e-9 * a.step_time);

        /* The trace: one X event per instruction, pid = device, args keyed like the plan. */
        char *trace = chrome_from_sim(p, &a);
        cJSON *root = cJSON_Parse(trace);
        CHECK(root != NULL);
        int xs = 0, bad = 0, counters = 0;
        const cJSON *ev;
        cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents")) {
            const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ph"));
            if (ph && strcmp(ph, "C") == 0)
                counters++;
            if (!ph || strcmp(ph, "X") != 0)
                continue;
            int dev = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(ev, "pid"));
            const cJSON *args = cJSON_GetObjectItem(ev, "args");
            const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(args, "op"));
            int mb = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(args, "mb"));
            int stage = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(args, "stage"));
            bad += dev < 0 || dev >= plan_devices(p) || op == NULL ||
                   plan_find(p, dev, (enum op)plan_op_parse(op), mb, stage) < 0;
            xs++;
        }
        CHECK_EQ_INT(xs, plan_total(p));
        CHECK_EQ_INT(bad, 0);
        CHECK(counters > plan_devices(p));
        cJSON_Delete(root);
        free(trace);
        sim_result_fini(&a);
        sim_result_fini(&b);
        free(text);
        plan_free(p);
        plan_free(q);
    }
}

static void expect_bad(const char *text, int code, const char *needle)
{
    struct plan *q = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(plan_load_string(text, strlen(text), "bad.json", &q, &e), code);
    CHECK(q == NULL);
    CHECK_STR_CONTAINS(e.msg, "bad.json");
    CHECK_STR_CONTAINS(e.msg, needle);
    plan_free(q);
}

static void test_bad_files(void)
{
    /* cJSON stops just after the second comma (column 16): the report points there, 2:17. */
    expect_bad("{\"format\": \"mario-plan\",\n  \"version\": 1,, }", MT_EPARSE, "bad.json:2:17");
    expect_bad("[1, 2]", MT_EPARSE, "expected an object");
    expect_bad("{\"format\": \"something\"}", MT_EPARSE, "format");
    expect_bad("{\"format\": \"mario-plan\", \"version\": 9}", MT_EPARSE, "version: 9");

    /* A real plan with one field broken at a time. */
    struct plan *p = build(SCHEME_V, 2, 2);
    char *text = plan_to_json(p);
    struct {
        const char *from, *to, *needle;
    } edits[] = {
        {"\"op\":\"FW\"", "\"op\":\"XX\"", "devices[0][0].op"},
        {"\"mb\":0", "\"mb\":99", "devices[0][0].mb: must be in [-1, 1] (got 99)"},
        {"\"mb\":0", "\"mb\":0.5", "expected an integer"},
        {"\"stages\":2", "\"stages\":3", "disagree with its config"},
        {"\"peer\":1", "\"peer\":-1", "without a peer"},
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        char *s = strstr(text, edits[k].from);
        CHECK(s != NULL);
        if (s == NULL)
            continue;
        size_t n = strlen(text) + 32;
        char *copy = malloc(n);
        snprintf(copy, n, "%.*s%s%s", (int)(s - text), text, edits[k].to,
                 s + strlen(edits[k].from));
        expect_bad(copy, MT_EPARSE, edits[k].needle);
        free(copy);
    }
    /* Truncated at every 97th byte: always an error, never a crash. */
    size_t len = strlen(text);
    for (size_t cut = 0; cut < len; cut += 97) {
        struct plan *q = NULL;
        struct mt_err e = {0};
        CHECK(plan_load_string(text, cut, "cut.json", &q, &e) != MT_OK);
        plan_free(q);
    }
    free(text);
    plan_free(p);
}

/* plan_with_config: the same lists and origin under the new config; the source untouched;
 * a cap does not move times, a micro-batch twice as large does. */
static void test_with_config(void)
{
    struct plan *p = build(SCHEME_X, 4, 8);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    plan_set_origin(p, "imported from t.json, step 1");
    struct config c = *plan_config(p);
    c.memory_per_device = 2 * plan_config(p)->memory_per_device;
    struct plan *q = plan_with_config(p, &c);
    CHECK(plan_config(q)->memory_per_device == c.memory_per_device);
    CHECK(plan_config(p)->memory_per_device == c.memory_per_device / 2);
    CHECK(strcmp(plan_origin(q), "imported from t.json, step 1") == 0);
    CHECK(memcmp(plan_geom(q), plan_geom(p), sizeof *plan_geom(p)) == 0);
    for (int d = 0; d < plan_devices(p); d++) {
        CHECK_EQ_INT(plan_len(q, d), plan_len(p, d));
        for (int i = 0; i < plan_len(p, d) && i < plan_len(q, d); i++)
            CHECK(memcmp(plan_at(q, d, i), plan_at(p, d, i), sizeof(struct instr)) == 0);
    }
    struct sim_result a, b, w;
    struct mt_err e = {0};
    CHECK(sim_run(p, &a, &e) == MT_OK);
    CHECK(sim_run(q, &b, &e) == MT_OK);
    CHECK(a.step_time == b.step_time);
    c.micro_batch_size = 2 * plan_config(p)->micro_batch_size;
    struct plan *wide = plan_with_config(p, &c);
    CHECK(sim_run(wide, &w, &e) == MT_OK);
    CHECK(w.step_time > a.step_time);
    sim_result_fini(&a);
    sim_result_fini(&b);
    sim_result_fini(&w);
    plan_free(wide);
    plan_free(q);
    plan_free(p);
}

int main(void)
{
    test_round_trip();
    test_with_config();
    test_bad_files();
    return check_report("test_plan_json");
}
