/* tui/explore_wait.c: work that may keep keys waiting (an edit's build of a huge config,
 * loading a trace) on a thread of its own, while the explorer's tick redraws the status line
 * (what, or what the work says it does now, for how long) and listens for Esc (issue 27:
 * nothing freezes). Esc stops the wait and asks the work to end early when it can (a build
 * stops at its next pass): what is shown stays, and the work ends unseen (x->orphan), to be
 * joined and dropped before the next wait or at explore_fini. A wait may also end when the
 * work has made what is to be shown first (an edit's base plan), the work going on behind
 * (its passes: tui/explore_build.c). The threads run at a lower priority than the one that
 * listens for keys. */
#include <config.h>
#include "tui/explore.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "util/xalloc.h"

struct explore_job {
    pthread_t tid;
    explore_work_fn work, drop;
    void *arg;
    atomic_bool finished;
    bool waited_for; /* the keys wait for what it makes first: its priority is lowered after */
    struct explore_job *next; /* x->orphan: the next stopped one */
};

void explore_background_thread(void)
{
#ifdef __linux__
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10); /* best effort */
#endif
}

static double wait_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void *wait_job_main(void *arg)
{
    struct explore_job *j = arg;
    if (!j->waited_for)
        explore_background_thread();
    j->work(j->arg);
    atomic_store(&j->finished, true);
    return NULL;
}

/* Joins a job and drops what it made. */
static void wait_job_drop(struct explore_job *j)
{
    pthread_join(j->tid, NULL);
    j->drop(j->arg);
    free(j);
}

void explore_wait_reap(struct explore *x)
{
    while (x->orphan != NULL) {
        struct explore_job *j = x->orphan;
        x->orphan = j->next;
        wait_job_drop(j);
    }
}

void explore_wait_reap_ended(struct explore *x)
{
    for (struct explore_job **pj = &x->orphan; *pj != NULL;) {
        struct explore_job *j = *pj;
        if (atomic_load(&j->finished)) {
            *pj = j->next;
            wait_job_drop(j);
        } else {
            pj = &j->next;
        }
    }
}

/* Whether every stopped job has ended (their end, waited for before the next work). */
static bool wait_orphans_ended(struct explore *x)
{
    for (struct explore_job *j = x->orphan; j != NULL; j = j->next)
        if (!atomic_load(&j->finished))
            return false;
    return true;
}

bool explore_job_ended(const struct explore_job *j)
{
    return atomic_load(&((struct explore_job *)j)->finished);
}

void explore_job_join(struct explore_job *j)
{
    pthread_join(j->tid, NULL);
    free(j);
}

void explore_job_orphan(struct explore *x, struct explore_job *j)
{
    j->next = x->orphan;
    x->orphan = j;
}

/* Until *done or ready(arg), ticking (the first tick after tick_every_ms, so quick work never
 * shows), the status line saying what, or describe's words when given; false when Esc
 * stopped the wait. */
static bool wait_until(struct explore *x, atomic_bool *done, bool (*ready)(void *arg),
                       const char *what, void (*describe)(void *arg, char *buf, size_t n),
                       void *arg)
{
    char now_doing[256];
    x->waiting = what;
    x->wait_t0 = wait_now_ms();
    x->tick_ms = x->wait_t0;
    bool stopped = false;
    while (!atomic_load(done) && !(ready != NULL && ready(arg))) {
        struct timespec nap = {0, 2 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double now = wait_now_ms();
        if (now - x->tick_ms < x->tick_every_ms || atomic_load(done) ||
            (ready != NULL && ready(arg)))
            continue;
        x->tick_ms = now;
        if (describe != NULL) {
            describe(arg, now_doing, sizeof now_doing);
            x->waiting = now_doing;
        }
        if (!x->tick(x->busy_ctx)) {
            stopped = true;
            break;
        }
    }
    x->waiting = NULL;
    return !stopped;
}

/* Whether the stopped jobs have ended: wait_until's done for all of them. */
static bool wait_orphans_ready(void *arg)
{
    return wait_orphans_ended(arg);
}

bool explore_wait(struct explore *x, explore_work_fn work, explore_work_fn drop, void *arg,
                  const char *what)
{
    return explore_wait_watched(x, work, drop, NULL, NULL, arg, what);
}

bool explore_wait_watched(struct explore *x, explore_work_fn work, explore_work_fn drop,
                          explore_work_fn stop, void (*describe)(void *arg, char *buf, size_t n),
                          void *arg, const char *what)
{
    struct explore_job *behind = NULL;
    bool ran = explore_wait_ready(x, work, drop, stop, describe, NULL, arg, what, &behind);
    if (behind != NULL) /* no ready: it has ended */
        explore_job_join(behind);
    return ran;
}

bool explore_wait_ready(struct explore *x, explore_work_fn work, explore_work_fn drop,
                        explore_work_fn stop, void (*describe)(void *arg, char *buf, size_t n),
                        bool (*ready)(void *arg), void *arg, const char *what,
                        struct explore_job **behind)
{
    *behind = NULL;
    if (x->tick == NULL) { /* headless: here and now */
        explore_wait_reap(x);
        work(arg);
        return true;
    }
    atomic_bool never = false;
    if (!wait_orphans_ended(x) && /* the stopped ones first, Esc still heard */
        !wait_until(x, &never, wait_orphans_ready, "the stopped work is finishing first",
                    NULL, x)) {
        drop(arg); /* never ran: drop frees what the caller made */
        return false;
    }
    explore_wait_reap(x);
    struct explore_job *j = xcalloc(1, sizeof *j);
    j->work = work;
    j->drop = drop;
    j->arg = arg;
    j->waited_for = ready != NULL; /* work lowers itself once ready (explore_wait_ready) */
    atomic_init(&j->finished, false);
    if (pthread_create(&j->tid, NULL, wait_job_main, j) != 0) {
        free(j);
        work(arg);
        return true;
    }
    if (!wait_until(x, &j->finished, ready, what, describe, arg)) {
        if (stop != NULL)
            stop(arg);
        explore_job_orphan(x, j);
        return false;
    }
    *behind = j;
    return true;
}
