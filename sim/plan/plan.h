/* sim/plan/plan.h: the plan, the one structure every part passes around (docs/design.md): for each
 * device an ordered list of instructions (the paper's Table 3) plus the config it was made
 * from. Opaque: it owns the per-device arrays. Instructions have flat ids
 * (plan_id(p, dev, i)) so per-instruction results live in arrays indexed by id. */
#ifndef MT_SIM_PLAN_H
#define MT_SIM_PLAN_H

#include <stdbool.h>

#include "model/config.h"

struct mt_err;

enum op {
    OP_FW,  /* forward, keeps the stage's full activations */
    OP_CFW, /* checkpointed forward, keeps only the stage input */
    OP_RC,  /* recomputation of a checkpointed forward */
    OP_BW,  /* backward (input and weight gradients) */
    OP_B,   /* split backward: input gradient only (zero-bubble schemes) */
    OP_W,   /* split backward: weight gradient only */
    OP_SA,  /* send activation to the next stage's device */
    OP_RA,  /* receive activation from the previous stage's device */
    OP_SG,  /* send gradient to the previous stage's device */
    OP_RG,  /* receive gradient from the next stage's device */
    OP_AR,  /* allreduce of a stage's gradients across its replicas */
    OP_OS,  /* optimizer step of a stage */
    OP_OF,  /* offload a FW's activations to host memory (the device's D2H copy lane) */
    OP_RL,  /* reload them before its backward (the H2D copy lane) */
    OP__COUNT
};

struct instr {
    enum op op;
    int mb;          /* micro-batch id; -1 for AR / OS (async plans: the update's last mb) */
    int part;        /* partition on this device (Chimera pipeline, interleave chunk) */
    int stage;       /* virtual-pipeline stage this instruction belongs to */
    int peer;        /* SA/RA/SG/RG: the device on the other side; -1 otherwise */
    int step;        /* iteration index (async pipelines span several); 0 for synchronous */
    int ckpt_layers; /* CFW/RC: layers checkpointed, 0 = all (selective checkpointing) */
    int paired;      /* FW/CFW/BW/B: 1 when it runs fused with the device's previous compute, a
                      * backward of another micro-batch after a forward or the reverse
                      * (DualPipe's F&B chunk; --overlap-moe-expert-parallel-comm), each hiding
                      * the other's expert all-to-alls (sim/core/overlap.h); 0 otherwise */
};

/* The shape of a plan, enough for the virtual pipeline to place any (mb, stage). */
struct plan_geom {
    enum scheme_id scheme;
    int devices;     /* pipeline depth pp (one data-parallel replica is simulated) */
    int parts;       /* parts per device: 1, 2 for X, chunks for W */
    int stages;      /* stages a micro-batch passes through */
    int mbs;         /* micro-batches in the plan: one iteration's N, or K x N for an async
                      * plan spanning K iterations (micro-batch k * N + m of iteration k) */
};

struct plan;

/* Takes a copy of cfg. An empty plan of the given geometry. */
struct plan *plan_new(const struct config *cfg, const struct plan_geom *g);
void plan_free(struct plan *p);
struct plan *plan_clone(const struct plan *p);
/* A copy of p's instructions (and origin) under another config: the same order with other
 * costs, caps or sources. Geometry is p's; cfg must describe the same shape. */
struct plan *plan_with_config(const struct plan *p, const struct config *cfg);

const struct config *plan_config(const struct plan *p);
/* Where the plan's order came from when not from its scheme's generator ("imported from
 * rank0.json, step 1"); "" otherwise. Kept by plan_clone and in the plan file ("origin"). */
const char *plan_origin(const struct plan *p);
void plan_set_origin(struct plan *p, const char *origin);
const struct plan_geom *plan_geom(const struct plan *p);
int plan_devices(const struct plan *p);
int plan_len(const struct plan *p, int dev);
/* Borrowed view of device dev's list, valid until the plan changes. */
const struct instr *plan_instrs(const struct plan *p, int dev);
const struct instr *plan_at(const struct plan *p, int dev, int i);
/* Total instruction count and flat ids: id = offset(dev) + i, stable until the plan changes. */
int plan_total(const struct plan *p);
int plan_id(const struct plan *p, int dev, int i);
/* Inverse of plan_id. */
void plan_locate_id(const struct plan *p, int id, int *dev, int *i);

/* Data derived from the plan and kept with it, the resolution of its dependencies
 * (sim/core/vpipe.h vpipe_resolve), which the validator and the simulator share and a plan
 * simulated again reuses. The plan owns it: any change (plan_append, plan_insert,
 * plan_remove, plan_move) and plan_free destroy it, plan_clone does not copy it.
 * plan_cache_get returns it or NULL. plan_cache_put installs c unless one is there already
 * (another thread's: c is destroyed) and returns the one installed. Safe from threads that
 * read a plan none of them changes. */
