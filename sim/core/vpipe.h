/* sim/core/vpipe.h: the virtual pipeline (paper §5.2, Algorithm 1): where each (micro-batch,
 * stage) runs and what every instruction depends on. This is the only home of the
 * dependency rules: generators, passes, validator, simulator and executor all ask here. */
#ifndef MT_SIM_VPIPE_H
#define MT_SIM_VPIPE_H

#include <stdbool.h>

#include "sim/plan/plan.h"

struct mt_err;

/* Which Chimera pipeline a micro-batch takes (0 = down: device 0 -> D-1, 1 = up); 0 else. */
int vpipe_mb_part(const struct plan_geom *g, int mb);
/* Device and part that run (mb, stage). */
void vpipe_locate(const struct plan_geom *g, int mb, int stage, int *dev, int *part);
/* Stage that (dev, part) runs for micro-batch mb. */
int vpipe_stage(const struct plan_geom *g, int dev, int mb, int part);
/* Algorithm 1: the (device, part) of the previous / next stage of (dev, mb, part).
 * Returns false at the first / last stage. */
bool vpipe_find_prev(const struct plan_geom *g, int dev, int mb, int part, int *d_o, int *p_o);
bool vpipe_find_next(const struct plan_geom *g, int dev, int mb, int part, int *d_o, int *p_o);

/* A compute instruction with the messages around it, the one home of where a generator puts
 * them (receives right before the compute that needs them, sends right after the one that
 * produces them, as DeepSpeed and Megatron-LM do): a forward on dev gets RA from the previous
 * stage's device before it and SA to the next one's after it, a backward (BW, B) RG from the
 * next stage's and SG to the previous one's, wherever that stage is on another device; other
 * ops stand alone. The messages keep in's mb, part, stage and step. Writes in and its
 * messages to out in order; returns how many (1 to 3). */
#define VPIPE_WRAP_MAX 3
int vpipe_wrap(const struct plan_geom *g, int dev, struct instr in, struct instr out[VPIPE_WRAP_MAX]);
/* vpipe_wrap of each of in[0..n) in order, into out (room for VPIPE_WRAP_MAX * n); returns
 * how many were written. */
int vpipe_wrap_list(const struct plan_geom *g, int dev, const struct instr *in, int n,
                    struct instr *out);

/* Send/receive pairing, the one home of "who is on the other side" (docs/design.md): a send or
 * receive of (mb, stage) pairs with the instruction (*peer_op, mb, *peer_stage):
 *   SA(mb,s) <-> RA(mb,s+1)   (activations travel down the stages)
 *   SG(mb,s) <-> RG(mb,s-1)   (gradients travel up)
 * Returns false, leaving the outputs alone, for an op that is not a send or a receive. */
bool vpipe_peer(enum op op, int stage, enum op *peer_op, int *peer_stage);
static inline bool vpipe_is_send(enum op op) { return op == OP_SA || op == OP_SG; }
static inline bool vpipe_is_recv(enum op op) { return op == OP_RA || op == OP_RG; }
static inline bool vpipe_is_p2p(enum op op) { return vpipe_is_send(op) || vpipe_is_recv(op); }
/* The device and part that run a send's or receive's partner (vpipe_peer's (mb, stage)).
 * Returns false for an op that is not a send or a receive, or a partner stage outside the
 * pipeline. */
bool vpipe_peer_place(const struct plan_geom *g, const struct instr *in, int *dev, int *part);

/* An index from (op, mb, stage) to instruction ids over a plan, for O(1) dependencies. */
struct vpipe_index;

/* Fails (MT_EINFEASIBLE) on a duplicate instruction or one that sits on a device the
 * virtual pipeline does not place it on, naming the device and position. */
int vpipe_index_build(const struct plan *p, struct vpipe_index **out, struct mt_err *e);
void vpipe_index_free(struct vpipe_index *x);
/* Id of (op, mb, stage), -1 when absent. FW and CFW share a slot, as do BW and B. AR/OS
 * are keyed by (dev, stage): pass the device as mb; in async plans (Async, PipeDream) by
 * (mb, stage), mb being the micro-batch whose backward completes the update. */
int vpipe_lookup(const struct vpipe_index *x, enum op op, int mb, int stage);

/* What the index holds of (mb, stage) at once: the ids of its forward (FW or CFW), backward
 * (BW or B), RC, W, OF, RL and messages (vpipe_lookup of each, -1 when absent), and the device
 * that runs it (vpipe_locate's). The validator reads every (mb, stage) of a plan. */
