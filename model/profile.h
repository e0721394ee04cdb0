/* model/profile.h: the profiled estimator of §5.2 ("Lightweight Profiling"): per-stage time and
 * memory as least-squares fits measured on the executor (`mario-tui profile`, fitted by
 * traces/calibrate.c), used by cost_model_build in place of the analytic estimates when a
 * config carries one (`--calibration FILE`, or "calibration" in a config or plan file).
 *
 * Every quantity q of a stage holding n transformer layers is fitted as
 *     q = a·n + b + embed·[stage holds the embedding] + head·[stage holds the LM head]
 * (the paper's y = a·n + b, with the two end stages' extra work as their own terms). The
 * fits hold for the shape they were measured at (hidden size, sequence, micro-batch size,
 * ...); for another shape each term is scaled by the analytic model's ratio between the two
 * shapes (model/cost.h), so a calibration corrects the device's speed and the executor's
 * memory layout while the analytic model carries the shape. A fit with no points leaves the
 * analytic estimate in place. The device a calibration was measured on is recorded: a plan
 * made with a CPU calibration predicts a CPU run. */
#ifndef MT_MODEL_PROFILE_H
#define MT_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct stage_cost;
struct mt_err;
struct cJSON;

struct profile_fit {
    double a;     /* per layer */
    double b;     /* per stage */
    double embed; /* extra on the stage holding the embedding */
    double head;  /* extra on the stage holding the LM head */
    double r2;    /* coefficient of determination (1 = exact); 0 when not computed */
    int points;   /* observations fitted; 0 = not measured (the analytic estimate stays) */
};

/* The model and batch shape the fits were measured at. */
struct profile_shape {
    int arch; /* enum model_arch */
    int hidden_size, num_attention_heads, seq_length, vocab_size, ffn_hidden_size;
    int micro_batch_size, tp;
};

struct microcal;

struct profile {
    bool enabled;     /* holds the stage fits below (shape and fits); a file of micro-benchmark
                       * tables alone leaves it false */
    char device[96];  /* what it was measured on: "cpu: <model name> (N cores)", a GPU name */
    char backend[16]; /* the executor backend: cpu, cuda, nccl */
    char created[32]; /* UTC date and time of the measurement */
    int cores;        /* the cores the measured node's ranks share (a CPU's); 0 = a core each.
                       * More ranks than this share them (sim/core/share.h); --cores sets it */
    struct profile_shape shape;
    /* times of one micro-batch (us) */
    struct profile_fit fw, bw, rc;
    struct profile_fit b, w; /* split backward: input gradient (B), weight gradient (W); when
                              * both are measured they replace the FLOPs' split of bw */
    struct profile_fit os;  /* optimizer step of a stage (us) */
    struct profile_fit ar;  /* gradient allreduce of a stage (us) */
    struct profile_fit p2p; /* one activation or gradient message, send to arrival (us) */
    /* bytes */
    struct profile_fit act;          /* kept by a full forward, one micro-batch */
    struct profile_fit ckpt;         /* kept by a checkpointed forward */
    struct profile_fit static_bytes; /* weights, gradients, optimizer state */
    /* transients (stage_cost in model/cost.h): they raise the peak, not the curve */
    struct profile_fit fw_work_bytes;  /* FW: over what it keeps at its end */
    struct profile_fit cfw_peak_bytes; /* CFW: the most over what the device held before it */
    struct profile_fit bw_work_bytes;  /* BW: over what the device held before it */
    struct profile_fit msg_bytes;      /* one activation or gradient message's buffer */
    struct profile_fit w_keep_bytes;   /* what a B leaves held for its W (split backward) */
    /* with more ranks than cores (sim/core/share.h): b = the median p2p latency and a receive's
     * own time, measured on runs of twice as many ranks as cores */
    struct profile_fit p2p_shared, recv_shared;
    struct profile_fit gap_shared; /* then: the time between instructions, per instruction */
    /* micro-benchmark tables (model/microcal.h): measured GEMM, attention, HBM and collective
     * rates for the device model to price ops with; NULL = none. Immutable and shared by every
     * copy of the profile (the pool of model/microcal.h owns it). */
    const struct microcal *micro;
};

/* Applies p to one stage of config c (its layer count and ends already set): every fitted
 * quantity replaces the analytic one, scaled to c's shape. */
void profile_apply(const struct profile *p, const struct config *c, struct stage_cost *st);
/* The split backward's measured B and W times (both fitted) and W's kept bytes, over what
 * model/cost.c made of the measured backward (its FLOPs' split); called after that split.
 * Calibrations without them leave the stage as it is. */
void profile_apply_split(const struct profile *p, const struct config *c, struct stage_cost *st);
/* Records c's shape in p->shape. */
void profile_shape_of(const struct config *c, struct profile_shape *out);

/* ---- model/profile_json.c: calibration files ---------------------------------------------
 * {"format": "mario-calibration", "version": 1, "device": "...", "backend": "cpu",
 *  "created": "...", "cores": N (optional: the cores the ranks shared), "shape": {"type", "hidden_size", "num_attention_heads", "seq_length",
 *  "vocab_size", "ffn_hidden_size", "micro_batch_size", "tp"},
 *  "fits": {"fw_us": {"a", "b", "embed", "head", "r2", "points"}, "bw_us", "rc_us", "os_us",
 *           "ar_us", "p2p_us", "act_bytes", "ckpt_bytes", "static_bytes", "fw_work_bytes",
 *           "cfw_peak_bytes", "bw_work_bytes", "msg_bytes", and since the split backward
 *           "b_us", "w_us", "w_keep_bytes", "p2p_shared_us", "recv_shared_us", "gap_shared_us"
 *           (each optional:
 *           older files load as they were)},
 *  "micro": {...}  (optional: micro-benchmark tables, the format in model/microcal.h),
 *  "observations": [...]}   (what was measured; kept for the record, not read back)
 * "shape" and "fits" go together; a file with "micro" may have neither (the tables alone:
 * `profile --from-nccl-tests`, `profile --micro`), and then loads with enabled false and
 * micro set. Unknown keys are errors. */
#define PROFILE_MAX_BYTES (16u << 20)

int profile_load(const char *path, struct profile *out, struct mt_err *e);
int profile_load_string(const char *text, size_t len, const char *name, struct profile *out,
                        struct mt_err *e);
/* From the object obj of a document being read (a config's "calibration"): messages name
 * the document's file, line, column and path ("cfg.json:9:7: calibration.fits.fw_us.a"). */
struct json_doc;
struct json_value;
int profile_from_json(struct json_doc *d, const struct json_value *obj, struct profile *out);
/* The object without observations (caller cJSON_Delete()s). */
struct cJSON *profile_to_cjson(const struct profile *p);
/* Writes the file atomically; extra (may be NULL) is added as "observations" and taken over. */
int profile_save(const char *path, const struct profile *p, struct cJSON *extra, struct mt_err *e);

#endif
