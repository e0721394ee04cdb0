/* sim/plan/footprint.h: the memory a command will take for a plan of a given size, estimated
 * before anything is built, so that a plan too big for this machine is refused up front with
 * the figure instead of being killed by the kernel minutes in (issue 41 item 9: Mario's
 * passes, the search, the explorer and the tuner ran out of memory at 11-13 GB on the largest
 * plan the tool accepts, 4,096 devices x 1,024 micro-batches).
 *
 * The estimate is linear in the plan's cells (micro-batch x stage pairs): every structure a
 * command keeps - the instructions, their simulated times and memory, the passes' steps, the
 * search's candidates - holds a fixed number of entries per cell. The bytes per cell are
 * measured (peak RSS less the program's own at start, /usr/bin/time -f %M, tiny model,
 * 256 x 256 and 512 x 256 cells, two threads): simulate 0.94 KiB, optimize and the explorer
 * 3.7-3.9 KiB, the search 4.8 KiB, the tuner 16 KiB a worker thread; the figures below round
 * them up. At 4,096 x 1,024 cells they give simulate 4.0 GiB (measured 3.75 GB). */
#ifndef MT_SIM_FOOTPRINT_H
#define MT_SIM_FOOTPRINT_H

#include <stdbool.h>

struct config;
struct plan;
struct plan_geom;
struct mt_err;

enum footprint_use {
    FOOTPRINT_SIMULATE, /* build and simulate one plan (simulate, export, compare) */
    FOOTPRINT_PASSES,   /* Mario's passes: each step kept (optimize, export --passes, explore) */
    FOOTPRINT_SEARCH,   /* the passes and the schedule search (--search) */
    FOOTPRINT_TUNE,     /* the tuner: a candidate's passes and search on each worker thread */
};

/* Bytes per cell of each use (for the tuner, per worker thread). */
double footprint_cell_bytes(enum footprint_use u);
/* The bytes use u takes for a plan of geometry g (threads: the tuner's workers, else 1). */
double footprint_bytes(const struct plan_geom *g, enum footprint_use u, int threads);
/* MT_ENOMEM when footprint_bytes is over what this process may still allocate
 * (util/sysmem.h), naming both figures, the plan's size and the use; MT_OK otherwise, and
 * when the memory left cannot be read. g: the plan's (scheme_geom of its config). */
int footprint_check(const struct plan_geom *g, enum footprint_use u, int threads,
                    struct mt_err *e);
/* footprint_check from a config (its scheme_geom); MT_OK when the geometry is refused (the
 * caller's validation names that). */
int footprint_check_config(const struct config *c, enum footprint_use u, int threads,
                           struct mt_err *e);
/* The host memory `mario-tui run` on the CPU backend takes at least, all ranks on one host:
 * each stage's weights, gradients and AdamW state and one micro-batch's activations in the
 * executor's own byte model (model/cost.h cost_stage_bytes_exec, fp32), times dp. */
double footprint_run_host_bytes(const struct plan *p);
/* MT_ENOMEM when footprint_run_host_bytes is over the memory left, with both figures. */
int footprint_check_run(const struct plan *p, struct mt_err *e);

#endif
