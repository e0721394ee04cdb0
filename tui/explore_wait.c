/* tui/explore_wait.c: work that may keep keys waiting (an edit's build of a huge config,
 * loading a trace) on a thread of its own, while the explorer's tick redraws the status line
 * (what, or what the work says it does now, for how long) and listens for Esc (issue 27:
 * nothing freezes). Esc stops the wait and asks the work to end early when it can (a build
 * stops at its next pass): what is shown stays, and the work ends unseen (x->orphan), to be
 * joined and dropped before the next wait or at explore_fini. One piece of work at a time.
 * The threads run at a lower priority than the one that listens for keys. */
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
    explore_background_thread();
    j->work(j->arg);
    atomic_store(&j->finished, true);
    return NULL;
}

void explore_wait_reap(struct explore *x)
{
    if (x->orphan == NULL)
        return;
    pthread_join(x->orphan->tid, NULL);
    x->orphan->drop(x->orphan->arg);
    free(x->orphan);
    x->orphan = NULL;
}

/* Until *done, ticking (the first tick after tick_every_ms, so quick work never shows), the
 * status line saying what, or describe's words when given; false when Esc stopped the wait. */
static bool wait_until(struct explore *x, atomic_bool *done, const char *what,
                       void (*describe)(void *arg, char *buf, size_t n), void *arg)
{
    char now_doing[256];
    x->waiting = what;
    x->wait_t0 = wait_now_ms();
    x->tick_ms = x->wait_t0;
    bool stopped = false;
    while (!atomic_load(done)) {
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double now = wait_now_ms();
        if (now - x->tick_ms < x->tick_every_ms || atomic_load(done))
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

bool explore_wait(struct explore *x, explore_work_fn work, explore_work_fn drop, void *arg,
                  const char *what)
{
    return explore_wait_watched(x, work, drop, NULL, NULL, arg, what);
}

bool explore_wait_watched(struct explore *x, explore_work_fn work, explore_work_fn drop,
                          explore_work_fn stop, void (*describe)(void *arg, char *buf, size_t n),
                          void *arg, const char *what)
{
    if (x->tick == NULL) { /* headless: here and now */
        explore_wait_reap(x);
        work(arg);
        return true;
    }
    if (x->orphan != NULL && /* the stopped one first, Esc still heard */
        !wait_until(x, &x->orphan->finished, "the stopped work is finishing first", NULL,
                    NULL)) {
        drop(arg); /* never ran: drop frees what the caller made */
        return false;
    }
    explore_wait_reap(x);
    struct explore_job *j = xcalloc(1, sizeof *j);
    j->work = work;
    j->drop = drop;
    j->arg = arg;
    atomic_init(&j->finished, false);
    if (pthread_create(&j->tid, NULL, wait_job_main, j) != 0) {
        free(j);
        work(arg);
        return true;
    }
    if (!wait_until(x, &j->finished, what, describe, arg)) {
        if (stop != NULL)
            stop(arg);
        x->orphan = j;
        return false;
    }
    pthread_join(j->tid, NULL);
    free(j);
    return true;
}
