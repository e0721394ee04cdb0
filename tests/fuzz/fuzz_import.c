/* tests/fuzz/fuzz_import.c: `mario-tui import` on one trace (traces/import.c): our traces and
 * torch.distributed.pipelining's "PP:" action ranges, read without a mapping, then made into
 * a plan over the tiny model's config. Invariants: a refusal is MT_EPARSE, MT_EINVAL,
 * MT_ENOMEM or MT_EUNSUPPORTED with a message and no plan; an accepted plan validates, has
 * the devices, stages and micro-batches the import reports, and simulates to a finite step
 * time. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/fuzz/fuzz.h"
#include "traces/import.h"
#include "traces/trace.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace *t = NULL;
    struct mt_err e;
    err_clear(&e);
    struct trace_opts o = {NULL, 0};
    if (trace_load_mem((const char *)data, size, "fuzz.import.json", &o, &t, &e) != MT_OK)
        return 0; /* the readers' invariants are fuzz_chrome's */
    struct config base;
    config_default(&base);
    FUZZ_CHECK(presets_model("tiny", &base.model, &e) == MT_OK, "no tiny model: %s", e.msg);
    struct import_opts io = {-1, false, false};
    struct import_info info;
    struct plan *p = (struct plan *)&info; /* must become NULL on failure */
    err_clear(&e);
    int rc = import_plan(t, NULL, 0, &base, &io, &p, &info, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL || rc == MT_ENOMEM || rc == MT_EUNSUPPORTED,
                   "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.msg[0] != '\0' && e.code == rc, "refused (%d) without a message", rc);
        FUZZ_CHECK(p == NULL, "*out not NULL on failure");
        trace_free(t);
        return 0;
    }
    const struct plan_geom *g = plan_geom(p);
    FUZZ_CHECK(g->devices == info.devices && g->stages == info.stages && g->mbs == info.mbs,
               "geometry %d/%d/%d, reported %d/%d/%d", g->devices, g->stages, g->mbs, info.devices,
               info.stages, info.mbs);
    FUZZ_CHECK(validate_plan(p, &e) == MT_OK, "the imported plan does not validate: %s", e.msg);
    struct sim_result r;
    FUZZ_CHECK(sim_run(p, &r, &e) == MT_OK, "the imported plan does not simulate: %s", e.msg);
    FUZZ_CHECK(isfinite(r.step_time) && r.step_time >= 0, "step time %g", r.step_time);
    sim_result_fini(&r);
    plan_free(p);
    trace_free(t);
    return 0;
}
