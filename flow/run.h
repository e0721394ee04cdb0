/* flow/run.h: a rank's life in `mario-tui run` (exec/), below the command that prints its
 * report: started by mpirun, a rank joins MPI, checks the plan and agrees on it with every
 * other rank (a mismatch anywhere is refused everywhere before any compute), opens its
 * backend, its communicator (the stages its device holds, the peers it talks to) and its
 * record spool; after the run the records are gathered and rank 0 writes the Chrome trace;
 * the launcher, after a failed job, reads the spools for the post-mortem and the partial
 * trace. */
#ifndef MT_FLOW_RUN_H
#define MT_FLOW_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "exec/comm.h"
#include "exec/interp.h"

struct backend_ops;
struct capture;
struct capture_rec;
struct config;
struct input_aware;
struct input_aware_opts;
struct seqlen_sample;
struct input_aware_report;
struct mt_err;
struct plan;
struct sim_result;

struct flow_rank {
    int rank, size;
    const struct backend_ops *b;
    struct comm *cm;
    struct capture *cap;
    bool launched; /* under our launcher: it reports failures from the spools */
};

/* Starts this rank of a run of p on backend with options o: 0 and *r open, or the exit status
 * when the rank cannot run (2: a plan or options some rank refused, messages printed; a rank
 * whose backend, communicator or spool fails aborts the job). */
int flow_rank_start(struct plan *p, const char *backend, const struct interp_opts *o,
                    int *argc, char ***argv, struct flow_rank *r);
/* Runs p on this rank (exec/interp.h) with o, progress(ctx) on the way; with ia (--lengths),
 * each step's plan streamed by the planner and its report gathered into *ir (*have_ir). */
int flow_rank_run(struct flow_rank *r, const struct plan *p, struct interp_opts *o,
                  struct input_aware *ia, interp_progress_fn progress, void *ctx,
                  struct interp_result *res, struct input_aware_report *ir, bool *have_ir,
                  struct mt_err *e);
/* Rank 0: the gathered records as the trace at path, and a note saying so into note (or
 * the error printed and its code). */
int flow_rank_trace(const char *path, const struct plan *p, const struct capture_rec *rec,
                    size_t n, int ranks, const char *backend, const char *status, char *note,
                    size_t note_n);
/* Closes what flow_rank_start opened and leaves MPI. */
void flow_rank_end(struct flow_rank *r);
/* After the run (rc, e its error, res its result): a failure of this rank alone ends the job
 * (the others may be waiting for it); else every rank's records are gathered into *all
 * (rank 0's; free it), the spool marked failed when the run failed together. */
void flow_rank_gather(struct flow_rank *r, int rc, const struct mt_err *e,
                      const struct interp_result *res, struct capture_rec **all, size_t *nall);
/* The spool marked done when the run was (rc), then flow_rank_end. */
void flow_rank_done(struct flow_rank *r, int rc);

/* The launcher: checks p for np ranks (np <= 0: devices x replicas) on backend with o, makes
 * the spool, runs this executable under mpirun and waits; after a failed job, the post-mortem
 * (below). MT_OK with the job's exit status in *status; an error when it could not run, with
 * *status 2 when the plan or options are refused (bad input, whatever the reason). */
int flow_run_launch(const struct plan *p, int np, const char *backend,
                    const struct interp_opts *o, const char *trace_out, bool tty, int argc,
                    char **argv, int *status, struct mt_err *e);

/* Who talks to whom in p: which stages each device holds ([devices x stages]) and which
 * device sends to which ([devices x devices]), for the communicator (free both arrays). */
struct comm_layout flow_run_layout(const struct plan *p, bool **holds, bool **talks);

/* The ranks' records as our Chrome trace of p (status: "complete" or why not). */
int flow_run_write_trace(const char *path, const struct plan *p, const struct capture_rec *rec,
                         size_t n, int ranks, const char *backend, const char *status,
                         struct mt_err *e);
/* The simulator's prediction of p with the executor's byte counts; NULL when it cannot run. */
struct sim_result *flow_run_simulate(const struct plan *p);
/* After a failed job: prints the post-mortem (exec/postmortem.h) of the np ranks' spools, and
 * writes their records as a partial trace to trace_out (NULL: none) unless every rank ended on
 * its own (rank 0 wrote it). The command's exit status (2 stays 2, else 1). */
int flow_run_after_failure(const struct plan *p, const char *trace_out, const char *backend,
                           int np, const char *spool, int status);

/* --lengths FILE (variable-length batches): c made the file's (model/seqlen.h
 * seqlen_config_use_file; *smp its lengths), the steps (steps_given: o->steps as asked, else
 * one per length) in o and iao, the stream's planner *ia (which checks that full
 * checkpointing fits the longest batch; its errors name config_path when not NULL) and the
 * run's plan *out. On an error the caller frees *ia and *smp as on success. */
int flow_run_inputs(struct config *c, const char *config_path, const char *lengths,
                    bool steps_given,
                    struct interp_opts *o, struct input_aware_opts *iao,
                    struct seqlen_sample *smp, struct input_aware **ia, struct plan **out,
                    struct mt_err *e);
/* What backend needs of p before the launch, the same on the launcher and every rank: NCCL
 * matches a pair's messages in issue order, so a loaded plan (searched, imported) that
 * receives out of its senders' order gets those receives moved earlier. Returns how many
 * moved, or -1 (e says why). */
int flow_run_prepare(struct plan *p, const char *backend, struct mt_err *e);

#endif
