/* sim/passes/pass.h: Mario's graph passes (paper §5.1, Figure 2): apply-checkpoint, overlap-recompute,
 * remove-redundancy, prepose-forward. Each is a pure plan -> plan rewrite that asks the virtual
 * pipeline (sim/core/vpipe.h) for every dependency, so it works on every scheme; one table in
 * sim/passes/pass.c, one file per pass, and a driver that runs the whole pipeline. */
#ifndef MT_SIM_PASS_H
#define MT_SIM_PASS_H

#include <stdbool.h>

#include "sim/plan/plan.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"

struct mt_err;

enum pass_id {
    PASS_CHECKPOINT, /* pass 1, apply-checkpoint: FW -> CFW, RC right before each BW */
    PASS_OVERLAP,    /* pass 2, overlap-recompute: RC before the RG of its micro-batch */
    PASS_REDUNDANCY, /* pass 3, remove-redundancy: CFW next to its BW -> FW, no RC */
    PASS_PREPOSE,    /* pass 4, prepose-forward: CFW into earlier bubbles */
    PASS__COUNT
};

/* What a pass did to one instruction, keyed by (dev, op, mb, stage) as everywhere else. */
enum pass_change_kind {
    PASS_CHANGE_INSERT, /* a new instruction (pass 1's RC) */
    PASS_CHANGE_REMOVE, /* an instruction dropped (pass 3's RC) */
    PASS_CHANGE_MOVE,   /* the same instruction at another position (RC, CFW, RA, SA) */
    PASS_CHANGE_RETYPE, /* the op changed in place: FW -> CFW (pass 1), CFW -> FW (pass 3) */
};

struct pass_change {
    enum pass_change_kind kind;
    int dev;
    enum op op;     /* the op in the output (in the input for REMOVE) */
    enum op old_op; /* RETYPE: the op in the input; otherwise equal to op */
    int mb, part, stage;
};

/* The record a pass leaves beside its output: what the explorer highlights. */
struct pass_changes {
    int n, cap;
    struct pass_change *v;    /* [n] */
    int *slot, slots;         /* hash of (dev, op, mb, stage): index + 1 of its first change, 0
                               * empty; found in O(1) as every drawn cell asks (pass_changes_find) */
    bool kept_input;          /* the rewrite was invalid or slower: the output copies the input */
    char note[200];           /* why the input was kept; empty otherwise */
    double step_in, step_out; /* simulated step time of input and output (us; t in unit mode) */
};

void pass_changes_init(struct pass_changes *ch);
void pass_changes_fini(struct pass_changes *ch);
/* Forgets the changes (keeps the storage) and the note. */
void pass_changes_clear(struct pass_changes *ch);
void pass_changes_add(struct pass_changes *ch, enum pass_change_kind kind, int dev,
                      const struct instr *in, enum op old_op);
/* The change recorded for (dev, op, mb, stage), or NULL: for highlighting. A REMOVE is found
 * by the op it removed, a RETYPE by its new op. */
const struct pass_change *pass_changes_find(const struct pass_changes *ch, int dev, enum op op,
                                            int mb, int stage);
const char *pass_change_kind_name(enum pass_change_kind k);

/* A pass. Reads in and never changes it; *out receives a new plan owned by the caller (NULL on
 * failure) and ch what was changed (ch is cleared first). in_sim is in's simulation when the
 * caller has it, else NULL and the pass simulates in itself. When out_sim is non-NULL it
 * receives *out's simulation (caller sim_result_fini()s it). Every output is validated
 * (validate_plan_sim); passes 2-4 return a copy of in (ch->kept_input) rather than a plan that
 * is invalid or slower than in. Errors: those of simulating in; pass 1 fails with
 * MT_EINFEASIBLE when its output does not validate. */
typedef int (*pass_fn)(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                       struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e);

struct pass {
    enum pass_id id;
    const char *name;      /* short name, the row of `mario-tui optimize`: "ckpt", "overlap" */
    const char *long_name; /* the paper's: "apply-checkpoint", "overlap-recompute" */
    pass_fn run;
};

const struct pass *pass_get(enum pass_id id);
/* By short or long name (case-insensitive); NULL when unknown. */
const struct pass *pass_find(const char *name);
/* pass_get(id)->run without the simulation arguments. */
int pass_run(enum pass_id id, const struct plan *in, struct plan **out, struct pass_changes *ch,
             struct mt_err *e);

int pass_checkpoint_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                        struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e);
/* The plan a framework's activation checkpointing runs for plan in (export of a checkpointed
 * plan as torch's CSV, tui/export_launch.c): the same order of forwards and backwards with the
 * plan's recomputes taken out, and every forward checkpointed and recomputed right before its
 * backward, as Megatron-LM's --recompute-granularity full and torchtitan's mode "full" do
 * (they recompute inside the backward). *r says how the plan differs. */
