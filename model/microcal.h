/* model/microcal.h: calibration from micro-benchmarks (issue 37 item 6; docs/traces.md,
 * "Micro-benchmark tables"): what one GPU (or CPU) measured running single kernels and
 * collectives, for the device model (model/price.h) to price ops with in place of its default
 * curves:
 *   GEMM       by (dtype; m, n, k)                  -> achieved TFLOP/s (a cuBLAS/sgemm sweep)
 *   attention  by (dtype, causal, pass; batch x heads, seq, head_dim) -> TFLOP/s
 *   HBM        by (bytes copied)                    -> GB/s (a STREAM-like copy)
 *   collective by (collective, link; bytes, ranks)  -> bus bandwidth, GB/s (nccl-tests' busbw)
 * The kinds in parentheses before the ';' must match exactly; the numbers after it are the
 * axes of the measured grid, looked up in log space.
 *
 * Lookup (every microcal_* query): on each axis the query is bracketed by the two nearest
 * measured values and the table answers with the multilinear interpolation of log(value) in
 * log(axes) over the corners of that cell, when every corner was measured. A query equal to
 * measured values on every axis returns the measured figure itself, bit for bit. Beyond the
 * measured range of an axis, up to a factor MICROCAL_REACH, the edge value holds (no slope is
 * extrapolated: efficiency curves flatten at large sizes and fall at small ones, so a slope
 * carried past the data would mislead either way); farther, or in a cell with a corner not
 * measured, the lookup refuses (returns false) and the caller keeps its default model.
 *
 * Storage: configs embed a struct profile by value and are copied often (every candidate of
 * the tuner, every plan), so a table is not a value inside them: a profile holds a pointer to
 * an immutable table owned by a process-wide pool (microcal_build), shared by every copy of
 * every config that loaded it and never changed after it is built. Identical tables (a file
 * loaded twice) are one entry. Tables live until the process ends (microcal_pool_clear frees
 * them for tests and fuzzers). Sizes: up to MICROCAL_MAX_ROWS rows of each kind. */
#ifndef MT_MODEL_MICROCAL_H
#define MT_MODEL_MICROCAL_H

#include <stdbool.h>
#include <stddef.h>

#include "model/ops.h"

struct mt_err;

/* Beyond the measured range of an axis, the edge value holds up to this factor. */
#define MICROCAL_REACH 2.0
/* Rows of each kind in one table (a 16 MiB calibration file holds ~150,000 rows at most). */
#define MICROCAL_MAX_ROWS 65536
/* Distinct tables the pool holds at once (a process loads a handful). */
#define MICROCAL_POOL_MAX 4096

struct microcal_gemm {
    enum op_dtype dtype;
    double m, n, k; /* (m x k) . (k x n) */
    double tflops;  /* achieved, 1e12 FLOP/s (a multiply-add is 2 FLOPs) */
};

struct microcal_attention {
    enum op_dtype dtype;
    bool causal;
    enum op_pass pass;  /* PASS_FW (forward) or PASS_B (the whole backward: dQ, dK, dV) */
    double batch, heads; /* looked up by their product */
    double seq, head_dim;
    double tflops; /* achieved, counted as model/ops.c's op_flops counts the kernel */
};

struct microcal_hbm {
    double bytes; /* bytes read + written by one copy */
    double gbps;  /* 1e9 B/s */
};

struct microcal_coll {
    enum op_coll coll;
    enum op_link link;
    int ranks;
    double bytes;      /* nccl-tests' size: the buffer one rank holds (model/ops.h's op.bytes) */
    double busbw_gbps; /* nccl-tests' busbw: algbw x its bus factor, 1e9 B/s */
};

/* An immutable table: rows sorted by kind then axes (the order files are written in). */
struct microcal {
    const struct microcal_gemm *gemm;
    const struct microcal_attention *attn;
    const struct microcal_hbm *hbm;
    const struct microcal_coll *coll;
    size_t n_gemm, n_attn, n_hbm, n_coll;
    struct microcal_index *index; /* the lookup's (model/microcal.c) */
};

/* ---- lookups (t may be NULL: no table, false). Each returns false and leaves *out alone
 * when the table has nothing near (see above). */
/* GEMM: the fraction of peak (FLOP/s of dtype, > 0) the measured rate reaches at (m, n, k),
 * at most 1 (a rate above the caller's peak means the peak is wrong; it is capped). */
bool microcal_gemm_efficiency(const struct microcal *t, double m, double n, double k,
                              enum op_dtype dtype, double peak, double *eff);
