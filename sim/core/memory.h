/* sim/core/memory.h: the memory model (docs/design.md "Simulator semantics"), its one home: what each
 * instruction takes at its start, gives back at its end and leaves behind, what a checkpoint
 * of k layers keeps, and the walk of a device's list in program order. The simulator, the
 * passes, the input-aware planner (sim/inputs/ckpt_plan.c) and the direct Async path all ask here.
 * Byte counts per stage come from model/cost.h (struct stage_cost); this file only says which
 * of them an op holds and when. The per-instruction rules are static inline: the simulator
 * calls them once per instruction on its hot path. */
#ifndef MT_SIM_MEMORY_H
#define MT_SIM_MEMORY_H

#include <math.h>
#include <stdbool.h>

#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/core/vpipe.h"

/* fmax as libm computes it (a > b ? a : b, the other one where one is a NaN), inlined: the
 * walk takes one per instruction, and a libm call there cost more than the rest of the step. */
static inline double mem_max(double a, double b)
{
    if (b != b)
        return a;
    return a > b ? a : b;
}

/* What a CFW with ckpt_layers = k keeps of its stage of n layers (the IR's meaning, sim/plan/plan.h:
 * k = 0 or k >= n is the whole stage, the checkpoint alone): the other n - k layers'
 * activations and sel_ckpt (model/cost.h: the input of the k layers; for the executor's model,
 * whose act counts the stage input, the input of layer k). Its RC restores the rest, so FW and
 * CFW + RC peak alike after the RC. */
static inline double mem_ckpt_keep(const struct stage_cost *sc, int k)
{
    if (k <= 0 || k >= sc->num_layers || !(sc->layer_act > 0))
        return sc->ckpt;
    double keep = sc->act - k * sc->layer_act + sc->sel_ckpt;
    return keep < sc->ckpt ? sc->ckpt : keep > sc->act ? sc->act : keep;
}

/* The IR's ckpt_layers for a CFW that checkpoints `layers` (>= 1) of its stage's n layers:
 * 0 when it is all of them (sim/plan/plan.h). */
static inline int mem_ckpt_layers(int layers, int n)
{
    return layers >= n ? 0 : layers;
}

/* What a forward of the stage keeps with `layers` of its n layers checkpointed, the count the
 * input-aware planner chooses (0: none, a FW; n: all): mem_ckpt_keep in the IR's terms. */
static inline double mem_forward_keep(const struct stage_cost *sc, int layers)
{
    return layers <= 0 ? sc->act : mem_ckpt_keep(sc, mem_ckpt_layers(layers, sc->num_layers));
}

/* What a checkpoint of k layers saves (the IR's ckpt_layers: 0 the whole stage): the
 * activations its forward does not keep until its recompute (act - mem_ckpt_keep). The search's
 * list schedules, its branch and bound and the lower bound (sim/core/bound.c) ask here. */
static inline double mem_ckpt_saves(const struct stage_cost *sc, int k)
{
    return sc->act - mem_ckpt_keep(sc, k);
}

/* Dynamic memory an instruction takes at its start and gives back at its end, with the
 * message buffers an executor holds (model/cost.h msg_bytes): a forward of a stage that is
 * not the last takes the buffer of its output, a backward of a stage that is not the first the
 * buffer of its input gradient; a receive takes the buffer it receives into, and the forward
 * (backward) that consumes it gives it back at its end, as does the next stage's forward
 * (backward) on the same device. A send's buffer is reaped, not given back by the send
 * itself: the executor frees a finished send's buffer between instructions, so it goes right
 * after the end of the instruction after the send (mem_device_steps). Split backward: B takes
 * what its W will need (the weight GEMMs' inputs and output gradients, w_keep) and frees the
 * activations at its end; W frees w_keep. Offload: OF gives its FW's activations back at its
 * end (they stay on the device while the copy runs), RL takes them again at its start. A
 * copy runs on its lane beside the device's list, so its end (start) falls between later
 * instructions': the simulator walks them at their times (mem_device_walk_timed); the walks
 * in program order (mem_device_peak, the passes and the search) count them at their place in
 * the list, as if each copy were done when the device reaches it.
 *
 * The rule itself is mem_rule, in counts of its stage's byte figures, so that a walk can
 * carry counts (the input-aware planner's profile, sim/inputs/ckpt_plan.c, whose keep varies with
 * the choice of k) as well as bytes (mem_step). */
struct mem_terms {
    signed char keep;  /* what its forward keeps: mem_ckpt_keep */
    signed char act;   /* the stage's full activations */
    signed char msg;   /* message buffers */
    signed char wkeep; /* split backward: what B leaves for W (model/cost.h w_keep) */
};
struct mem_rule {
    struct mem_terms take, give; /* at the start, at the end */
};