struct pass_framework_ac {
    int ckpt_layers;      /* the plan's CFW layer count (IR: 0 the whole stage); 0 if mixed */
    bool mixed;           /* its CFWs checkpoint different layer counts */
    int checkpoints;      /* CFWs of the plan */
    int forwards_kept;    /* FWs it keeps whole (checkpointed by the framework) */
    int recomputes;       /* RCs of the plan */
    int recomputes_moved; /* of them, not right before their backward (the framework's place) */
};
int pass_framework_ac(const struct plan *in, struct plan **out, struct pass_framework_ac *r,
                      struct mt_err *e);
int pass_overlap_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                     struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e);
int pass_redundancy_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                        struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e);
int pass_prepose_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                     struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e);

/* ---- shared by the pass files (sim/passes/pass.c) ----------------------------------------------- */

enum pass_keep {
    PASS_KEEP_ALWAYS,     /* pass 1: adds recompute, may be slower */
    PASS_KEEP_NOT_SLOWER, /* passes 2, 3: kept unless slower than the input */
    PASS_KEEP_FASTER,     /* pass 4: kept only when faster and its peak memory is no higher
                           * (it spends checkpoint memory on devices with headroom) */
};

/* The common end of a pass. Takes ownership of cand, the rewrite of in whose changes are in
 * ch. Validates and simulates cand, then applies the policy: when cand is invalid (passes 2-4)
 * or fails the policy, *out is a copy of in, ch keeps no changes and says why. A cand without
 * changes is not simulated again when in_sim is given. */
int pass_finish(const struct plan *in, const struct sim_result *in_sim, struct plan *cand,
                enum pass_keep keep, struct plan **out, struct sim_result *out_sim,
                struct pass_changes *ch, struct mt_err *e);
/* A deep copy of a simulation result (dst is overwritten; sim_result_fini() it). */
void pass_sim_copy(struct sim_result *dst, const struct sim_result *src);
/* The highest peak memory (static + dynamic) of any device of a simulation. */
double pass_sim_peak_max(const struct sim_result *r);

/* ---- the pipeline (sim/passes/pass.c) ------------------------------------------------------------ */

/* Passes 2-4 are applied at most this many rounds (the first included). */
#define PASS_MAX_ROUNDS 4

/* The pass id of the search step (sim/search/search.h), which comes after the passes when asked for. */
#define PASS_SEARCH PASS__COUNT

struct pass_step {
    const char *name;            /* "base", then the pass's short name, "search" */
    int pass;                    /* enum pass_id; -1 for base, PASS_SEARCH for the search */
    int round;                   /* 0 for base and ckpt; 1 .. PASS_MAX_ROUNDS for passes 2-4 */
    struct plan *plan;           /* owned: the plan after this step */
    struct sim_result sim;       /* owned: its simulation */
    struct pass_changes changes; /* what this step changed (none for base) */
};

/* Every plan on the way, for the explorer's before/after view. */
struct pass_pipeline {
    int n;
    struct pass_step step[3 + 3 * PASS_MAX_ROUNDS];
    bool stopped;               /* its watch stopped it: the steps before are kept, the rest
                                 * did not run (pass_pipeline_run_watched) */
    bool searched;              /* a search step ends it (pass_pipeline_search) */
    struct search_stats search; /* what the search did */
    double search_cap;          /* the cap it searched under (0 none) */
    int offloaded;              /* forwards its plan offloads to host memory (--offload) */
    bool as_given;              /* base alone: a plan with copies (OF/RL), which the passes
                                 * and the search refuse (pass_pipeline_as_given) */
};

/* The summary rows of `mario-tui optimize`, in order. */
enum pass_row {
    PASS_ROW_BASE,
    PASS_ROW_CKPT,
    PASS_ROW_OVERLAP,
    PASS_ROW_REDUNDANCY,
    PASS_ROW_PREPOSE,
    PASS_ROW__COUNT
};
/* The row of the search step, after the passes' rows, when the pipeline has one. */
#define PASS_ROW_SEARCH PASS_ROW__COUNT

/* Runs base -> ckpt -> overlap -> redundancy -> prepose, then overlap, redundancy, prepose
 * again while a round shortens the simulated step time (at most PASS_MAX_ROUNDS rounds).
 * base is copied, not kept. It may already be checkpointed (a saved plan): pass 1 then only
 * checkpoints the forwards that keep their activations. out is zeroed on failure; errors are
 * base's (it must validate) or pass 1's. */
int pass_pipeline_run(const struct plan *base, struct pass_pipeline *out, struct mt_err *e);
/* Who watches a pipeline run: before each step after base, step(ctx, pl, next, round) with the
 * steps made so far, the short name of the pass about to run and its round (0 for ckpt); false
 * stops the pipeline there. A step takes from milliseconds to a second or more (a pass and the
 * simulation of its output: about 0.2 s at 4,096 micro-batches of GPT3-13B on 32 devices). */
