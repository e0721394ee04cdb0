/* model/microcal_json.c: the "micro" object of a calibration file (format in model/microcal.h),
 * read through util/json.h so that every error names file:line:col and the row's path
 * ("micro.collectives[4].busbw_gbps"). Rows are written back in the table's order (sorted by
 * kind and axes), so a file written by `mario-tui profile` loads and writes back the same. */
#include <config.h>
#include "model/microcal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/json.h"

#define MICROCAL_JSON_MAX 1e18 /* microcal_build's bound on sizes and rates */
#define MICROCAL_JSON_MAX_DIM 1e9

static const char *const mj_dtypes[OP_DTYPE__COUNT] = {"bf16", "fp16", "fp32", "fp8"};
static const char *const mj_colls[COLL__COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                                  "all_to_all", "send_recv"};
static const char *const mj_links[LINK__COUNT] = {"nvlink", "network", "pcie"};
static const char *const mj_passes[2] = {"fw", "bw"};

/* A required number in (0, hi]. */
static int mj_positive(struct json_doc *d, const struct json_value *v, double hi, double *out)
{
    if (v->item == NULL)
        return json_fail(d, v, "missing (expected a number > 0)");
    TRY(json_double(d, v, out));
    if (!(*out > 0) || *out > hi)
        return json_fail(d, v, "%g is out of range (expected a number in (0, %g])", *out, hi);
    return MT_OK;
}

static int mj_required_enum(struct json_doc *d, const struct json_value *v,
                            const char *const *names, int n, const char *what, int *out)
{
    if (v->item == NULL)
        return json_fail(d, v, "missing (expected %s)", what);
    return json_enum(d, v, names, n, what, out);
}

static int mj_gemm(struct json_doc *d, const struct json_value *row, struct microcal_builder *b)
{
    enum { G_DTYPE, G_M, G_N, G_K, G_TFLOPS, G__COUNT };
    static const char *const keys[G__COUNT] = {"dtype", "m", "n", "k", "tflops"};
    struct json_value f[G__COUNT];
    TRY(json_fields(d, row, keys, G__COUNT, f));
    struct microcal_gemm r;
    int dt;
    TRY(mj_required_enum(d, &f[G_DTYPE], mj_dtypes, OP_DTYPE__COUNT, "bf16, fp16, fp32 or fp8",
                         &dt));
    r.dtype = (enum op_dtype)dt;
    TRY(mj_positive(d, &f[G_M], MICROCAL_JSON_MAX, &r.m));
    TRY(mj_positive(d, &f[G_N], MICROCAL_JSON_MAX, &r.n));
    TRY(mj_positive(d, &f[G_K], MICROCAL_JSON_MAX, &r.k));
    TRY(mj_positive(d, &f[G_TFLOPS], MICROCAL_JSON_MAX, &r.tflops));
    microcal_add_gemm(b, &r);
    return MT_OK;
}

static int mj_attention(struct json_doc *d, const struct json_value *row,
                        struct microcal_builder *b)
{
    enum { A_DTYPE, A_CAUSAL, A_PASS, A_BATCH, A_HEADS, A_SEQ, A_HEAD_DIM, A_TFLOPS, A__COUNT };
    static const char *const keys[A__COUNT] = {"dtype", "causal", "pass",     "batch",
                                               "heads", "seq",    "head_dim", "tflops"};
    struct json_value f[A__COUNT];
    TRY(json_fields(d, row, keys, A__COUNT, f));
    struct microcal_attention r;
    int dt, pass;
    TRY(mj_required_enum(d, &f[A_DTYPE], mj_dtypes, OP_DTYPE__COUNT, "bf16, fp16, fp32 or fp8",
                         &dt));
    r.dtype = (enum op_dtype)dt;
    if (f[A_CAUSAL].item == NULL)
        return json_fail(d, &f[A_CAUSAL], "missing (expected true or false)");
    TRY(json_bool(d, &f[A_CAUSAL], &r.causal));
    TRY(mj_required_enum(d, &f[A_PASS], mj_passes, 2, "fw or bw", &pass));
    r.pass = pass == 0 ? PASS_FW : PASS_B;
    TRY(mj_positive(d, &f[A_BATCH], MICROCAL_JSON_MAX_DIM, &r.batch));
    TRY(mj_positive(d, &f[A_HEADS], MICROCAL_JSON_MAX_DIM, &r.heads));
    if (r.batch * r.heads > MICROCAL_JSON_MAX_DIM)
        return json_fail(d, row, "batch x heads %g is over %g", r.batch * r.heads,
                         MICROCAL_JSON_MAX_DIM);
    TRY(mj_positive(d, &f[A_SEQ], MICROCAL_JSON_MAX_DIM, &r.seq));
    TRY(mj_positive(d, &f[A_HEAD_DIM], MICROCAL_JSON_MAX_DIM, &r.head_dim));
    TRY(mj_positive(d, &f[A_TFLOPS], MICROCAL_JSON_MAX, &r.tflops));
    microcal_add_attention(b, &r);
    return MT_OK;
}

