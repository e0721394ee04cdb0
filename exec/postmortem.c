/* exec/postmortem.c: the launcher's verdicts on a failed job (exec/postmortem.h). */
#include <config.h>
#include "exec/postmortem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/comm.h"
#include "util/xalloc.h"

static const char *pm_signal_name(int sig)
{
    const char *s = sig > 0 ? strsignal(sig) : NULL;
    return s ? s : "unknown signal";
}

/* The step a rank was in when its records stop (1-based). */
static int pm_spool_step(const struct capture_spool *s)
{
    int last = -1;
    for (size_t i = 0; i < s->n; i++)
        if (s->rec[i].step > last)
            last = s->rec[i].step;
    return last < 0 ? 1 : last + 1;
}

/* Ranks that ended on their own: finished, or failed with a message. */
static bool pm_ended_itself(const struct capture_spool *s)
{
    return s->state == CAPTURE_DONE || s->state == CAPTURE_FAILED || s->state == CAPTURE_CRASHED;
}

/* Whom rank r was waiting for at time t: its wait under way if it began by then, else a
 * wait that had begun by then and ended later. A rank frozen by SIGSTOP is woken by mpirun's
 * SIGCONT before its SIGTERM: the ranks blocked on it then return from their waits (which
 * end after t) and may start new ones (which begin after t). */
static int pm_waiting_at(const struct capture_spool *s, double t)
{
    if (s->waiting_for != COMM_WAIT_NONE && s->wait_since_us <= t)
        return s->waiting_for;
    for (int i = 0; i < CAPTURE_PAST_WAITS; i++) {
        const struct capture_wait *w = &s->past[i];
        if (w->until_us > 0 && w->since_us <= t && t < w->until_us)
            return w->waiting_for;
    }
    return COMM_WAIT_NONE;
}

/* Follows "r waits for w" through the spools, as things stood at time t, from rank r to the
 * ranks the wait comes down to: one that waits for nobody (the others wait for it), or, for
 * a collective, every rank that waits for nobody and did not end on its own. Marks them in
 * culprit[]; returns true when the chain comes back on itself (a deadlock: every rank in it
 * waits for the next). */
static bool pm_follow_waits(const struct capture_spool *sp, int np, int r, double t, bool *culprit)
{
    bool *seen = xcalloc((size_t)np, sizeof *seen);
    bool cycle = false;
    for (;;) {
        if (seen[r]) {
            cycle = true;
            break;
        }
        seen[r] = true;
        int w = pm_waiting_at(&sp[r], t);
        if (w == COMM_WAIT_NONE) {
            culprit[r] = true;
            break;
        }
        if (w == COMM_WAIT_GROUP) {
            for (int q = 0; q < np; q++)
                if (pm_waiting_at(&sp[q], t) == COMM_WAIT_NONE && !pm_ended_itself(&sp[q]))
                    culprit[q] = true;
            break;
        }
        if (w < 0 || w >= np)
            break;
        r = w;
    }
    free(seen);
    return cycle;
}

