/* exec/comm.h: the executor's communication (issue 7; docs/design.md semantics): SA/SG are
 * non-blocking sends, RA/RG blocking receives, AR an allreduce of a stage's gradients over
 * the ranks that hold a replica of it (Chimera's two pipelines, data-parallel copies), plus
 * the control plane every rank shares: the per-step status and loss, gathering the trace.
 * MPI (host buffers) lives in exec/comm_mpi.c; NCCL (device buffers) in exec/comm_nccl.c.
 * Every wait is bounded by a timeout, so a hung peer becomes an error that names it. */
#ifndef MT_EXEC_COMM_H
#define MT_EXEC_COMM_H

#include <stdbool.h>
#include <stddef.h>

struct mt_err;
struct comm;     /* MPI world, the replica groups of the stages this rank holds */
struct comm_req; /* one outstanding send */

enum comm_kind {
    COMM_MPI,  /* host buffers, MPI_Isend / MPI_Irecv / MPI_Iallreduce */
    COMM_NCCL, /* device buffers, ncclSend / ncclRecv / ncclAllReduce (HAVE_NCCL) */
};

/* Which stages each pipeline device holds; ranks = pp * dp, rank = dp_rank * pp + dev. */
struct comm_layout {
    int pp, dp, stages;
    const bool *holds; /* [pp * stages]: device dev holds stage s at holds[dev * stages + s] */
    const bool *talks; /* [pp * pp]: device a sends to device b (NCCL links; may be NULL) */
};

/* What every rank learns at the end of a step (comm_step_end). */
struct comm_step {
    int status;      /* the largest status any rank reported (0 = all well) */
    int bad_rank;    /* a rank that reported it, or -1 */
    double loss_sum; /* sum over ranks of their local loss sums */
    double step_s;   /* the longest local step time */
};

/* MPI must be initialised (exec/launch.h). Collective over MPI_COMM_WORLD: builds one
 * sub-communicator per stage that has more than one replica. timeout_s bounds every wait. */
int comm_open(enum comm_kind kind, const struct comm_layout *l, double timeout_s, struct comm **out,
              struct mt_err *e);
void comm_close(struct comm *c);
int comm_rank(const struct comm *c);
int comm_size(const struct comm *c);
enum comm_kind comm_kind(const struct comm *c);
void comm_set_timeout(struct comm *c, double timeout_s);
/* What a rank waits for, as the idle hook hears it. */
#define COMM_WAIT_NONE (-1)  /* not waiting: computing */
#define COMM_WAIT_GROUP (-2) /* a collective: whichever rank of the group is missing */
/* Called now and then while a wait polls, with the rank (or COMM_WAIT_GROUP) waited for, and
 * once with COMM_WAIT_NONE when the wait is over (a heartbeat that lets the launcher follow
 * who waited for whom: exec/capture.h). A wait that times out leaves its last call standing.
 * NULL removes it. */
void comm_set_idle_hook(struct comm *c, void (*fn)(void *ctx, int waiting_for), void *ctx);
/* Ranks that hold stage s (including this one when it does). */
int comm_group_size(const struct comm *c, int stage);

/* Starts sending n floats to rank `peer`; buf must stay alive and unchanged until the
 * request completes (comm_test reports done, or comm_wait returns). */
int comm_send(struct comm *c, const float *buf, size_t n, int peer, int tag, struct comm_req **req,
              struct mt_err *e);
/* Sets *done when the send has completed; then the request is freed and *req NULL. */
int comm_test(struct comm *c, struct comm_req **req, bool *done, struct mt_err *e);
/* Waits (at most the timeout) for the send; frees the request and sets *req NULL. */
int comm_wait(struct comm *c, struct comm_req **req, struct mt_err *e);
/* Receives n floats from rank `peer`; MT_ETIMEOUT naming the peer after the timeout. `what`
 * says what was expected, for the message ("activation of mb 3, stage 2"). */
int comm_recv(struct comm *c, float *buf, size_t n, int peer, int tag, const char *what,
              struct mt_err *e);
/* Sums buf (n floats) in place over the replicas of `stage`; a no-op for a single replica. */
int comm_allreduce(struct comm *c, int stage, float *buf, size_t n, struct mt_err *e);

/* The control plane, always over MPI. Every rank reports its status (0 = well) and local
 * loss sum and step time; every rank learns the maxima and the loss sum. Bounded by the
 * timeout, so a dead or hung rank ends the step with MT_ETIMEOUT instead of a hang. */
int comm_step_end(struct comm *c, int status, double loss_sum, double step_s, struct comm_step *out,
                  struct mt_err *e);
int comm_barrier(struct comm *c, struct mt_err *e);
/* Gathers every rank's bytes on rank 0: *all (malloc'd, caller frees) holds them one rank
 * after the other, counts[r] (caller's array of comm_size entries) their sizes. Other ranks
 * get *all = NULL. */
int comm_gather(struct comm *c, const void *buf, size_t bytes, void **all, size_t *counts,
                struct mt_err *e);
/* Takes the maximum of `n` doubles over all ranks, result on every rank. */
int comm_max_doubles(struct comm *c, double *v, int n, struct mt_err *e);
/* Broadcasts bytes from rank `root` within the replica group of `stage` (-1: the world). */
int comm_bcast(struct comm *c, int stage, void *buf, size_t bytes, int root, struct mt_err *e);
/* Rank of this process within the replica group of `stage` (-1: the world). */
int comm_group_rank(const struct comm *c, int stage);

/* ---- exec/comm_nccl.c (HAVE_NCCL): the data plane over NCCL ------------------------------
 * comm_open(COMM_NCCL, ...) bootstraps NCCL from MPI (rank 0 calls ncclGetUniqueId,
 * MPI_Bcast, ncclCommInitRank), splits one communicator per directed pair of devices that
 * talk (layout.talks) and one per replicated stage, and routes comm_send / comm_test /
 * comm_wait / comm_recv / comm_allreduce there (device buffers). Waits poll
 * ncclCommGetAsyncError and abort the communicator on an error or after the timeout.
 * Without NCCL, comm_open refuses COMM_NCCL with MT_EUNSUPPORTED. */
struct comm_nccl;
int comm_nccl_open(struct comm *c, const struct comm_layout *l, struct comm_nccl **out,
                   struct mt_err *e);
void comm_nccl_close(struct comm_nccl *n);
/* Enqueues a send; *event (a cudaEvent_t) fires when it has completed. */
int comm_nccl_send(struct comm_nccl *n, const float *buf, size_t count, int peer, void **event,
                   struct mt_err *e);
/* Sets *done when the event fired (and then destroys it). */
int comm_nccl_test(void *event, bool *done, struct mt_err *e);
/* Waits for the event of a send to peer (then destroys it). */
int comm_nccl_wait(struct comm_nccl *n, void *event, int peer, double timeout_s, struct mt_err *e);
int comm_nccl_recv(struct comm_nccl *n, float *buf, size_t count, int peer, double timeout_s,
                   struct mt_err *e);
int comm_nccl_allreduce(struct comm_nccl *n, int stage, float *buf, size_t count, double timeout_s,
                        struct mt_err *e);

#endif