static int mj_hbm(struct json_doc *d, const struct json_value *row, struct microcal_builder *b)
{
    static const char *const keys[2] = {"bytes", "gbps"};
    struct json_value f[2];
    TRY(json_fields(d, row, keys, 2, f));
    struct microcal_hbm r;
    TRY(mj_positive(d, &f[0], MICROCAL_JSON_MAX, &r.bytes));
    TRY(mj_positive(d, &f[1], MICROCAL_JSON_MAX, &r.gbps));
    microcal_add_hbm(b, &r);
    return MT_OK;
}

static int mj_coll(struct json_doc *d, const struct json_value *row, struct microcal_builder *b)
{
    enum { C_COLL, C_LINK, C_RANKS, C_BYTES, C_BUSBW, C__COUNT };
    static const char *const keys[C__COUNT] = {"collective", "link", "ranks", "bytes",
                                               "busbw_gbps"};
    struct json_value f[C__COUNT];
    TRY(json_fields(d, row, keys, C__COUNT, f));
    struct microcal_coll r;
    int c, l;
    TRY(mj_required_enum(d, &f[C_COLL], mj_colls, COLL__COUNT,
                         "all_reduce, all_gather, reduce_scatter, all_to_all or send_recv", &c));
    TRY(mj_required_enum(d, &f[C_LINK], mj_links, LINK__COUNT, "nvlink, network or pcie", &l));
    r.coll = (enum op_coll)c;
    r.link = (enum op_link)l;
    if (f[C_RANKS].item == NULL)
        return json_fail(d, &f[C_RANKS], "missing (expected an integer in [2, %d])", 1 << 20);
    TRY(json_int(d, &f[C_RANKS], 2, 1 << 20, &r.ranks));
    TRY(mj_positive(d, &f[C_BYTES], MICROCAL_JSON_MAX, &r.bytes));
    TRY(mj_positive(d, &f[C_BUSBW], MICROCAL_JSON_MAX, &r.busbw_gbps));
    microcal_add_coll(b, &r);
    return MT_OK;
}

/* Numbers are written with util/json.h's json_add_number_exact, which reads back exactly. */
typedef int (*mj_row_fn)(struct json_doc *, const struct json_value *, struct microcal_builder *);

