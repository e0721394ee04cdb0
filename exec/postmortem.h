/* exec/postmortem.h: what the launcher can say after a failed job, from the ranks' spools
 * alone (exec/capture.h): which rank died (SIGKILL), crashed (the signal), failed (its
 * message) or hung (the rank the others waited for, followed through who waited for whom),
 * or that the waits close on themselves (a deadlock). Pure: no MPI, no files, so every
 * verdict is unit-tested on synthetic spools (tests/unit/test_postmortem.c).
 *
 * Who died. A rank marks its spool when it ends by itself: DONE, FAILED (with its message),
 * CRASHED (a fault signal), TERMINATED (SIGTERM: mpirun ending the job), EXITED (exit()).
 * A rank still RUNNING was killed outright (SIGKILL), or ended by its MPI library with
 * _exit() after the connection to a dead peer broke, which Open MPI does to ranks that
 * were talking to it. The two look alike, so time decides: every rank notes the time while
 * it waits and when it fails, and a RUNNING rank whose heartbeat stopped first, before any
 * rank reported a failure, is the one that died; those that stopped later were still
 * alive when it did. Failures and crashes speak for themselves.
 *
 * Who hung. A rank that gave up waiting (a timeout) names whom it waited for, but that rank
 * may itself have been waiting for a third: every waiting rank notes whom it waits for in
 * its spool, so the launcher follows the chain to the rank that waited for nobody and went
 * silent — the one that stopped answering — or finds that the chain closes (a deadlock). */
#ifndef MT_EXEC_POSTMORTEM_H
#define MT_EXEC_POSTMORTEM_H

#include <stdbool.h>

#include "exec/capture.h"

struct postmortem {
    char **line; /* what to print, cause before effect, without a prefix: first the
                  * verdicts (a deadlock, then one line per rank named), then what followed */
    int n;
    int verdicts;   /* how many of the lines are verdicts (line[0] says why the job failed) */
    bool all_ended; /* every rank stopped on its own (then rank 0 wrote the trace itself) */
};

/* Explains the job from the np spools and mpirun's exit status. Free with postmortem_fini. */
void postmortem_explain(const struct capture_spool *sp, int np, int status, struct postmortem *out);
void postmortem_fini(struct postmortem *pm);

#endif
