/* tests/fuzz/fuzz_microcal.c: a calibration's micro-benchmark tables (model/microcal_json.c
 * through profile_load_string, what `--calibration FILE` loads; model/microcal.c's build and
 * lookups) on arbitrary bytes.
 * Invariants: a refusal is MT_EPARSE or MT_EINVAL with a message that starts with the file
 * name; an accepted table answers at each of its rows with that row's figure, bit for bit (a
 * GEMM's efficiency against a peak above every rate, a collective's busbw, a copy's GB/s);
 * a query between the rows of a class answers within the class's smallest and largest
 * figures or refuses; the table written back (profile_to_cjson) loads as the same pooled
 * table. The pool is cleared after each input. */
#include <config.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "model/microcal.h"
#include "model/profile.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.micro.json"
#define FUZZ_PEAK 1e31 /* above every rate a table holds (1e18 TFLOP/s): no cap */

static void fuzz_microcal_rows(const struct microcal *t)
{
    double v;
    for (size_t i = 0; i < t->n_gemm; i++) {
        const struct microcal_gemm *g = &t->gemm[i];
        FUZZ_CHECK(microcal_gemm_efficiency(t, g->m, g->n, g->k, g->dtype, FUZZ_PEAK, &v),
                   "gemm row %zu not found", i);
        FUZZ_CHECK(v == g->tflops * 1e12 / FUZZ_PEAK, "gemm row %zu: %g", i, v);
        /* between this row and the next of its dtype: within the dtype's range, or refused */
        if (i + 1 < t->n_gemm && t->gemm[i + 1].dtype == g->dtype) {
            const struct microcal_gemm *h = &t->gemm[i + 1];
            double lo = INFINITY, hi = 0;
            for (size_t j = 0; j < t->n_gemm; j++)
                if (t->gemm[j].dtype == g->dtype) {
                    lo = fmin(lo, t->gemm[j].tflops);
                    hi = fmax(hi, t->gemm[j].tflops);
                }
            if (microcal_gemm_efficiency(t, sqrt(g->m * h->m), sqrt(g->n * h->n),
                                         sqrt(g->k * h->k), g->dtype, FUZZ_PEAK, &v)) {
                double tf = v * FUZZ_PEAK / 1e12;
                FUZZ_CHECK(tf >= lo * (1 - 1e-9) && tf <= hi * (1 + 1e-9),
                           "gemm between rows %zu and %zu: %g TFLOP/s outside [%g, %g]", i, i + 1,
                           tf, lo, hi);
            }
        }
    }
    for (size_t i = 0; i < t->n_attn; i++) {
        const struct microcal_attention *a = &t->attn[i];
        FUZZ_CHECK(microcal_attention_flops(t, a->batch, a->seq, a->heads, a->head_dim, a->causal,
                                            a->dtype, a->pass, &v),
                   "attention row %zu not found", i);
        FUZZ_CHECK(v == a->tflops * 1e12, "attention row %zu: %g", i, v);
    }
    for (size_t i = 0; i < t->n_hbm; i++) {
        FUZZ_CHECK(microcal_hbm_gbps(t, t->hbm[i].bytes, &v) && v == t->hbm[i].gbps,
                   "hbm row %zu", i);
    }
    for (size_t i = 0; i < t->n_coll; i++) {
        const struct microcal_coll *c = &t->coll[i];
        FUZZ_CHECK(microcal_busbw(t, c->coll, c->bytes, c->ranks, c->link, &v) &&
                       v == c->busbw_gbps,
                   "collective row %zu", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile p;
    struct mt_err e;
    err_clear(&e);
    int rc = profile_load_string((const char *)data, size, FUZZ_NAME, &p, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME ":", strlen(FUZZ_NAME ":")) == 0,
                   "message does not start with the file name: %s", e.msg);
        microcal_pool_clear();
        return 0;
    }
    if (p.micro != NULL) {
        fuzz_microcal_rows(p.micro);
        cJSON *o = profile_to_cjson(&p);
        char *json = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        struct profile q;
        rc = profile_load_string(json, strlen(json), "round-trip.json", &q, &e);
        FUZZ_CHECK(rc == MT_OK, "written tables do not load back: %s\n%s", e.msg, json);
        FUZZ_CHECK(q.micro == p.micro, "the tables written back are not the same table");
        cJSON_free(json);
    }
    microcal_pool_clear();
    return 0;
}