static void pm_add(struct postmortem *pm, const char *fmt, ...)
{
    char buf[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pm->line = xreallocarray(pm->line, (size_t)pm->n + 1, sizeof *pm->line);
    pm->line[pm->n++] = xstrdup(buf);
}

void postmortem_explain(const struct capture_spool *sp, int np, int status, struct postmortem *out)
{
    memset(out, 0, sizeof *out);
    bool all_ended = true;
    double first_gone = INFINITY; /* earliest heartbeat among the silent ranks */
    double first_fail = INFINITY; /* earliest failure or crash a rank reported */
    int first_waiter = -1;        /* the rank that gave up waiting first */
    for (int r = 0; r < np; r++) {
        if (sp[r].state != CAPTURE_DONE && sp[r].state != CAPTURE_FAILED)
            all_ended = false;
        if (sp[r].state == CAPTURE_RUNNING && sp[r].alive_us < first_gone)
            first_gone = sp[r].alive_us;
        if ((sp[r].state == CAPTURE_FAILED || sp[r].state == CAPTURE_CRASHED) &&
            sp[r].alive_us < first_fail)
            first_fail = sp[r].alive_us;
        if (sp[r].state == CAPTURE_FAILED && sp[r].waiting_for != COMM_WAIT_NONE &&
            (first_waiter < 0 || sp[r].alive_us < sp[first_waiter].alive_us))
            first_waiter = r;
    }
    out->all_ended = all_ended;
    bool *culprit = xcalloc((size_t)np, sizeof *culprit);
    /* the moment the first rank gave up waiting: the picture of who waited for whom */
    double t_fail = first_waiter >= 0 ? sp[first_waiter].alive_us : 0;
    bool deadlock = first_waiter >= 0 && pm_follow_waits(sp, np, first_waiter, t_fail, culprit);
    char line[600], later[256] = "";
    int nlater = 0;
    if (deadlock) {
        /* every rank of the chain waits for the next: name the chain */
        char chain[600];
        size_t len = (size_t)snprintf(chain, sizeof chain, "deadlock: ");
        int r = first_waiter;
        for (int k = 0; k <= np && len + 40 < sizeof chain; k++) {
            int w = pm_waiting_at(&sp[r], t_fail);
            len += (size_t)snprintf(chain + len, sizeof chain - len, "%srank %d waits for rank %d",
                                    k ? ", " : "", r, w);
            r = w;
            if (r == first_waiter)
                break;
        }
        pm_add(out, "%s", chain);
    }
    /* the ranks the others waited for first, then the others: cause before effect */
    for (int k = 0; k < 2 * np; k++) {
        int r = k % np;
        const struct capture_spool *s = &sp[r];
        bool hung = culprit[r] && !pm_ended_itself(s);
        if (hung != (k < np))
            continue;
        line[0] = '\0';
        bool silent = s->state == CAPTURE_RUNNING;
        if (hung)
            snprintf(line, sizeof line,
                     "rank %d (device %d, pid %d) stopped answering during step %d: rank %d "
                     "waited %.1f s for it; %s",
                     r, s->dev, s->pid, pm_spool_step(s), first_waiter,
                     (sp[first_waiter].alive_us - sp[first_waiter].wait_since_us) / 1e6,
                     /* no last word: SIGKILL, either outright or at the job's end after a
                      * hung rank missed Open MPI's 1 s between SIGTERM and SIGKILL (a stopped
                      * rank on a loaded machine): the spool cannot tell which */
                     silent ? "it left no last word, so it was killed (SIGKILL): outright, or "
                              "at the job's end after it hung"
                            : "it was still there when the job was ended, so it hung (stopped "
                              "by SIGSTOP, stuck in a system call, or looping)");
        /* 1 ms: a rank that noticed the death kept its heartbeat going until it ended */
        else if (silent && s->alive_us <= first_gone + 1000.0 && s->alive_us < first_fail)
            snprintf(line, sizeof line,
                     "rank %d (device %d, pid %d) died during step %d: killed outright (SIGKILL, "
                     "from the kernel, e.g. out of memory, or a user)",
                     r, s->dev, s->pid, pm_spool_step(s));
        else if (s->state == CAPTURE_CRASHED)
            snprintf(line, sizeof line, "rank %d (device %d, pid %d) crashed during step %d: %s", r,
                     s->dev, s->pid, pm_spool_step(s), pm_signal_name(s->signal));
        else if (s->state == CAPTURE_FAILED && !all_ended)
            snprintf(line, sizeof line, "%s", s->msg);
        else if (silent || s->state == CAPTURE_TERMINATED || s->state == CAPTURE_EXITED) {
            size_t len = strlen(later);
            if (len + 12 < sizeof later)
                snprintf(later + len, sizeof later - len, "%s%d", nlater ? ", " : "", r);
            nlater++;
        }
        if (line[0])
            pm_add(out, "%s", line);
    }
    out->verdicts = out->n;
    if (nlater > 0 && out->n > 0)
        pm_add(out, "then the MPI runtime ended rank%s %s", nlater > 1 ? "s" : "", later);
    if (out->n == 0 && !all_ended)
        pm_add(out, "mpirun exited with status %d", status);
    free(culprit);
}

void postmortem_fini(struct postmortem *pm)
{
    for (int i = 0; i < pm->n; i++)
        free(pm->line[i]);
    free(pm->line);
    memset(pm, 0, sizeof *pm);
}
