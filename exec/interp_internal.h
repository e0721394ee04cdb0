/* exec/interp_internal.h: a running rank's state, shared by the interpreter (exec/interp.c)
 * and its weight versions for asynchronous plans (exec/interp_weights.c). Not part of the
 * executor's interface: exec/interp.h is. */
#ifndef MT_EXEC_INTERP_INTERNAL_H
#define MT_EXEC_INTERP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "exec/backend.h"
#include "exec/capture.h"
#include "exec/comm.h"
#include "exec/dataset.h"
#include "exec/interp.h"
#include "model/config.h"
#include "sim/plan/plan.h"

/* A weight version of a stage read by micro-batches in flight (PipeDream). */
struct interp_version {
    int ver;      /* the stage's update count when its forwards read it */
    int refs;     /* micro-batches in flight that read it */
    float *buf;   /* its stashed copy once an OS replaced it; NULL while it is current */
    size_t bytes; /* what the copy added to the allocator's count */
};

struct interp_part {
    int part, stage;
    int first, n; /* global layers [first, first + n) */
    bool is_first, is_last;
    void *st;                    /* backend stage */
    int t;                       /* optimizer steps taken: the weight version */
    bool zero_pending;           /* an OS ran: zero the gradients before the next backward */
    int tau;                     /* staleness of the stage in the plan (largest delay) */
    float gamma;                 /* T2: the velocity's decay D^(1/tau) */
    float *velocity;             /* T2 (tau >= 1): backend memory, nparams floats */
    struct interp_version *vers; /* PipeDream: versions read by micro-batches in flight */
    int nvers, cap_vers;
    double static_bytes; /* what stage_create took */
};

struct interp_send {
    struct comm_req *req;
    float *buf;  /* backend buffer, freed on completion */
    float *host; /* host staging copy (device backends over MPI), or NULL */
};

/* Offload's state of one (mb, stage) (exec/interp_offload.c). */
enum interp_copy_state {
    INTERP_COPY_NONE, /* on the device, no copy */
    INTERP_COPY_OUT,  /* OF copying to host; the device blocks still held */
    INTERP_COPY_AWAY, /* on the host only */
    INTERP_COPY_IN    /* RL copying back into device blocks taken at its start */
};

struct interp_copy {
    enum interp_copy_state state;
    void *rec; /* the backend's record (exec/backend.h copy_*) from OF until RL ends */
};

struct interp {
    const struct plan *p;
    const struct plan_geom *g;
    const struct backend_ops *b;
    struct comm *cm;
    struct capture *cap;
    const struct interp_opts *o;
    struct dataset *ds;
    int rank, dev, dpr, pp, dp, S, N, B, T, C;
    int K, Nit; /* iterations the plan spans, micro-batches per iteration (K x Nit = N) */
    bool async; /* Async or PipeDream */
    bool stash; /* PipeDream: RC and BW read the forward's weight version */
    size_t nc;  /* floats of one hidden-state tensor: B * T * C */
    int nparts;
    struct interp_part part[CONFIG_MAX_CHUNKS];
    int *part_of_stage;               /* [S]: index into part[], -1 when not held */
    void **act;                       /* [N * S] */
    void **wk;                        /* [N * S]: split backward, what a B left for its W */
    float **out, **in, **dout, **din; /* [N * S] */
    int *ver;                         /* [N * S]: weight version FW/CFW read */
    struct interp_send *sends;
    int nsends, cap_sends;
    struct interp_copy *copy; /* [N * S] offload (OF/RL); NULL when the plan has no copy */
    int ncopies;              /* copies in flight */
    int *tokens, *targets; /* host, B * T */
    float *stage_host;     /* host staging for one message (device backends over MPI) */
    bool staged;
    double *loss_sum;             /* [K]: this rank's losses of each iteration of the current run */
    int step;                     /* the current run of the plan (a synchronous plan's step) */
    double stash_now, stash_peak; /* PipeDream's stashed copies, bytes */
    int stashed, max_stashed;
    double correction_bytes; /* T2's velocities */
    /* What the step measures (struct interp_measure; the header's "Measuring") */
    struct interp_stage_bytes *sb; /* [nparts] */
    double step_peak, run_peak;    /* the allocator's peaks over the step, the run */
    double hidden_bytes;           /* one buffer between instructions */
    int p2p_now, p2p_max;          /* such buffers held now, most this step */
    size_t hook_last;              /* the count the memory hook saw last */
    bool rec_on;                   /* record the allocations of the running forward / recompute */
    double *inc;                   /* their sizes, in order */
    int ninc, cap_inc;
    struct moe_ep *ep; /* a MoE model's ep group: this device's ranks across dp (NULL: dense) */
};

