/* tests/fuzz/fuzz_calibration.c: the calibration file reader (model/profile_json.c, what
 * `--calibration FILE` loads) on arbitrary bytes, then what every command does with an
 * accepted calibration: its fits replace the analytic costs of a small config's stages
 * (model/profile.c through cost_model_build) and the plan is simulated.
 * Invariants: a refusal is MT_EPARSE or MT_EINVAL with a message that starts with the file
 * name and leaves *out untouched; an accepted calibration holds finite fits and a shape of
 * positive sizes, profile_to_cjson() loads back to one that writes the same JSON, and the
 * calibrated plan simulates with finite, non-negative times (profile_apply clamps fits that
 * dip below zero; nothing it is given may reach the simulator as NaN or infinity). */
#include <config.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/profile.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.cal.json"

/* model/microcal.h's, declared here: that header brings model/ops.h, whose struct op cannot
 * share a file with sim/'s enum op */
void microcal_pool_clear(void);

static char *fuzz_calibration_json(const struct profile *p)
{
    cJSON *o = profile_to_cjson(p);
    FUZZ_CHECK(o != NULL, "profile_to_cjson returned NULL");
    char *text = cJSON_PrintUnformatted(o);
    FUZZ_CHECK(text != NULL, "cJSON_PrintUnformatted returned NULL");
    cJSON_Delete(o);
    return text;
}

static void fuzz_calibration_round_trip(const struct profile *p)
{
    struct profile q;
    struct mt_err e;
    err_clear(&e);
    char *json = fuzz_calibration_json(p);
    int rc = profile_load_string(json, strlen(json), "round-trip.cal.json", &q, &e);
    FUZZ_CHECK(rc == MT_OK, "written calibration does not load back: %s\n%s", e.msg, json);
    char *again = fuzz_calibration_json(&q);
    FUZZ_CHECK(strcmp(json, again) == 0, "round trip changed the calibration:\n%s\n---\n%s", json,
               again);
    cJSON_free(again);
    cJSON_free(json);
}

static void fuzz_calibration_fits(const struct profile *p)
{
    const struct profile_fit *f[] = {&p->fw,
                                     &p->bw,
                                     &p->rc,
                                     &p->os,
                                     &p->ar,
                                     &p->p2p,
                                     &p->act,
                                     &p->ckpt,
                                     &p->static_bytes,
                                     &p->fw_work_bytes,
                                     &p->cfw_peak_bytes,
                                     &p->bw_work_bytes};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        FUZZ_CHECK(isfinite(f[i]->a) && isfinite(f[i]->b) && isfinite(f[i]->embed) &&
                       isfinite(f[i]->head) && isfinite(f[i]->r2) && f[i]->points >= 0,
                   "fit %zu: a %g b %g embed %g head %g r2 %g points %d", i, f[i]->a, f[i]->b,
                   f[i]->embed, f[i]->head, f[i]->r2, f[i]->points);
    const struct profile_shape *s = &p->shape;
    FUZZ_CHECK(s->hidden_size >= 1 && s->num_attention_heads >= 1 && s->seq_length >= 1 &&
                   s->vocab_size >= 1 && s->ffn_hidden_size >= 1 && s->micro_batch_size >= 1 &&
                   s->tp >= 1,
               "shape not positive");
}

/* GPT3-1.6B (the default) with V on 2 devices and 2 micro-batches, calibrated by p. */
static void fuzz_calibration_simulate(const struct profile *p)
{
    struct config c;
    struct mt_err e;
    struct plan *pl = NULL;
    err_clear(&e);
    config_default(&c);
    c.num_device = 2;
    c.num_microbatches = 2;
    c.global_batch_size = 2;
    c.profile = *p;
    int rc = scheme_build(&c, &pl, &e);
    FUZZ_CHECK(rc == MT_OK, "a calibrated plan is refused: %s", e.msg);
    struct sim_result r;
    rc = sim_run(pl, &r, &e);
    FUZZ_CHECK(rc == MT_OK, "a calibrated plan does not simulate: %s", e.msg);
    FUZZ_CHECK(isfinite(r.step_time) && r.step_time >= 0, "step time %g", r.step_time);
    for (int i = 0; i < r.total; i++)
        FUZZ_CHECK(isfinite(r.start[i]) && isfinite(r.end[i]) && r.end[i] >= r.start[i],
                   "instruction %d: %g .. %g", i, r.start[i], r.end[i]);
    sim_result_fini(&r);
    plan_free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile p;
    struct mt_err e;
    err_clear(&e);
    memset(&p, 0xA5, sizeof p); /* must stay untouched on failure */
    struct profile before = p;
    int rc = profile_load_string((const char *)data, size, FUZZ_NAME, &p, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.code == rc, "code %d but the message says %d", rc, e.code);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME ":", strlen(FUZZ_NAME ":")) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(memcmp(&p, &before, sizeof p) == 0, "calibration written on failure");
        return 0;
    }
    if (!p.enabled) { /* micro-benchmark tables alone (tests/fuzz/fuzz_microcal.c reads them) */
        FUZZ_CHECK(p.micro != NULL, "an accepted calibration has neither fits nor tables");
        fuzz_calibration_round_trip(&p);
        microcal_pool_clear();
        return 0;
    }
    fuzz_calibration_fits(&p);
    fuzz_calibration_round_trip(&p);
    fuzz_calibration_simulate(&p);
    microcal_pool_clear(); /* the tables of this input: nothing refers to them any more */
    return 0;
}
