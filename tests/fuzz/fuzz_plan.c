/* tests/fuzz/fuzz_plan.c: the plan loader (sim/plan/plan_json.c) on arbitrary bytes, then what
 * every command does with a loaded plan: validate_plan(), and for a valid plan the
 * simulator, the Chrome trace writer and Mario's passes (`mario-tui optimize PLAN`).
 * Invariants: a refusal is MT_EPARSE or MT_EINVAL, names the file and leaves *out NULL; an
 * accepted plan either validates or is refused by validate_plan() with a message (never a
 * crash); a valid plan simulates, with finite times; plan_to_json() loads back to a plan
 * that writes the same JSON; the passes refuse a plan with a message or give plans that all
 * validate (they keep every dependency).
 * Built with -DFUZZ_PARSE_ONLY it is fuzz_plan_parse: the loader's invariants and the round
 * trip, without validation, simulation and passes, at the reader's own speed. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/fuzz/fuzz.h"
#include "traces/chrome.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.plan"
/* The passes simulate each candidate: only plans up to this size go through them, to keep
 * the fuzzer fast. */
#define FUZZ_MAX_PASS_INSTRS 1024

static void fuzz_plan_round_trip(const struct plan *p)
{
    struct mt_err e;
    struct plan *q = NULL;
    err_clear(&e);
    char *json = plan_to_json(p);
    int rc = plan_load_string(json, strlen(json), "round-trip.plan", &q, &e);
    FUZZ_CHECK(rc == MT_OK, "written plan does not load back: %s", e.msg);
    char *again = plan_to_json(q);
    FUZZ_CHECK(strcmp(json, again) == 0, "round trip changed the plan");
    free(again);
    free(json);
    plan_free(q);
}

#ifndef FUZZ_PARSE_ONLY
static void fuzz_plan_simulate(const struct plan *p)
{
    struct sim_result r;
    struct mt_err e;
    err_clear(&e);
    int rc = sim_run(p, &r, &e);
    FUZZ_CHECK(rc == MT_OK, "a validated plan does not simulate: %s", e.msg);
    FUZZ_CHECK(r.total == plan_total(p), "%d results for %d instructions", r.total, plan_total(p));
    FUZZ_CHECK(isfinite(r.step_time) && r.step_time >= 0, "step time %g", r.step_time);
    for (int i = 0; i < r.total; i++)
        FUZZ_CHECK(isfinite(r.start[i]) && r.end[i] >= r.start[i], "instruction %d: %g .. %g", i,
                   r.start[i], r.end[i]);
    char *trace = chrome_from_sim(p, &r);
    FUZZ_CHECK(trace != NULL && trace[0] == '{', "no trace");
    free(trace);
    sim_result_fini(&r);
}

static void fuzz_plan_passes(const struct plan *p)
{
    struct pass_pipeline pl;
    struct mt_err e;
    err_clear(&e);
    if (plan_total(p) > FUZZ_MAX_PASS_INSTRS)
        return;
    int rc = pass_pipeline_run(p, &pl, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(e.msg[0] != '\0' && e.code == rc, "passes refused (%d) without a message", rc);
        return;
    }
    for (int i = 0; i < pl.n; i++) {
        err_clear(&e);
        FUZZ_CHECK(validate_plan(pl.step[i].plan, &e) == MT_OK,
                   "step %d (%s) does not validate: %s", i, pl.step[i].name, e.msg);
    }
    pass_pipeline_fini(&pl);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct plan *p = (struct plan *)&p; /* must become NULL on failure */
    struct mt_err e;
    err_clear(&e);
    int rc = plan_load_string((const char *)data, size, FUZZ_NAME, &p, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.code == rc, "code %d but the message says %d", rc, e.code);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME, strlen(FUZZ_NAME)) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(p == NULL, "*out not NULL on failure");
        return 0;
    }
    FUZZ_CHECK(p != NULL, "no plan");
    fuzz_plan_round_trip(p);
#ifndef FUZZ_PARSE_ONLY /* fuzz_plan_parse: the reader and its round trip alone */
    err_clear(&e);
    rc = validate_plan(p, &e);
    if (rc == MT_OK) {
        fuzz_plan_simulate(p);
        fuzz_plan_passes(p);
    } else
        FUZZ_CHECK(e.msg[0] != '\0' && e.code == rc, "refused (%d) without a message", rc);
#endif
    plan_free(p);
    return 0;
}