struct vpipe_cell {
    int fwd, bwd, rc, w, of, rl;
    int sa, ra, sg, rg;
    int dev;
};
void vpipe_lookup_cell(const struct vpipe_index *x, int mb, int stage, struct vpipe_cell *out);

/* Id of the instruction that send/receive `id` pairs with (vpipe_peer); -1 when `id` is not
 * a send or a receive, or its partner is absent from the plan. */
int vpipe_partner(const struct plan *p, const struct vpipe_index *x, int id);
/* The same for instruction in itself. */
int vpipe_partner_of(const struct vpipe_index *x, const struct instr *in);

#define VPIPE_MAX_DEPS 4

/* A dependency the plan lacks: what the instruction needed. */
struct vpipe_missing {
    enum op op;
    int mb, stage, dev;
};

/* The instructions that must finish before instruction `id` may start (docs/design.md):
 *   FW/CFW(mb,s): RA(mb,s) when stage s-1 is on another device, else the forward of s-1;
 *     async plans: also OS(j,s), the last update before it in the 1F1B order (j + 1 the
 *     largest multiple of U up to mb - (D-1-s)), so a rewrite never makes a stage staler;
 *   SA(mb,s): the forward of (mb,s);  RA(mb,s): SA(mb,s-1);
 *   RC(mb,s): CFW(mb,s);  BW/B(mb,s): the forward, RC when checkpointed, and RG(mb,s) or
 *   the backward of s+1;  W: B;  SG(mb,s): the backward;  RG(mb,s): SG(mb,s+1);
 *   OS: the AR of its stage when there is one; async: also the backward (W) of its mb.
 *   OF(mb,s): its FW;  RL(mb,s): OF(mb,s);  BW/B(mb,s) of an offloaded forward: RL(mb,s).
 *   AR also waits for its replicas (a collective, see vpipe_ar_group). Program order on a
 *   device is implied, not listed, and so is the order of each copy lane (a device's OFs
 *   run one at a time in list order, its RLs likewise: sim/core/simulate.c).
 * Returns the count written to deps; -1 when a required instruction is absent (*miss says
 * which) or a checkpointed forward has no recompute. */
int vpipe_deps(const struct plan *p, const struct vpipe_index *x, int id,
               int deps[VPIPE_MAX_DEPS], struct vpipe_missing *miss);
/* The same for the instruction at position pos of device dev. */
int vpipe_deps_at(const struct plan *p, const struct vpipe_index *x, int dev, int pos,
                  int deps[VPIPE_MAX_DEPS], struct vpipe_missing *miss);
/* The same for instruction in, on device dev of a plan of geometry g (the simulator's hot path:
 * no lookup of the instruction). */
int vpipe_deps_of(const struct plan_geom *g, const struct vpipe_index *x, const struct instr *in,
                  int dev, int deps[VPIPE_MAX_DEPS], struct vpipe_missing *miss);
/* The dependencies of every instruction of p at once, in id order (the simulator's hot path):
 * those of id in deps[off[id] .. off[id + 1]); off holds plan_total(p) + 1 entries, deps
 * VPIPE_MAX_DEPS per instruction. Returns -1, or the id of the first instruction (in id order)
 * whose dependency is missing (vpipe_deps_of's -1; the arrays are then partly filled). */
int vpipe_deps_all(const struct plan *p, const struct vpipe_index *x, int *off, int *deps);
/* A plan's index and every instruction's dependencies (vpipe_deps_all), resolved once and
 * kept with the plan until it changes (sim/plan/plan.h plan_cache_get): the validator, the
 * simulator and the passes share one resolution, and a plan simulated again reuses it.
 * Read-only; valid until the plan changes or is freed. */
struct vpipe_resolved {
    struct plan_cache base;
    struct vpipe_index *x;
    int *off, *deps; /* vpipe_deps_all's CSR; NULL when a dependency is missing */
    int missing;     /* the first instruction (id) missing one (vpipe_deps_of says which), or -1 */
};
/* The resolution of p, built at the first call. Fails (nothing kept) as vpipe_index_build. */
int vpipe_resolve(const struct plan *p, const struct vpipe_resolved **out, struct mt_err *e);
/* The AR instructions that reduce the same stage as AR `id` (itself included). */
int vpipe_ar_group(const struct plan *p, const struct vpipe_index *x, int id, int *ids, int max);

#endif
