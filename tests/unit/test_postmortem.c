/* tests/unit/test_postmortem.c: the launcher's verdicts (exec/postmortem.h) on synthetic
 * spools, each scene worked out by hand: a rank killed by SIGKILL (its heartbeat stopped
 * first), a crash (its signal named), a hang followed through who waited for whom (rank 0
 * gave up on rank 2, which waited on rank 1, which waited on rank 3: rank 3 is the one),
 * a two-rank deadlock (each waits for the other), a wait that ended after the first rank gave
 * up (the frozen peer woken by mpirun's SIGCONT: as tests/mpi/test_fault.sh saw it under
 * load), a failure with its own message, and a clean end (nothing to say). */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "exec/capture.h"
#include "exec/comm.h"
#include "exec/postmortem.h"
#include "tests/check.h"

#define NP 4

static void scene(struct capture_spool *sp, int np)
{
    memset(sp, 0, (size_t)np * sizeof *sp);
    for (int r = 0; r < np; r++) {
        sp[r].rank = sp[r].dev = r;
        sp[r].pid = 100 + r;
        sp[r].state = CAPTURE_TERMINATED; /* mpirun ended the others */
        sp[r].alive_us = 5e6;
        sp[r].waiting_for = COMM_WAIT_NONE;
    }
}

static bool has(const struct postmortem *pm, const char *text)
{
    for (int i = 0; i < pm->n; i++)
        if (strstr(pm->line[i], text))
            return true;
    return false;
}

static void killed(void)
{
    struct capture_spool sp[NP];
    scene(sp, NP);
    sp[1].state = CAPTURE_RUNNING; /* no mark: killed outright, its heartbeat stopped first */
    sp[1].alive_us = 1e6;
    struct capture_rec rec = {.kind = CAPTURE_INSTR, .step = 1};
    sp[1].rec = &rec, sp[1].n = 1; /* it had finished step 1's records: it died in step 2 */
    sp[2].state = CAPTURE_RUNNING; /* ended by Open MPI later, after it lost its peer */
    sp[2].alive_us = 3e6;
    struct postmortem pm;
    postmortem_explain(sp, NP, 1, &pm);
    CHECK_EQ_INT(pm.verdicts, 1);
    CHECK(pm.n >= 1 && strcmp(pm.line[0], "rank 1 (device 1, pid 101) died during step 2: "
                                          "killed outright (SIGKILL, from the kernel, e.g. out "
                                          "of memory, or a user)") == 0);
    CHECK(has(&pm, "then the MPI runtime ended ranks 0, 2, 3"));
    CHECK(!pm.all_ended);
    postmortem_fini(&pm);
}

static void crashed(void)
{
    struct capture_spool sp[NP];
    scene(sp, NP);
    sp[3].state = CAPTURE_CRASHED;
    sp[3].signal = SIGSEGV;
    sp[3].alive_us = 2e6;
    struct postmortem pm;
    postmortem_explain(sp, NP, 1, &pm);
    CHECK_EQ_INT(pm.verdicts, 1);
    CHECK(pm.n >= 1 &&
          strncmp(pm.line[0], "rank 3 (device 3, pid 103) crashed during step 1: ", 50) == 0);
    CHECK(pm.n >= 1 && strstr(pm.line[0], strsignal(SIGSEGV)) != NULL);
    postmortem_fini(&pm);
}

static void hung_chain(void)
{
    struct capture_spool sp[NP];
    scene(sp, NP);
    /* rank 0 gave up waiting for rank 2 at 9 s (it had waited since 4 s) */
    sp[0].state = CAPTURE_FAILED;
    snprintf(sp[0].msg, sizeof sp[0].msg, "rank 0: timed out waiting for rank 2");
    sp[0].waiting_for = 2, sp[0].wait_since_us = 4e6, sp[0].alive_us = 9e6;
    sp[2].waiting_for = 1, sp[2].wait_since_us = 3e6; /* 2 waits for 1 */
    sp[1].waiting_for = 3, sp[1].wait_since_us = 2e6; /* 1 waits for 3 */
    sp[3].state = CAPTURE_TERMINATED;                 /* 3 computes: still there, hung */
    /* a wait begun after rank 0 gave up does not count (SIGCONT before SIGTERM) */
    sp[3].waiting_for = 0, sp[3].wait_since_us = 9.5e6;
    struct postmortem pm;
    postmortem_explain(sp, NP, 1, &pm);
    CHECK(pm.verdicts >= 1);
    CHECK(pm.n >= 1 && strcmp(pm.line[0], "rank 3 (device 3, pid 103) stopped answering during "
                                          "step 1: rank 0 waited 5.0 s for it; it was still "
                                          "there when the job was ended, so it hung (stopped by "
                                          "SIGSTOP, stuck in a system call, or looping)") == 0);
    CHECK(has(&pm, "rank 0: timed out waiting for rank 2")); /* after the cause */
    CHECK(!has(&pm, "deadlock"));
    postmortem_fini(&pm);
    /* the same chain, rank 3 leaving no last word (SIGKILL before its SIGTERM handler ran):
     * still the one named, and the line says what cannot be told apart */
    sp[3].state = CAPTURE_RUNNING;
    postmortem_explain(sp, NP, 1, &pm);
    CHECK(pm.n >= 1 && strcmp(pm.line[0], "rank 3 (device 3, pid 103) stopped answering during "
                                          "step 1: rank 0 waited 5.0 s for it; it left no last "
                                          "word, so it was killed (SIGKILL): outright, or at the "
                                          "job's end after it hung") == 0);
    postmortem_fini(&pm);
}

