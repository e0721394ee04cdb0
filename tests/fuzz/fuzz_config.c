/* tests/fuzz/fuzz_config.c: the config loader (model/config_json.c) on arbitrary bytes, then
 * what `mario-tui simulate CONFIG` does with an accepted config: its plan, the plan's
 * validation and the simulation (so that extreme but accepted values - huge sizes, tiny
 * bandwidths - are run through the cost model and the simulator under the sanitizers).
 * Invariants: a refusal is MT_EPARSE or MT_EINVAL with a message that starts with the file
 * name (docs/design.md: messages name the file and the field) and leaves *out untouched; an
 * accepted config passes config_validate(), and config_to_json() loads back to a config that
 * writes the same JSON (nothing is lost or changed on the way round); its plan is built or
 * refused with a message, and a plan that validates simulates.
 * Built with -DFUZZ_PARSE_ONLY it is fuzz_config_parse: the same invariants up to the round
 * trip, without the plan and the simulation (which cap the full target near 1,000 execs/s),
 * so that the reader itself gets tens of millions of inputs. */
#include <config.h>

#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/fuzz/fuzz.h"
#include "traces/chrome.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.json"
/* Plans above this many (micro-batch, stage) cells are only loaded, to keep the fuzzer fast
 * (the limits of larger ones are checked by scheme_geom before anything is allocated). */
#define FUZZ_MAX_CELLS 4096

static void fuzz_config_round_trip(const struct config *c)
{
    struct mt_err e;
    struct config d;
    err_clear(&e);
    char *json = config_to_json(c);
    FUZZ_CHECK(json != NULL, "config_to_json returned NULL");
    int rc = config_load_string(json, strlen(json), "round-trip.json", &d, &e);
    FUZZ_CHECK(rc == MT_OK, "written config does not load back: %s\n%s", e.msg, json);
    char *again = config_to_json(&d);
    FUZZ_CHECK(again != NULL, "config_to_json returned NULL");
    FUZZ_CHECK(strcmp(json, again) == 0, "round trip changed the config:\n%s\n---\n%s", json,
               again);
    free(again);
    free(json);
}

#ifndef FUZZ_PARSE_ONLY
static void fuzz_config_simulate(const struct config *c)
{
    struct mt_err e;
    struct plan_geom g;
    struct plan *p = NULL;
    err_clear(&e);
    int rc = scheme_geom(c, &g, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(e.msg[0] != '\0', "scheme_geom refused (%d) without a message", rc);
        return;
    }
    if ((long)g.mbs * g.stages * g.parts > FUZZ_MAX_CELLS)
        return;
    rc = scheme_build(c, &p, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(p == NULL && e.msg[0] != '\0', "scheme_build refused (%d) badly", rc);
        return;
    }
    err_clear(&e);
    if (validate_plan(p, &e) == MT_OK) {
        struct sim_result r;
        rc = sim_run(p, &r, &e);
        FUZZ_CHECK(rc == MT_OK, "a validated plan does not simulate: %s", e.msg);
        char *trace = chrome_from_sim(p, &r);
        FUZZ_CHECK(trace != NULL, "no trace");
        free(trace);
        sim_result_fini(&r);
    } else {
        FUZZ_CHECK(e.msg[0] != '\0', "a generated plan refused without a message");
    }
    plan_free(p);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config c;
    struct mt_err e;
    err_clear(&e);
    memset(&c, 0xA5, sizeof c); /* must stay untouched on failure */
    struct config before = c;
    int rc = config_load_string((const char *)data, size, FUZZ_NAME, &c, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.code == rc, "code %d but the message says %d", rc, e.code);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME ":", strlen(FUZZ_NAME ":")) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(memchr(e.msg, '\0', sizeof e.msg) != NULL, "message not terminated");
        FUZZ_CHECK(memcmp(&c, &before, sizeof c) == 0, "config written on failure");
        return 0;
    }
    FUZZ_CHECK(strcmp(c.source, FUZZ_NAME) == 0, "source is '%s'", c.source);
    FUZZ_CHECK(config_validate(&c, &e) == MT_OK, "accepted config does not validate: %s", e.msg);
    fuzz_config_round_trip(&c);
#ifndef FUZZ_PARSE_ONLY /* fuzz_config_parse: the reader alone, at the reader's speed */
    fuzz_config_simulate(&c);
#endif
    return 0;
}