static inline struct mem_rule mem_rule(enum op op, bool first, bool last)
{
    signed char in = !first, out = !last; /* the stage has an input (output) buffer */
    switch (op) {
    case OP_FW: return (struct mem_rule){{0, 1, out, 0}, {0, 0, in, 0}};
    case OP_CFW: return (struct mem_rule){{1, 0, out, 0}, {0, 0, in, 0}};
    case OP_RC: return (struct mem_rule){{-1, 1, 0, 0}, {0, 0, 0, 0}};
    case OP_BW: return (struct mem_rule){{0, 0, in, 0}, {0, 1, out, 0}};
    case OP_B: return (struct mem_rule){{0, 0, in, 1}, {0, 1, out, 0}};
    case OP_W: return (struct mem_rule){{0, 0, 0, 0}, {0, 0, 0, 1}};
    case OP_OF: return (struct mem_rule){{0, 0, 0, 0}, {0, 1, 0, 0}};
    case OP_RL: return (struct mem_rule){{0, 1, 0, 0}, {0, 0, 0, 0}};
    case OP_RA:
    case OP_RG: return (struct mem_rule){{0, 0, 1, 0}, {0, 0, 0, 0}};
    default: return (struct mem_rule){{0, 0, 0, 0}, {0, 0, 0, 0}};
    }
}

/* Bytes of t: keep, act, msg and wkeep summed in that order, terms of count 0 left out. */
static inline double mem_terms_bytes(struct mem_terms t, double keep, double act, double msg,
                                     double wkeep)
{
    double v = 0;
    if (t.keep != 0)
        v += t.keep * keep;
    if (t.act != 0)
        v += t.act * act;
    if (t.msg != 0)
        v += t.msg * msg;
    if (t.wkeep != 0)
        v += t.wkeep * wkeep;
    return v;
}

struct mem_step {
    double take, give; /* at the start, at the end */
    double reap;       /* right after the end: the previous instruction's send buffer */
};

static inline struct mem_step mem_step(const struct cost_model *cost, const struct instr *in)
{
    const struct stage_cost *sc = &cost->stage[in->stage];
    struct mem_rule r = mem_rule(in->op, in->stage == 0, in->stage == cost->num_stages - 1);
    double keep = r.take.keep != 0 ? mem_ckpt_keep(sc, in->ckpt_layers) : 0;
    return (struct mem_step){mem_terms_bytes(r.take, keep, sc->act, sc->msg_bytes, sc->w_keep),
                             mem_terms_bytes(r.give, keep, sc->act, sc->msg_bytes, sc->w_keep),
                             0};
}

/* The buffer a send leaves behind, reaped by the instruction after it; 0 for any other. */
static inline double mem_send_buffer(const struct cost_model *cost, const struct instr *in)
{
    return vpipe_is_send(in->op) ? cost->stage[in->stage].msg_bytes : 0;
}

/* The step of the next instruction of a device's list in program order: mem_step with the
 * buffer of the send before it (*pending) reaped after it; *pending becomes its own. A copy
 * (OF, RL) does not hold the device: the buffer waits for the instruction after it. */
static inline struct mem_step mem_step_next(const struct cost_model *cost,
                                            const struct instr *in, double *pending)
{
    struct mem_step m = mem_step(cost, in);
    if (plan_op_is_copy(in->op))
        return m;
    m.reap = *pending;
    *pending = mem_send_buffer(cost, in);
    return m;
}

/* A stashed weight version (PipeDream, sim/core/async.h) keeps the stage's fp16 weights, the copy
 * its forward read: 2 bytes per parameter (per tp rank); gradients and optimizer state are not
 * versioned. Under unit costs a copy is 0 bytes (static memory is 0): versions still count. */
#define MEM_STASH_BYTES_PER_PARAM 2.0

static inline double mem_stash_copy_bytes(const struct cost_model *cost, int stage)
{
    return cost->unit ? 0 : cost->stage[stage].params * MEM_STASH_BYTES_PER_PARAM;
}

/* Adds a change of stashed bytes to an instruction's step (async_walk_step's answer): a copy
 * kept (> 0) is taken at its start (the OS that replaces the version), one released (< 0) is
 * given back at its end (the backward of the last micro-batch that read it). */
static inline void mem_step_add_stash(struct mem_step *m, double stash)
{
    if (stash > 0)
        m->take += stash;
    else
        m->give -= stash;
}

/* The most memory `in` is seen to hold while it runs, from cur (what the device held before
 * it) and m (what it takes and gives back): the calibrated transients of model/cost.h. A FW's
 * is over what it leaves held at its end (before the reap of a send's buffer); a CFW's and a
 * BW's over what was held before it; a B's over what it took (its W's buffer), a W's none.
 * In two parts, for a walk that meets one (stage, op) many times: the form (which sum, and
 * its constant) depends on the op, its stage's bytes and m; the value on cur. */
enum mem_transient_kind {
    MEM_TRANSIENT_ADD, /* cur + add */
    MEM_TRANSIENT_FW,  /* cur + take - give + add */
    MEM_TRANSIENT_B,   /* cur + take + add */
};

struct mem_transient_form {
    enum mem_transient_kind kind;
    double add;
};

