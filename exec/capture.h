/* exec/capture.h: what a run records (issue 7 "Traces"): the start and end of every
 * instruction (CLOCK_MONOTONIC, microseconds since a common origin taken after a barrier),
 * the bytes the device holds after every allocation or release, and each step's loss.
 * Records go to a spool file mapped into memory (MAP_SHARED), one per rank, when the
 * launcher gives a spool directory: a rank that is killed leaves its records behind in the
 * page cache, and the launcher merges them into a partial trace. Without a spool directory
 * the records stay in anonymous memory. On success rank 0 gathers all records (over MPI,
 * exec/comm.h) and the command writes one Chrome trace (traces/chrome.h). */
#ifndef MT_EXEC_CAPTURE_H
#define MT_EXEC_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_err;
struct instr;
struct comm;
struct capture;

enum capture_kind {
    CAPTURE_INSTR = 1, /* one instruction: t0..t1, value = bytes held at its end */
    CAPTURE_MEM,       /* the memory counter changed: t0, value = bytes held */
    CAPTURE_STEP,      /* a step ended: t0..t1 = the step, value = mean loss (rank 0 knows it) */
    CAPTURE_A2A,       /* a MoE token exchange (exec/xformer_moe.h): t0..t1, value = bytes sent
                        * to other ranks */
};

/* One record; plain old data, so spool files and MPI gathers carry it as bytes. */
struct capture_rec {
    double t0_us, t1_us;
    double value;
    int32_t kind;
    int32_t rank;
    int32_t op, mb, part, stage, peer; /* CAPTURE_INSTR: the plan's instruction */
    int32_t step;
};

/* Lifecycle of a rank, as the spool header records it for the launcher. */
enum capture_state {
    CAPTURE_RUNNING = 1,
    CAPTURE_DONE,       /* finished the run */
    CAPTURE_FAILED,     /* stopped on an error; msg says which */
    CAPTURE_TERMINATED, /* ended by SIGTERM / SIGINT: the MPI runtime ending the job */
    CAPTURE_EXITED,     /* called exit() while running: the MPI library gave up after it lost
                         * a peer (Open MPI ends a rank whose connection breaks) */
    CAPTURE_CRASHED,    /* SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT; signal says which */
};

/* The spool of one rank as read back by the launcher (no MPI needed). */
/* A wait that ended: for whom, from when until when (CLOCK_MONOTONIC us). */
#define CAPTURE_PAST_WAITS 4
struct capture_wait {
    double since_us, until_us;
    int32_t waiting_for, pad;
};

struct capture_spool {
    int rank, dev, dp_rank, pid;
    int state; /* enum capture_state; 0 if the rank never started recording */
    int signal;
    double alive_us; /* CLOCK_MONOTONIC (us) of its last sign of life: the rank whose life
                      * stopped first is the one that died; the others noticed later */
    double ended_us; /* when a signal or exit() ended it; 0 when neither did */
    int waiting_for; /* what it was waiting for when it stopped: COMM_WAIT_NONE (computing),
                      * a rank, or COMM_WAIT_GROUP (a collective) */
    double wait_since_us; /* when that wait began */
    /* The last waits that ended, newest first (until_us 0: none): a rank blocked on a frozen
     * peer returns from its wait once mpirun's SIGCONT wakes that peer, after the first rank
     * gave up, so the post-mortem asks what it waited for at that time, not at its end. */
    struct capture_wait past[CAPTURE_PAST_WAITS];
    char msg[512];
    struct capture_rec *rec; /* malloc'd */
    size_t n;
};

/* spool_dir NULL: records in memory only. cap_hint: records expected (it grows). */
int capture_open(const char *spool_dir, int rank, int dev, int dp_rank, size_t cap_hint,
                 struct capture **out, struct mt_err *e);
/* Removes the spool file when `remove` (a clean end), then frees. NULL is a no-op. */
void capture_close(struct capture *c, bool remove);
/* Takes the time origin (call right after a barrier so that all ranks share it). */
void capture_set_origin(struct capture *c);
double capture_now_us(const struct capture *c);
void capture_instr(struct capture *c, const struct instr *in, int step, double t0_us, double t1_us,
                   size_t mem_bytes);
void capture_mem(struct capture *c, size_t bytes);
void capture_step(struct capture *c, int step, double t0_us, double t1_us, double loss);
void capture_a2a(struct capture *c, int step, double t0_us, double t1_us, double bytes);
/* Notes that the rank is alive and what it waits for (waits call it while polling, and with
 * COMM_WAIT_NONE when done; records imply life); a wait that ends goes to the spool's past
 * waits. ctx is the capture, as for comm_set_idle_hook. */
void capture_alive(void *ctx, int waiting_for);
/* The memory hook for backend_ops.mem_watch: ctx is the capture. */
void capture_mem_hook(size_t bytes, void *ctx);
void capture_set_state(struct capture *c, enum capture_state s, const char *msg);
/* Marks the spool when the process ends while running: SIGTERM / SIGINT -> TERMINATED, a
 * crash signal -> CRASHED, exit() -> EXITED; then the signal takes its default course.
 * A rank left RUNNING in its spool after the job died was killed outright (SIGKILL), as
 * only the kernel can do. One capture per process. */
void capture_watch_signals(struct capture *c);
const struct capture_rec *capture_records(const struct capture *c, size_t *n);
/* Collective: every rank's records to rank 0, one array in rank order (*all malloc'd, NULL
 * elsewhere). */
int capture_gather(struct capture *c, struct comm *cm, struct capture_rec **all, size_t *n,
                   struct mt_err *e);

/* The spool file name of a rank in dir (caller frees). */
char *capture_spool_path(const char *dir, int rank);
/* Reads a rank's spool; a missing file gives state 0 and no records (MT_OK). */
int capture_spool_read(const char *dir, int rank, struct capture_spool *out, struct mt_err *e);
void capture_spool_fini(struct capture_spool *s);

#endif