struct plan_cache {
    void (*destroy)(struct plan_cache *c);
};
const struct plan_cache *plan_cache_get(const struct plan *p);
const struct plan_cache *plan_cache_put(const struct plan *p, struct plan_cache *c);

void plan_append(struct plan *p, int dev, struct instr in);
/* Inserts before position pos (pos == len appends). */
void plan_insert(struct plan *p, int dev, int pos, struct instr in);
void plan_remove(struct plan *p, int dev, int pos);
/* Replaces device dev's whole list by a copy of ins[0..n): how a pass that rewrites a list
 * stays linear (an insert shifts the rest of the list). */
void plan_set_list(struct plan *p, int dev, const struct instr *ins, int n);
/* Replaces device dev's list by ins[0..n), which the plan takes (allocated with xmalloc, room
 * for cap): a list rebuilt whole is handed over, not copied. */
void plan_adopt_list(struct plan *p, int dev, struct instr *ins, int n, int cap);
/* Moves the instruction at from to position to (indices in the list before the move). */
void plan_move(struct plan *p, int dev, int from, int to);
/* Returns the position of the first (op, mb, stage) on dev, or -1. */
int plan_find(const struct plan *p, int dev, enum op op, int mb, int stage);

const char *plan_op_name(enum op op);
/* Parses "FW", "cfw", ... Returns -1 when unknown. */
int plan_op_parse(const char *s);
/* Inline: the simulator, the validator and the generators ask per instruction. */
static inline bool plan_op_is_compute(enum op op) { return op <= OP_W; }
static inline bool plan_op_is_forward(enum op op) { return op == OP_FW || op == OP_CFW; }
static inline bool plan_op_is_backward(enum op op) { return op == OP_BW || op == OP_B; }
/* OF or RL: a copy over the host link, run on the device's copy lanes beside its compute. */
static inline bool plan_op_is_copy(enum op op) { return op == OP_OF || op == OP_RL; }
/* "CFW3.1" style label: op, mb, and part when the device holds several. */
int plan_instr_label(const struct plan *p, const struct instr *in, char *buf, int n);

/* Plan files (sim/plan/plan_json.c): versioned JSON {"format":"mario-plan","version":1,
 * "config":{...},"geometry":{...},"devices":[[{"op":"FW","mb":0,...},...],...]}. */
char *plan_to_json(const struct plan *p);
/* Adds what every report opens with to the JSON object o: scheme, model, pp, dp,
 * microbatches, micro_batch_size (sim/plan/plan_json.c). */
struct cJSON;
void plan_json_add_shape(struct cJSON *o, const struct plan *p);
/* Writes JSON, or torch's schedule CSV when the path ends in .csv (plan_to_torch_csv). */
int plan_save(const struct plan *p, const char *path, struct mt_err *e);
int plan_load(const char *path, struct plan **out, struct mt_err *e);
int plan_load_string(const char *text, size_t len, const char *name, struct plan **out,
                     struct mt_err *e);

/* torch.distributed.pipelining's schedule CSV (sim/plan/plan_csv.c): one row per rank of actions
 * "0F1" (stage, F | I | W | B, micro-batch), with a ZeRO-2 / FSDP plan's "0UNSHARD", "0RESHARD"
 * and "0REDUCE_GRAD" (stage, name, no micro-batch) where torch runs them. Writing refuses CFW/RC
 * and OF/RL, naming the first. Loading takes the model, cluster and costs from base and the
 * geometry from the file, checks a FSDP action names a stage of its own row and otherwise
 * leaves it (the simulator prices FSDP from base), names file:line:column of a bad cell, and
 * returns a validated plan. */
char *plan_to_torch_csv(const struct plan *p, struct mt_err *e);
/* The same with options. A DualPipeV plan's forward of one part followed by a whole backward
 * of the other is written as torch's overlapped action "(0F3;3B1)OVERLAP_F_B" where torch's
 * ScheduleDualPipeV overlaps them (and read back as the two, plan_load_torch_csv). */
struct plan_csv_opts {
    bool checkpoints_as_ac; /* CFW written as F and RC left out: the order torch runs under
                             * the framework's activation checkpointing, which recomputes
                             * inside the backward (export's checkpointed plans); else
                             * CFW/RC are refused */
    bool compute_only;      /* no FSDP actions: torch's _load_csv "compute_only" format,
                             * which refuses them and adds its own (torchtitan's
                             * pipeline_parallel_schedule_csv); else a ZeRO-2 / FSDP plan's
                             * rows carry UNSHARD, RESHARD and REDUCE_GRAD cells
                             * (sim/plan/plan_csv_fsdp.c) */
};
char *plan_to_torch_csv_opts(const struct plan *p, const struct plan_csv_opts *o,
                             struct mt_err *e);
int plan_load_torch_csv(const char *text, size_t len, const char *name, const struct config *base,
                        struct plan **out, struct mt_err *e);
int plan_load_torch_csv_file(const char *path, const struct config *base, struct plan **out,
                             struct mt_err *e);
bool plan_path_is_csv(const char *path);

#endif