static inline struct mem_transient_form mem_transient_form(const struct cost_model *cost,
                                                           const struct instr *in,
                                                           struct mem_step m)
{
    const struct stage_cost *sc = &cost->stage[in->stage];
    switch (in->op) {
    case OP_FW: return (struct mem_transient_form){MEM_TRANSIENT_FW, sc->fw_work_bytes};
    case OP_CFW:
        return (struct mem_transient_form){MEM_TRANSIENT_ADD, mem_max(m.take, sc->cfw_peak_bytes)};
    case OP_BW:
        return (struct mem_transient_form){MEM_TRANSIENT_ADD, mem_max(m.take, sc->bw_work_bytes)};
    case OP_B: /* its scratch over the W buffer it took */
        return (struct mem_transient_form){MEM_TRANSIENT_B, sc->bw_work_bytes};
    default: /* W adds into the gradients in place */
        return (struct mem_transient_form){MEM_TRANSIENT_ADD, m.take};
    }
}

static inline double mem_transient_at(struct mem_transient_form t, double cur, struct mem_step m)
{
    switch (t.kind) {
    case MEM_TRANSIENT_FW: return cur + m.take - m.give + t.add;
    case MEM_TRANSIENT_B: return cur + m.take + t.add;
    default: return cur + t.add;
    }
}

static inline double mem_transient(const struct cost_model *cost, const struct instr *in,
                                   double cur, struct mem_step m)
{
    return mem_transient_at(mem_transient_form(cost, in, m), cur, m);
}

/* A device's memory walk in program order (sim_memory, and sim_run_direct's blocks): what is
 * held now, its highest, and the highest with the transients of running instructions. */
struct mem_walk {
    double cur, peak, top;
};

/* Walks one instruction whose transient has form t (mem_transient_form): its transient, then
 * take, give and reap in that order; held[] gets what is held after each (the memory curve's
 * points). Float drift that leaves a tiny residue after everything was given back is set to 0
 * afterwards (held[2] keeps the residue). */
static inline void mem_walk_step_form(struct mem_transient_form t, struct mem_step m,
                                      struct mem_walk *w, double held[3])
{
    w->top = mem_max(w->top, mem_transient_at(t, w->cur, m));
    if (m.take != 0) {
        w->cur += m.take;
        if (w->cur > w->peak)
            w->peak = w->cur;
    }
    held[0] = w->cur;
    if (m.give != 0)
        w->cur -= m.give;
    held[1] = w->cur;
    if (m.reap != 0)
        w->cur -= m.reap;
    held[2] = w->cur;
    if (fabs(w->cur) < 1e-9 * (w->peak > 1 ? w->peak : 1))
        w->cur = 0;
}

/* The same for instruction in. */
static inline void mem_walk_step(const struct cost_model *cost, const struct instr *in,
                                 struct mem_step m, struct mem_walk *w, double held[3])
{
    mem_walk_step_form(mem_transient_form(cost, in, m), m, w, held);
}

/* The steps of one device's list (out[len]): a send's buffer reaped by the instruction after
 * it (the last instruction reaps what is left: the end of a step waits for every send). */
void mem_device_steps(const struct cost_model *cost, const struct instr *list, int len,
                      struct mem_step *out);
/* What each instruction of one device's list takes at its start (take[len]) and gives back
 * by its end (give[len], the reaped send buffers included). Bytes (M_theta with unit costs). */
void mem_device_take_give(const struct cost_model *cost, const struct instr *list, int len,
                          double *take, double *give);
/* The dynamic peak of one device's list (what sim_run reports as peak_dynamic, stashed weight
 * versions of asynchronous plans left out): it depends on the order of the list, not on
 * times. */
double mem_device_peak(const struct cost_model *cost, const struct instr *list, int len);

/* Offload (OF/RL, sim/plan/plan.h) on a device's copy lanes. Whether the list holds a copy. */
bool mem_list_has_copy(const struct instr *list, int len);
/* A device's memory curve as the simulator reports it (struct sim_device). */
struct mem_curve {
    double static_mem;
    double *t, *mem; /* room for 3 len + 2 points */
    int n;           /* points written (the first, static_mem at 0, by the caller) */
};
/* The walk of a list holding copies, at the times of a run (start[i], end[i] of list[i]):
 * every other instruction as mem_walk_step in program order, each OF's release at its end and
 * each RL's take at its start merged in by time (an event at an instruction's start goes
 * before it; one inside it between its take and its give). steps: mem_device_steps (stashed
 * versions added). Writes w, the curve and mem_after[i] (held after list[i] in program order,
 * static_mem included). */
void mem_device_walk_timed(const struct cost_model *cost, const struct instr *list, int len,
                           const double *start, const double *end, const struct mem_step *steps,
                           struct mem_walk *w, struct mem_curve *c, double *mem_after);
/* The most host memory the device's offloaded activations hold at once: each OF takes its
 * FW's act at its start, its RL gives it back at its end (an OF without an RL keeps it). */
double mem_device_host_peak(const struct cost_model *cost, const struct instr *list, int len,
                            const double *start, const double *end);

#endif
