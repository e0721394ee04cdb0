/* tui/export_launch.h: a plan written as the launch that runs it (export --format, tune --emit;
 * the text from model/launch.h's writers, the plan's checkpointing checked here since only a
 * plan says where its recomputes are). */
#ifndef MT_TUI_EXPORT_LAUNCH_H
#define MT_TUI_EXPORT_LAUNCH_H

#include <stdbool.h>

#include "model/launch.h"
#include "model/config.h"
#include "sim/passes/pass.h"

struct cmd_plan;
struct plan;

/* `export --format K`: the plan of cp (with rows/search: the last pass step asked for) to out
 * (NULL or "-": stdout). Returns the exit status: 0, 1 a plan the framework cannot run (what
 * is missing and the nearest it runs, with both simulated steps) or a file not written, 2
 * bad input. */
int export_launch(enum launch_kind k, const struct cmd_plan *cp, bool passes,
                  const bool rows[PASS_ROW__COUNT], bool search, const char *out);
/* The launch of plan p (its recompute rc: none, or full after apply-checkpoint) to out, a
 * torchtitan schedule CSV beside it where needed. cmd names the command in messages. Returns
 * the exit status as export_launch. */
int export_launch_plan(const char *cmd, enum launch_kind k, const struct plan *p,
                       enum launch_recompute rc, const char *out);

/* `export -o FILE.json|.csv`: the plan (plan_save), and a checkpointed plan as torch's CSV: the
 * order with each checkpointed forward as F and no recompute, and on stdout the activation
 * checkpointing settings torchtitan and Megatron-LM take for it, how that differs from the
 * plan's recomputes, and both simulated steps (*said: that was printed). */
int export_launch_plan_file(const struct plan *p, const char *path, bool *said,
                            struct mt_err *e);

/* `tune --emit K`: the best candidate of r the framework runs (the best of all when it can;
 * else said on stderr, with both throughputs), its launch to out. Returns the exit status. */
struct tune_result;
struct tune_opts;
int export_launch_tune(enum launch_kind k, const struct config *base, const struct tune_result *r,
                       const struct tune_opts *o, const char *out);

#endif