/* Chimera on 4 ranks, rank 2 frozen by SIGSTOP: rank 1 blocked on it from 1 s (a send the
 * library would not finish), rank 0 gave up on rank 1 at 4 s; then mpirun's SIGCONT woke
 * rank 2, rank 1's wait ended at 4.05 s, and rank 3 began a new wait for rank 2. Rank 2 is
 * the one; with no record of rank 1's ended wait rank 1 was named instead. */
static void wait_ended_after(void)
{
    struct capture_spool sp[NP];
    scene(sp, NP);
    sp[0].state = CAPTURE_FAILED;
    snprintf(sp[0].msg, sizeof sp[0].msg, "rank 0: timed out waiting for rank 1");
    sp[0].waiting_for = 1, sp[0].wait_since_us = 1e6, sp[0].alive_us = 4e6;
    sp[1].past[0] = (struct capture_wait){.since_us = 1e6, .until_us = 4.05e6, .waiting_for = 2};
    sp[1].past[1] = (struct capture_wait){.since_us = 0.5e6, .until_us = 0.6e6, .waiting_for = 0};
    sp[1].wait_since_us = 1e6;
    sp[3].waiting_for = 2, sp[3].wait_since_us = 4.07e6;
    struct postmortem pm;
    postmortem_explain(sp, NP, 1, &pm);
    CHECK(pm.n >= 1 && strncmp(pm.line[0], "rank 2 (device 2, pid 102) stopped answering", 44) == 0);
    CHECK(!has(&pm, "rank 1 (device 1, pid 101) stopped answering"));
    CHECK(!has(&pm, "deadlock"));
    postmortem_fini(&pm);
    /* a wait that had ended before rank 0 gave up says nothing about that moment */
    sp[1].past[0].until_us = 3.9e6;
    postmortem_explain(sp, NP, 1, &pm);
    CHECK(pm.n >= 1 && strncmp(pm.line[0], "rank 1 (device 1, pid 101) stopped answering", 44) == 0);
    postmortem_fini(&pm);
}

static void deadlock(void)
{
    struct capture_spool sp[2];
    scene(sp, 2);
    sp[0].state = CAPTURE_FAILED;
    snprintf(sp[0].msg, sizeof sp[0].msg, "rank 0: timed out waiting for rank 1");
    sp[0].waiting_for = 1, sp[0].wait_since_us = 1e6, sp[0].alive_us = 6e6;
    sp[1].state = CAPTURE_FAILED;
    snprintf(sp[1].msg, sizeof sp[1].msg, "rank 1: timed out waiting for rank 0");
    sp[1].waiting_for = 0, sp[1].wait_since_us = 1e6, sp[1].alive_us = 6.1e6;
    struct postmortem pm;
    postmortem_explain(sp, 2, 1, &pm);
    CHECK(pm.n >= 1 &&
          strcmp(pm.line[0], "deadlock: rank 0 waits for rank 1, rank 1 waits for rank 0") == 0);
    CHECK(!has(&pm, "stopped answering"));
    postmortem_fini(&pm);
}

static void clean_and_silent(void)
{
    struct capture_spool sp[2];
    scene(sp, 2);
    sp[0].state = sp[1].state = CAPTURE_DONE;
    struct postmortem pm;
    postmortem_explain(sp, 2, 0, &pm);
    CHECK(pm.all_ended);
    CHECK_EQ_INT(pm.n, 0);
    postmortem_fini(&pm);
    /* nothing marked, nothing to go on: mpirun's status is all there is */
    scene(sp, 2);
    sp[0].state = sp[1].state = CAPTURE_TERMINATED;
    postmortem_explain(sp, 2, 3, &pm);
    CHECK_EQ_INT(pm.verdicts, 0);
    CHECK(pm.n == 1 && strcmp(pm.line[0], "mpirun exited with status 3") == 0);
    postmortem_fini(&pm);
}

int main(void)
{
    killed();
    crashed();
    hung_chain();
    wait_ended_after();
    deadlock();
    clean_and_silent();
    return check_report("test_postmortem");
}
