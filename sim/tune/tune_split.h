/* sim/tune/tune_split.h: the layer split the tuner searches (issue 39 item 2): contiguous layers
 * over the stages with the slowest stage as fast as can be and every stage under the memory
 * cap, the partitioning step of AdaPipe (Sun et al., ASPLOS'24), over plain arrays so that any
 * cost model's per-layer figures can feed it. */
#ifndef MT_SIM_TUNE_SPLIT_H
#define MT_SIM_TUNE_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct mt_err;

#define TUNE_SPLIT_MAX_LAYERS 1024 /* the search is O(stages x layers^2) */
#define TUNE_SPLIT_MAX_STAGES 1024

/* The peak bytes of stage `stage` (0-based, model order) holding layers [first, first + n),
 * the embedding when stage == 0 and the head when it is the last: it may depend on the stage
 * (1F1B keeps pp - stage micro-batches in flight). */
typedef double (*tune_split_bytes_fn)(void *ctx, int stage, int first, int n);

struct tune_split_problem {
    int num_layers, num_stages;
    const double *layer_us;    /* [num_layers] one layer's time (forward + backward, one mb) */
    double embed_us, head_us;  /* what the first stage and the last add to their layers' */
    tune_split_bytes_fn bytes; /* NULL: memory is not checked */
    void *ctx;
    double cap_bytes;          /* 0: no cap */
    int min_layers;            /* fewest layers a stage holds: 1, or 0 to allow empty stages
                                * (Megatron's layouts allow them: "E|t*8|t*8|L") */
};

/* The split of p's layers into layers_out[num_stages] that makes the slowest stage (its
 * layers' times, + embed_us on the first, + head_us on the last) the fastest any split can,
 * every stage within the cap; among those, the one with the least sum of squared stage times
 * (the most even; ties to the split that puts layers on the earlier stages). *slowest_us gets
 * that slowest stage's time. MT_EINFEASIBLE when no split fits the cap; MT_EINVAL for sizes out
 * of range (TUNE_SPLIT_MAX_*) or times that are not finite and >= 0. */
int tune_split_balance(const struct tune_split_problem *p, int *layers_out, double *slowest_us,
                       struct mt_err *e);

/* The split as Megatron's --pipeline-model-parallel-layout string (E on the first stage, L on
 * the last; model/stage_split.h pp_layout_write) into buf of n bytes. MT_EINVAL if too long. */
int tune_split_layout(const int *layers, int num_stages, char *buf, size_t n, struct mt_err *e);

/* ---- the tuner's use of it (tune --search-split) ------------------------------------------------
 * The split proposed for config c whose pipeline has num_stages stages (pp x stages a device) of
 * which each device holds one (parts 1: 1F1B-like, the memory checked by in-flight micro-batches)
 * or several (memory left to the simulation that judges the split). The figures come from the
 * cost model itself: one build of four probe stages ("E|t|t*2|t*(L-3)L") gives a block's forward
 * + backward time, the embedding's and the head's over it, and the same for the kept and static
 * bytes (every figure is linear in the blocks a stage holds). 1F1B's stage s keeps
 * min(pp - s, micro-batches) forwards (GPipe: all of them) beside its static bytes; with
 * check_memory false, or checkpointing on, the cap is left to the simulation. Writes the
 * layout string (tune_split_layout) into buf and sets *changed when it differs from the split the
 * config makes today. MT_EUNSUPPORTED naming why when the model cannot be split this way (unit
 * costs, a calibration, a split already given, a mixture of experts, fewer than 4 layers). */
int tune_split_propose(const struct config *c, int num_stages, bool check_memory, char *buf,
                       size_t n, bool *changed, struct mt_err *e);

#endif
