/* sim/core/async.h: the figures of asynchronous pipelines (PipeMare, Yang et al., MLSys'21;
 * docs/design.md "The two related systems"), which the simulator computes for every plan:
 * each stage's weight staleness, PipeDream's stashed weight versions, and utilization over the
 * makespan and over the steady state. Synchronous plans get staleness 0 and a steady state
 * equal to their one iteration. */
#ifndef MT_SIM_ASYNC_H
#define MT_SIM_ASYNC_H

#include <stdbool.h>

#include "sim/plan/plan.h"

struct cost_model;
struct sim_result;
struct sim_device;

/* A walk over each device's list in program order (the simulator's memory walk). For each
 * stage it counts the updates (OS) between a micro-batch's forward (FW/CFW) and its backward
 * (BW/B): the staleness. When the scheme stashes weights (PipeDream) it also tracks which
 * weight versions micro-batches in flight still need: an OS that replaces a version some
 * micro-batch in flight read keeps that version as a copy (its bytes: sim/core/memory.h
 * mem_stash_copy_bytes), and the backward of the last micro-batch that read it gives the copy
 * back. */
struct async_walk;

struct async_walk *async_walk_new(const struct plan *p, const struct cost_model *cost);
void async_walk_free(struct async_walk *w);
/* Starts device dev's list. */
void async_walk_device(struct async_walk *w, int dev);
/* Steps over the device's next instruction. Returns the change of stashed bytes it makes:
 * > 0 taken at its start (an OS keeping the version it replaces), < 0 given back at its end
 * (a backward releasing an old version), 0 otherwise or when nothing is stashed. */
double async_walk_step(struct async_walk *w, const struct instr *in);
/* Ends the device: its most stashed bytes and versions into dv. */
void async_walk_device_end(struct async_walk *w, struct sim_device *dv);
/* The staleness of every stage into r (r->stages, r->staleness; r owns the array). */
void async_walk_finish(struct async_walk *w, struct sim_result *r);

/* The training's own work: compute, allreduce and optimizer step, but not recompute, which
 * repeats a forward (busy, yet no progress). */
static inline bool async_is_work(enum op op)
{
    return (plan_op_is_compute(op) && op != OP_RC) || op == OP_AR || op == OP_OS;
}

/* Utilization from r's timeline: work (busy time less recompute) over device time, per device
 * (dv->work, dv->steady_work) and in all, over the makespan (r->utilization) and inside the
 * steady-state window (r->steady_t0 .. r->steady_t1, see simulate.h). */
void async_utilization(const struct plan *p, struct sim_result *r);
/* The totals of the above from each device's work and steady_work and r's window (the
 * simulator's fast path sums those as it goes). */
void async_utilization_totals(struct sim_result *r);

#endif