/* The (mb, stage) tables' index. */
static inline size_t interp_slot(const struct interp *x, int mb, int stage)
{
    return (size_t)mb * x->S + stage;
}

/* The step (iteration) micro-batch mb of the plan's current run belongs to. */
static inline long interp_iteration(const struct interp *x, int mb)
{
    return (long)x->step * x->K + mb / x->Nit;
}

/* ---- exec/interp_offload.c: buffers and transfers in flight (its header) */

/* A buffer between instructions (B x T x C floats), counted; and its release. */
float *interp_p2p_alloc(struct interp *x);
void interp_free_buf(struct interp *x, float **slot);
/* SA/SG: sends *slot's buffer without blocking (it is freed when the send completes). */
int interp_send(struct interp *x, float **slot, int peer, int tag, struct mt_err *e);
/* RA/RG: receives into a new buffer at *slot. */
int interp_recv(struct interp *x, float **slot, int peer, int tag, const char *what,
                struct mt_err *e);
/* Completes finished sends and copies; with `wait`, all of them. */
int interp_reap(struct interp *x, bool wait, struct mt_err *e);
/* OF or RL. A plan error sets *why (the caller names the instruction) and returns its code. */
int interp_copy(struct interp *x, const struct instr *in, const char **why, struct mt_err *e);
/* Before an RC or backward of slot k: its RL ended (waits for it); an offloaded forward
 * without one is a plan error (*why). */
int interp_copy_ready(struct interp *x, size_t k, const char **why, struct mt_err *e);
/* Before a compute instruction: with lanes that share the cores (copy_help), every OF ends
 * (waited for, or run here) and the RLs the lanes have not started run here; those done end. */
int interp_copies_before_compute(struct interp *x, struct mt_err *e);
/* Error paths and the end of a run: waits for copies in flight, frees the host copies. */
void interp_copies_fini(struct interp *x);

/* ---- exec/interp_weights.c: weight versions, PipeMare's T1 and T2 (exec/interp.c's header) */

/* Each stage's staleness in the plan and T2's velocities (interp_setup calls it). */
int interp_setup_async(struct interp *x, struct mt_err *e);
/* A FW/CFW of the stage reads its current version: counted for PipeDream's stash. */
void interp_version_read(struct interp *x, struct interp_part *ip);
/* The backward of a micro-batch that read version ver is done with it. */
void interp_version_release(struct interp *x, struct interp_part *ip, int ver);
/* Runs run(x, arg) on the weights an RC or BW of delay `delay` reads (version ver): the
 * stashed copy (PipeDream), the weights extrapolated back along the velocity (T2), or the
 * current ones. */
int interp_on_weights(struct interp *x, struct interp_part *ip, int delay, int ver,
                      int (*run)(struct interp *x, void *arg, struct mt_err *e), void *arg,
                      struct mt_err *e);
/* An OS: the AdamW step with T1's learning rate, T2's velocity, PipeDream's stash. */
int interp_update(struct interp *x, struct interp_part *ip, const struct instr *in,
                  struct mt_err *e);

#endif