int microcal_from_json(struct json_doc *d, const struct json_value *obj,
                       const struct microcal **out)
{
    enum { K_GEMM, K_ATTN, K_HBM, K_COLL, K__COUNT };
    static const char *const keys[K__COUNT] = {"gemm", "attention", "hbm", "collectives"};
    static const mj_row_fn readers[K__COUNT] = {mj_gemm, mj_attention, mj_hbm, mj_coll};
    struct json_value f[K__COUNT];
    if (!cJSON_IsObject(obj->item))
        return json_type_fail(d, obj, "an object of micro-benchmark tables");
    TRY(json_fields(d, obj, keys, K__COUNT, f));
    struct microcal_builder *b = microcal_builder_new();
    struct json_value *rows[K__COUNT] = {NULL};
    size_t nrows[K__COUNT] = {0};
    int rc = MT_OK;
    for (int k = 0; k < K__COUNT && rc == MT_OK; k++) {
        if (f[k].item == NULL)
            continue;
        rc = json_elements(d, &f[k], &rows[k], &nrows[k]);
        if (rc == MT_OK && nrows[k] > MICROCAL_MAX_ROWS)
            rc = json_fail(d, &f[k], "%zu rows (at most %d)", nrows[k], MICROCAL_MAX_ROWS);
        for (size_t i = 0; i < nrows[k] && rc == MT_OK; i++) {
            if (!cJSON_IsObject(rows[k][i].item))
                rc = json_type_fail(d, &rows[k][i], "an object (one measured row)");
            else
                rc = readers[k](d, &rows[k][i], b);
        }
    }
    if (rc == MT_OK) {
        struct microcal_fault fault;
        struct mt_err be;
        err_clear(&be);
        fault.kind = NULL;
        rc = microcal_build(b, out, &fault, &be);
        if (rc != MT_OK && fault.kind != NULL) {
            int k = 0;
            while (k < K__COUNT && strcmp(keys[k], fault.kind) != 0)
                k++;
            if (k < K__COUNT && fault.row < nrows[k]) {
                if (fault.first != SIZE_MAX)
                    rc = json_fail(d, &rows[k][fault.row], "the same %s as %s", fault.key,
                                   rows[k][fault.first].path);
                else
                    rc = json_fail(d, &rows[k][fault.row], "%s", fault.what);
            } else {
                rc = json_fail_from(d, obj, &be);
            }
        } else if (rc != MT_OK) {
            rc = json_fail_from(d, obj, &be);
        }
    }
    for (int k = 0; k < K__COUNT; k++)
        free(rows[k]);
    microcal_builder_free(b);
    return rc;
}

cJSON *microcal_to_cjson(const struct microcal *t)
{
    cJSON *o = cJSON_CreateObject();
    if (t->n_gemm) {
        cJSON *a = cJSON_AddArrayToObject(o, "gemm");
        for (size_t i = 0; i < t->n_gemm; i++) {
            const struct microcal_gemm *r = &t->gemm[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "dtype", mj_dtypes[r->dtype]);
            json_add_number_exact(j, "m", r->m);
            json_add_number_exact(j, "n", r->n);
            json_add_number_exact(j, "k", r->k);
            json_add_number_exact(j, "tflops", r->tflops);
            cJSON_AddItemToArray(a, j);
        }
    }
    if (t->n_attn) {
        cJSON *a = cJSON_AddArrayToObject(o, "attention");
        for (size_t i = 0; i < t->n_attn; i++) {
            const struct microcal_attention *r = &t->attn[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "dtype", mj_dtypes[r->dtype]);
            cJSON_AddBoolToObject(j, "causal", r->causal);
            cJSON_AddStringToObject(j, "pass", mj_passes[r->pass == PASS_B]);
            json_add_number_exact(j, "batch", r->batch);
            json_add_number_exact(j, "heads", r->heads);
            json_add_number_exact(j, "seq", r->seq);
            json_add_number_exact(j, "head_dim", r->head_dim);
            json_add_number_exact(j, "tflops", r->tflops);
            cJSON_AddItemToArray(a, j);
        }
    }
    if (t->n_hbm) {
        cJSON *a = cJSON_AddArrayToObject(o, "hbm");
        for (size_t i = 0; i < t->n_hbm; i++) {
            cJSON *j = cJSON_CreateObject();
            json_add_number_exact(j, "bytes", t->hbm[i].bytes);
            json_add_number_exact(j, "gbps", t->hbm[i].gbps);
            cJSON_AddItemToArray(a, j);
        }
    }
    if (t->n_coll) {
        cJSON *a = cJSON_AddArrayToObject(o, "collectives");
        for (size_t i = 0; i < t->n_coll; i++) {
            const struct microcal_coll *r = &t->coll[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "collective", mj_colls[r->coll]);
            cJSON_AddStringToObject(j, "link", mj_links[r->link]);
            json_add_number_exact(j, "ranks", r->ranks);
            json_add_number_exact(j, "bytes", r->bytes);
            json_add_number_exact(j, "busbw_gbps", r->busbw_gbps);
            cJSON_AddItemToArray(a, j);
        }
    }
    return o;
}
