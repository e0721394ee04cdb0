/* sim/schemes/scheme.h: scheme generators, one file each (scheme_*.c), one per scheme record of
 * model/scheme_registry.h (which says everything else about a scheme). A generator orders the compute instructions (FW, BW) of every device; scheme_build then
 * completes the procedure with SA/RA/SG/RG around them and AR/OS at the end (§5.1). */
#ifndef MT_SIM_SCHEME_H
#define MT_SIM_SCHEME_H

#include "model/config.h"
#include "sim/plan/plan.h"

struct cost_model;
struct mt_err;

/* Appends the compute order of every device to an empty plan. */
typedef int (*scheme_order_fn)(struct plan *p, const struct cost_model *cost, struct mt_err *e);

/* Plans larger than this many (micro-batch, stage) pairs are refused before allocating. */
#define SCHEME_MAX_CELLS (1 << 22)

/* The generator of scheme id, or NULL for Auto (the tuner resolves it) and ids out of range. */
scheme_order_fn scheme_generator(enum scheme_id id);
/* The geometry a config asks for (validates the config first). */
int scheme_geom(const struct config *c, struct plan_geom *g, struct mt_err *e);
/* The per-stage costs for a config's geometry. Caller owns *out (cost_model_fini). */
int scheme_costs(const struct config *c, struct cost_model *out, struct mt_err *e);
/* Validates c, builds the baseline plan of its scheme (no checkpointing). Auto is refused
 * here: the tuner resolves it. *out is owned by the caller. */
int scheme_build(const struct config *c, struct plan **out, struct mt_err *e);
/* Inserts SA/RA before/after the forwards and SG/RG around the backwards where the
 * neighbouring stage sits on another device, each device's receives in their senders' order
 * (sim/core/recv_order.h), then AR (replicated stages) and OS. Exposed so
 * that plan loaders and tests can complete a compute-only order. */
void scheme_add_comm(struct plan *p);

int scheme_order_1f1b(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_gpipe(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_chimera(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_interleaved(struct plan *p, const struct cost_model *cost, struct mt_err *e);
/* The zero-bubble family (split backward: B then W). sim/schemes/scheme_zb.c: ZB-H1, ZB-H2 (one
 * stage per device, the authors' greedy); two stages per device in a V: sim/schemes/scheme_zbv_authors.c
 * ZB-V (the authors' zbv.py), sim/schemes/scheme_zbv.c torch's ZBVZeroBubble and DualPipeV,
 * sim/schemes/scheme_zbv_greedy.c V-Half and V-Min (arXiv 2405.15362); sim/schemes/scheme_zbw.c: ZB-W (chunks,
 * looped). */
int scheme_order_zbh1(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_zbh2(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_zbv(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_zbv_torch(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_vhalf(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_vmin(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_dualpipev(struct plan *p, const struct cost_model *cost, struct mt_err *e);
/* DualPipe (sim/schemes/scheme_zbv.c): both directions over Chimera's placement. */
int scheme_order_dualpipe(struct plan *p, const struct cost_model *cost, struct mt_err *e);
int scheme_order_zbw(struct plan *p, const struct cost_model *cost, struct mt_err *e);
/* Async and PipeDream (sim/schemes/scheme_async.c): 1F1B over the K x N micro-batches of K
 * iterations, no flush between them. */
int scheme_order_async(struct plan *p, const struct cost_model *cost, struct mt_err *e);
/* scheme_add_comm for async plans, in one sweep per device: the same sends and receives, and
 * on each stage an OS (after an AR when dp > 1) after every U-th backward and the last one. */
void scheme_async_add_comm(struct plan *p);

#endif