struct pass_watch {
    bool (*step)(void *ctx, const struct pass_pipeline *pl, const char *next, int round);
    void *ctx;
};
/* pass_pipeline_run, watched (w may be NULL: not watched). When w stops it, MT_OK with the steps
 * made so far (base at least) and out->stopped; pass_pipeline_row then finds only those. */
int pass_pipeline_run_watched(const struct plan *base, const struct pass_watch *w,
                              struct pass_pipeline *out, struct mt_err *e);
/* pass_pipeline_run_watched for a watcher that shows the steps while the pipeline runs on
 * (the explorer): when a pass fails, the steps made before it (base at least) stay in out,
 * out->stopped, and its error is returned; nothing shown is freed under the watcher. Takes
 * ownership of base (freed when it fails before its step): the base step's plan is base itself
 * with what validating it resolved, not a copy to resolve again. */
int pass_pipeline_run_shown(struct plan *base, const struct pass_watch *w,
                            struct pass_pipeline *out, struct mt_err *e);
void pass_pipeline_fini(struct pass_pipeline *pl);
/* A pipeline of base alone, validated and simulated, with out->as_given: for a plan the passes
 * refuse (one that offloads, OF/RL), shown as it is. pass_pipeline_row finds only base. */
int pass_pipeline_as_given(const struct plan *base, struct pass_pipeline *out, struct mt_err *e);
/* Drops the search step (pass_pipeline_search), so that it can be made again with other
 * options (the explorer's offload on or off); nothing when there is none. */
void pass_pipeline_unsearch(struct pass_pipeline *pl);
/* Appends the search step (sim/search/search.h): the schedule search under o's cap, started from
 * every step of the pipeline (base first). Its plan is the pipeline's final one; never slower
 * than the best step that fits the cap. Errors: the search's (MT_EUNSUPPORTED for asynchronous
 * schemes). */
int pass_pipeline_search(struct pass_pipeline *pl, const struct search_opts *o, struct mt_err *e);
/* The changes that turn in into out (a plan of the same work), as a pass would record them: a
 * forward kept or checkpointed (RETYPE), a recompute added or dropped (INSERT, REMOVE), a
 * compute instruction at another place among its device's compute instructions (MOVE). */
void pass_changes_diff(const struct plan *in, const struct plan *out, struct pass_changes *ch);
/* The step a summary row shows: the first application of passes 1-3, for prepose the final
 * plan of the passes (after the rounds), for PASS_ROW_SEARCH the search step (NULL when none).
 * In a stopped pipeline, NULL for a pass that did not run; prepose is its last round that ran. */
const struct pass_step *pass_pipeline_row(const struct pass_pipeline *pl, enum pass_row row);
const char *pass_row_name(enum pass_row row);
const struct pass_step *pass_pipeline_final(const struct pass_pipeline *pl);

/* ---- sim/passes/pass_summary.c, sim/passes/pass_json.c: the summary `optimize` prints ---- */
/* One row of a pipeline's summary (`optimize`). */
struct pass_summary {
    const char *name;
    double step_time, throughput; /* us (t), samples/s (samples/t) */
    double lower_bound;           /* sim/core/bound.h bound_value for this plan (0: none), us (t) */
    double gap_pct;               /* step_time over lower_bound, percent */
    double mem_min, mem_max;      /* per-device peak memory: bytes (M_θ) */
    int changes;                  /* instructions the step changed */
    bool over_cap;
    int micro_batch_size, microbatches;
};

/* The lmbs variant: asked for, made, and its row. */
struct pass_lmbs {
    bool asked, made;
    char note[256]; /* why no row, or why it does not fit */
    struct pass_summary row;
};

/* The summary rows of a pipeline (rows[PASS_ROW__COUNT + 1]; the search's last when there is
 * one); the prepose row counts the changes of every round. b: the bound of the pipeline's work
 * (sim/core/bound.h; the same for every step: they differ only in order and recompute), or NULL.
 * Returns the count of rows. */
struct bound_result;
int pass_summaries(const struct pass_pipeline *pl, const struct bound_result *b,
                   struct pass_summary *rows);
/* The paper's lmbs: twice the micro-batch size, half the micro-batches, same global batch,
 * through the whole pipeline; out->note says why there is no row or why it does not fit. */
void pass_lmbs(const struct config *c, struct pass_lmbs *out);
/* The summary as JSON text, malloc'd (`optimize --json`); b as for pass_summaries; xr, the
 * exact search's answer (sim/search/search.h; may be NULL), as "exact". */
char *pass_report_json(const struct plan *p, const struct pass_pipeline *pl,
                       const struct pass_summary *rows, const struct pass_lmbs *lm,
                       const struct bound_result *b, const struct search_exact_result *xr);

#endif