/* Attention: achieved FLOP/s of pass (PASS_FW or PASS_B) of batch x heads heads of seq
 * tokens (s_q = s_kv) and head_dim. */
bool microcal_attention_flops(const struct microcal *t, double batch, double seq, double heads,
                              double head_dim, bool causal, enum op_dtype dtype, enum op_pass pass,
                              double *flops);
/* HBM: GB/s (1e9 B/s) of a copy moving `bytes` (read + written). */
bool microcal_hbm_gbps(const struct microcal *t, double bytes, double *gbps);
/* Collective: bus bandwidth, GB/s, of coll over ranks on link with `bytes` (nccl-tests' size).
 * The time follows as nccl-tests defines busbw: factor x bytes / busbw (factor 2(n-1)/n for
 * all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for send/recv). The
 * measured busbw of small messages already holds their latency. */
bool microcal_busbw(const struct microcal *t, enum op_coll coll, double bytes, int ranks,
                    enum op_link link, double *gbps);
/* nccl-tests' bus factor of coll over n ranks (busbw = algbw x factor). */
double microcal_bus_factor(enum op_coll coll, int n);

/* ---- building a table ------------------------------------------------------------------- */
struct microcal_builder; /* opaque: rows as added */

struct microcal_builder *microcal_builder_new(void);
void microcal_builder_free(struct microcal_builder *b);
/* Adds a row (values checked by microcal_build). */
void microcal_add_gemm(struct microcal_builder *b, const struct microcal_gemm *r);
void microcal_add_attention(struct microcal_builder *b, const struct microcal_attention *r);
void microcal_add_hbm(struct microcal_builder *b, const struct microcal_hbm *r);
void microcal_add_coll(struct microcal_builder *b, const struct microcal_coll *r);
/* Adds every row of t (NULL: none). */
void microcal_add_table(struct microcal_builder *b, const struct microcal *t);
/* Rows added, all kinds. */
size_t microcal_builder_rows(const struct microcal_builder *b);

/* What microcal_build found wrong: the kind ("gemm", "attention", "hbm", "collectives"), the
 * row (its index in the order added), and for a duplicate the earlier row of the same key. */
struct microcal_fault {
    const char *kind;
    size_t row, first; /* first: SIZE_MAX unless a duplicate */
    const char *key;   /* a duplicate's key ("dtype, m, n and k"), else NULL */
    char what[160];
};

/* The table of b's rows, from the pool (identical tables are one). MT_EINVAL with *fault
 * filled (and e's message "KIND row N: what") on a value out of range (sizes and rates
 * finite and > 0, up to 1e18; ranks 2 to 1,048,576; head_dim, seq, batch x heads within
 * 1e9; a pass other than FW or B), two rows of one key, over MICROCAL_MAX_ROWS rows of a
 * kind, or a full pool. An empty builder gives NULL. */
int microcal_build(const struct microcal_builder *b, const struct microcal **out,
                   struct microcal_fault *fault, struct mt_err *e);
/* Frees every pooled table: only when nothing refers to one (tests, fuzzers). */
void microcal_pool_clear(void);
/* Tables in the pool. */
size_t microcal_pool_size(void);

/* ---- model/microcal_json.c: the "micro" object of a calibration file (model/profile.h) ----
 * {"gemm": [{"dtype": "bf16", "m": 4096, "n": 4096, "k": 4096, "tflops": 612.5}, ...],
 *  "attention": [{"dtype": "bf16", "causal": true, "pass": "fw", "batch": 1, "heads": 32,
 *                 "seq": 4096, "head_dim": 128, "tflops": 410.2}, ...],
 *  "hbm": [{"bytes": 1073741824, "gbps": 3350.0}, ...],
 *  "collectives": [{"collective": "all_reduce", "link": "nvlink", "ranks": 8,
 *                   "bytes": 1073741824, "busbw_gbps": 361.5}, ...]}
 * each list optional; unknown keys are errors. dtype: bf16, fp16, fp32, fp8; pass: fw, bw;
 * collective: all_reduce, all_gather, reduce_scatter, all_to_all, send_recv; link: nvlink,
 * network, pcie. */
struct json_doc;
struct json_value;
struct cJSON;
/* *out: the table (NULL for an object with no rows). Errors name file:line:col and the path
 * ("micro.gemm[3].tflops"), a duplicate both rows. */
int microcal_from_json(struct json_doc *d, const struct json_value *obj,
                       const struct microcal **out);
/* The object (caller cJSON_Delete()s); t not NULL. */
struct cJSON *microcal_to_cjson(const struct microcal *t);

#endif
