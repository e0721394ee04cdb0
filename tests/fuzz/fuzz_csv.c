/* tests/fuzz/fuzz_csv.c: torch's schedule CSV reader (sim/plan/plan_csv.c) on arbitrary bytes, with
 * unit costs as the base config. Invariants: a refusal has a message that starts with the file
 * name and leaves *out NULL; an accepted plan validates (the reader validates it), simulates
 * with finite times, and writes back a CSV that loads to a plan writing the same CSV; Mario's
 * passes keep it valid. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.csv"
#define FUZZ_MAX_PASS_INSTRS 1024

static void fuzz_csv_round_trip(const struct plan *p, const struct config *base)
{
    struct mt_err e;
    err_clear(&e);
    char *csv = plan_to_torch_csv(p, &e);
    FUZZ_CHECK(csv != NULL, "a loaded plan does not write: %s", e.msg);
    struct plan *q = NULL;
    int rc = plan_load_torch_csv(csv, strlen(csv), "round-trip.csv", base, &q, &e);
    FUZZ_CHECK(rc == MT_OK, "written CSV does not load back: %s", e.msg);
    char *again = plan_to_torch_csv(q, &e);
    FUZZ_CHECK(again != NULL && strcmp(csv, again) == 0, "round trip changed the CSV");
    free(again);
    free(csv);
    plan_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config base;
    config_default(&base);
    base.unit.enabled = true;
    base.model.num_layers = 4096; /* room for any stage count the reader accepts */
    struct plan *p = (struct plan *)&p; /* must become NULL on failure */
    struct mt_err e;
    err_clear(&e);
    int rc = plan_load_torch_csv((const char *)data, size, FUZZ_NAME, &base, &p, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(e.code == rc && e.msg[0] != '\0', "refused (%d) without a message", rc);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME, strlen(FUZZ_NAME)) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(p == NULL, "*out not NULL on failure");
        return 0;
    }
    FUZZ_CHECK(p != NULL, "no plan");
    err_clear(&e);
    FUZZ_CHECK(validate_plan(p, &e) == MT_OK, "accepted but invalid: %s", e.msg);
    struct sim_result r;
    rc = sim_run(p, &r, &e);
    FUZZ_CHECK(rc == MT_OK, "a validated plan does not simulate: %s", e.msg);
    if (rc == MT_OK) {
        FUZZ_CHECK(isfinite(r.step_time) && r.step_time >= 0, "step time %g", r.step_time);
        sim_result_fini(&r);
    }
    fuzz_csv_round_trip(p, &base);
    if (plan_total(p) <= FUZZ_MAX_PASS_INSTRS) {
        struct pass_pipeline pl;
        err_clear(&e);
        if (pass_pipeline_run(p, &pl, &e) == MT_OK) {
            for (int i = 0; i < pl.n; i++)
                FUZZ_CHECK(validate_plan(pl.step[i].plan, &e) == MT_OK, "step %d invalid: %s", i,
                           e.msg);
            pass_pipeline_fini(&pl);
        }
    }
    plan_free(p);
    return 0;
}
