/* exec/comm_mpi.c: the executor's communication over MPI (exec/comm.h).
 *
 * Ranks are laid out replica-major: rank = dp_rank * pp + dev, so one data-parallel replica
 * of the plan occupies ranks [r * pp, (r + 1) * pp). A stage held by more than one rank
 * (Chimera: devices s and pp-1-s; data parallelism: the same device of every replica) gets
 * its own sub-communicator, made by one MPI_Comm_split per stage in stage order so that all
 * ranks make the same collective calls in the same order.
 *
 * Every wait is a poll (MPI_Test) with a deadline: blocking MPI calls cannot be interrupted
 * (and Open MPI's spin in them anyway). Between polls a wait yields the core (sched_yield).
 * When the node's ranks outnumber its cores (CI: 4 ranks on 2 cores) a spinning rank would
 * hold a core that a computing rank needs, so there a wait that has not ended within its
 * first few hundred polls sleeps between polls (comm_nap, COMM_NAP_OVER_US): a message then
 * waits for at most one nap after it arrives. With a core per rank the waits keep spinning:
 * measured on a 2-core VM, two ranks whose waits slept 20 us at a time computed ~25 % slower
 * in one run out of three (their cores went idle and woke 50,000 times a second), two that
 * spun never did. The world communicator returns errors (MPI_ERRORS_RETURN, set by
 * exec/launch.c) and every call goes through MPI_TRY.
 *
 * A wait polls, so it can say whom it waits for (the idle hook); but one MPI call can block
 * by itself: a rank whose peer stopped (SIGSTOP) may spin inside Open MPI's send of a message
 * to it (a 16 KiB activation to a frozen rank, on a loaded machine), never returning to say so,
 * and the launcher would then name it as the rank that hung. So while the idle hook is set, a
 * watchdog thread (no MPI calls; it only writes through the hook) watches every MPI call that
 * may progress: one that has not returned within COMM_WATCH_AFTER (or a quarter of the
 * timeout) is reported as a wait for the peer of the oldest send still in flight (the message
 * the library is stuck on), else for the call's own peer. The call's return takes it back. */
#include <config.h>
#include "exec/comm.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "exec/check.h"
#include "util/err.h"
#include "util/xalloc.h"

/* The watchdog's view of the rank's MPI calls (see the top). The main thread writes them
 * around each call; the watchdog reads them. */
struct comm_watch {
    pthread_t thread;
    bool running;
    bool stop;                  /* comm_watch_stop asks the thread to end (under lock) */
    atomic_llong call_since_ns; /* when the MPI call under way began; 0: none is */
    atomic_int call_peer;       /* whom that call is about: a rank or COMM_WAIT_GROUP */
    atomic_int send_peer;       /* the peer of the oldest send in flight, or COMM_WAIT_NONE */
    bool reported;              /* the watchdog reported the call under way (under lock) */
    pthread_mutex_t lock;       /* the hook is called by one thread at a time */
    pthread_cond_t wake;        /* ends the thread's nap when it is asked to stop */
};

struct comm {
    enum comm_kind kind;
    int rank, size, max_tag;
    int stages;
    double timeout_s;
    long nap_ns;     /* comm_nap's sleep once a wait stops yielding; 0: it never does */
    MPI_Comm world;  /* a duplicate of MPI_COMM_WORLD */
    MPI_Comm *group; /* [stages]: replica group of the stage, MPI_COMM_NULL if not held */
    int *group_size; /* [stages]: ranks holding the stage */
    struct comm_nccl *nccl;
    void (*idle)(void *ctx, int waiting_for);
    void *idle_ctx;
    struct comm_watch watch;
    struct comm_req *sends; /* the MPI sends in flight, oldest first */
};

/* With more ranks than cores, a wait yields for its first COMM_SPIN_POLLS polls, then naps
 * COMM_NAP_OVER_US between polls. */
#define COMM_SPIN_POLLS 256
#define COMM_NAP_OVER_US 100

/* A call blocked this long is reported (or a quarter of the timeout, if shorter). */
#define COMM_WATCH_AFTER_S 0.5

struct comm_req {
    MPI_Request r;
    int peer;
    void *event;                  /* NCCL: the send's completion event; NULL for MPI */
    struct comm_req *prev, *next; /* c->sends, in the order they began (MPI sends) */
    bool listed;                  /* in c->sends */
};

static double comm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifdef HAVE_NCCL
/* The idle hook around a wait the NCCL path does by itself: whom it waits for, before; done,
 * after (a timeout leaves the first standing for the launcher). */
static void comm_waiting(struct comm *c, int peer)
{
    if (c->idle)
        c->idle(c->idle_ctx, peer);
}

static int comm_nccl_waited(struct comm *c, int rc)
{
    if (rc == MT_OK)
        comm_waiting(c, COMM_WAIT_NONE);
    return rc;
}
#endif

static long long comm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* An MPI call about `peer` begins; comm_call_end when it returns (see the top). */
static void comm_call_begin(struct comm *c, int peer)
{
    atomic_store_explicit(&c->watch.call_peer, peer, memory_order_relaxed);
    atomic_store_explicit(&c->watch.call_since_ns, comm_now_ns(), memory_order_release);
}

static void comm_call_end(struct comm *c)
{
    atomic_store_explicit(&c->watch.call_since_ns, 0, memory_order_release);
    if (!c->watch.running)
        return;
    pthread_mutex_lock(&c->watch.lock);
    if (c->watch.reported) { /* it came back after all: computing again */
        c->watch.reported = false;
        c->idle(c->idle_ctx, COMM_WAIT_NONE);
    }
    pthread_mutex_unlock(&c->watch.lock);
}

/* comm_call_end, passing the call's result through (for MPI_TRY). */
static int comm_call_ended(struct comm *c, int rc)
{
    comm_call_end(c);
    return rc;
}

static void *comm_watch_run(void *arg)
{
    struct comm *c = arg;
    double after = c->timeout_s / 4 < COMM_WATCH_AFTER_S ? c->timeout_s / 4 : COMM_WATCH_AFTER_S;
    long long after_ns = (long long)(after * 1e9);
    long long nap_ns = after_ns / 4 > 1000000 ? after_ns / 4 : 1000000;
    pthread_mutex_lock(&c->watch.lock);
    while (!c->watch.stop) {
        struct timespec until; /* a nap, or until comm_watch_stop wakes it */
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += nap_ns;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&c->watch.wake, &c->watch.lock, &until);
        long long since = atomic_load_explicit(&c->watch.call_since_ns, memory_order_acquire);
        if (since != 0 && !c->watch.reported && comm_now_ns() - since > after_ns) {
            int peer = atomic_load(&c->watch.send_peer);
            c->watch.reported = true;
            if (peer == COMM_WAIT_NONE)
                peer = atomic_load(&c->watch.call_peer);
            c->idle(c->idle_ctx, peer);
        }
    }
    pthread_mutex_unlock(&c->watch.lock);
    return NULL;
}

static void comm_watch_stop(struct comm *c)
{
    if (!c->watch.running)
        return;
    pthread_mutex_lock(&c->watch.lock);
    c->watch.stop = true;
    pthread_cond_signal(&c->watch.wake);
    pthread_mutex_unlock(&c->watch.lock);
    pthread_join(c->watch.thread, NULL);
    c->watch.running = false;
    c->watch.reported = false;
}

/* The sends in flight, oldest first: the watchdog names the oldest one's peer. */
static void comm_sends_changed(struct comm *c)
{
    atomic_store(&c->watch.send_peer, c->sends ? c->sends->peer : COMM_WAIT_NONE);
}

static void comm_sends_add(struct comm *c, struct comm_req *r)
{
    r->listed = true;
    r->next = NULL;
    r->prev = NULL;
    struct comm_req **at = &c->sends;
    while (*at != NULL) {
        r->prev = *at;
        at = &(*at)->next;
    }
    *at = r;
    comm_sends_changed(c);
}

static void comm_sends_remove(struct comm *c, struct comm_req *r)
{
    if (!r->listed)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else if (c->sends == r)
        c->sends = r->next;
    if (r->next)
        r->next->prev = r->prev;
    comm_sends_changed(c);
}

/* Gives the core up between polls `spin` and `spin + 1` of a wait (see the top). */
static void comm_nap(const struct comm *c, unsigned spin)
{
    if (c->nap_ns == 0 || spin < COMM_SPIN_POLLS) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, c->nap_ns};
    nanosleep(&ts, NULL);
}

/* Polls a request until it completes or the deadline passes; `peer` is who it waits for
 * (a rank or COMM_WAIT_GROUP), for the idle hook. */
static int comm_poll(struct comm *c, MPI_Request *r, int peer, const char *what,
                     struct mt_err *e)
{
    double deadline = comm_now() + c->timeout_s;
    for (unsigned spin = 0;; spin++) {
        int done = 0;
        MPI_TRY(e, (comm_call_begin(c, peer),
                    comm_call_ended(c, MPI_Test(r, &done, MPI_STATUS_IGNORE))));
        if (done) {
            if (spin >= 15 && c->idle)
                c->idle(c->idle_ctx, COMM_WAIT_NONE);
            return MT_OK;
        }
        if ((spin & 15) == 15) {
            if (c->idle)
                c->idle(c->idle_ctx, peer);
            if (comm_now() > deadline) {
                /* Leave the request behind: the job is about to be ended. */
                return err_set(e, MT_ETIMEOUT, "%s: nothing within %.3g s", what, c->timeout_s);
            }
            comm_nap(c, spin);
        }
    }
}

int comm_open(enum comm_kind kind, const struct comm_layout *l, double timeout_s, struct comm **out,
              struct mt_err *e)
{
    *out = NULL;
    struct comm *c = xcalloc(1, sizeof *c);
    c->kind = kind;
    c->timeout_s = timeout_s;
    c->stages = l->stages;
    c->world = MPI_COMM_NULL;
    pthread_mutex_init(&c->watch.lock, NULL);
    pthread_cond_init(&c->watch.wake, NULL);
    atomic_init(&c->watch.send_peer, COMM_WAIT_NONE);
    c->group = xcalloc((size_t)l->stages, sizeof *c->group);
    c->group_size = xcalloc((size_t)l->stages, sizeof *c->group_size);
    for (int s = 0; s < l->stages; s++)
        c->group[s] = MPI_COMM_NULL;
    int rc = MT_OK;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &c->world) != MPI_SUCCESS) {
        rc = err_set(e, MT_EDEVICE, "MPI_Comm_dup failed");
        goto fail;
    }
    MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->world, &c->rank);
    MPI_Comm_size(c->world, &c->size);
    void *ub = NULL;
    int flag = 0;
    MPI_Comm_get_attr(c->world, MPI_TAG_UB, &ub, &flag);
    c->max_tag = flag && ub ? *(int *)ub : 32767;
    c->nap_ns = 0;
    MPI_Comm node;
    if (MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        int local = 1;
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
        if (local > sysconf(_SC_NPROCESSORS_ONLN))
            c->nap_ns = 1000L * COMM_NAP_OVER_US;
    }
#ifdef PR_SET_TIMERSLACK
    /* a nap would otherwise end up to the default 50 us slack later */
    if (c->nap_ns > 0)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
    if (c->size != l->pp * l->dp) {
        rc = err_set(e, MT_EINVAL, "comm: %d ranks for pp %d x dp %d", c->size, l->pp, l->dp);
        goto fail;
    }
    int dev = c->rank % l->pp;
    for (int s = 0; s < l->stages; s++) {
        int holders = 0;
        for (int d = 0; d < l->pp; d++)
            holders += l->holds[d * l->stages + s];
        c->group_size[s] = holders * l->dp;
        if (c->group_size[s] <= 1)
            continue;
        bool mine = l->holds[dev * l->stages + s];
        if (MPI_Comm_split(c->world, mine ? s : MPI_UNDEFINED, c->rank, &c->group[s]) !=
            MPI_SUCCESS) {
            rc = err_set(e, MT_EDEVICE, "MPI_Comm_split for stage %d failed", s);
            goto fail;
        }
        if (c->group[s] != MPI_COMM_NULL)
            MPI_Comm_set_errhandler(c->group[s], MPI_ERRORS_RETURN);
    }
    if (kind == COMM_NCCL) {
#ifdef HAVE_NCCL
        rc = comm_nccl_open(c, l, &c->nccl, e);
        if (rc != MT_OK)
            goto fail;
#else
        rc = err_set(e, MT_EUNSUPPORTED, "built without NCCL; reconfigure with --with-nccl");
        goto fail;
#endif
    }
    *out = c;
    return MT_OK;
fail:
    comm_close(c);
    return rc;
}

void comm_close(struct comm *c)
{
    if (c == NULL)
        return;
    comm_watch_stop(c);
    pthread_mutex_destroy(&c->watch.lock);
    pthread_cond_destroy(&c->watch.wake);
#ifdef HAVE_NCCL
    comm_nccl_close(c->nccl);
#endif
    for (int s = 0; s < c->stages; s++)
        if (c->group[s] != MPI_COMM_NULL)
            MPI_Comm_free(&c->group[s]);
    if (c->world != MPI_COMM_NULL)
        MPI_Comm_free(&c->world);
    free(c->group);
    free(c->group_size);
    free(c);
}

int comm_rank(const struct comm *c)
{
    return c->rank;
}

int comm_size(const struct comm *c)
{
    return c->size;
}

enum comm_kind comm_kind(const struct comm *c)
{
    return c->kind;
}

void comm_set_timeout(struct comm *c, double timeout_s)
{
    c->timeout_s = timeout_s;
}

void comm_set_idle_hook(struct comm *c, void (*fn)(void *ctx, int waiting_for), void *ctx)
{
    comm_watch_stop(c);
    c->idle = fn;
    c->idle_ctx = ctx;
    if (fn == NULL || c->nccl != NULL) /* NCCL's waits poll with their own deadline */
        return;
    c->watch.stop = false;
    c->watch.running = pthread_create(&c->watch.thread, NULL, comm_watch_run, c) == 0;
}

int comm_group_size(const struct comm *c, int stage)
{
    return stage >= 0 && stage < c->stages ? c->group_size[stage] : 0;
}

static int comm_count(size_t n, struct mt_err *e)
{
    if (n > INT32_MAX)
        return err_set(e, MT_EINVAL, "comm: message of %zu floats is over MPI's int count", n);
    return MT_OK;
}

int comm_send(struct comm *c, const float *buf, size_t n, int peer, int tag, struct comm_req **req,
              struct mt_err *e)
{
    *req = NULL;
    TRY(comm_count(n, e));
    struct comm_req *r = xcalloc(1, sizeof *r);
    r->peer = peer;
    r->event = NULL;
#ifdef HAVE_NCCL
    if (c->nccl) {
        int rc = comm_nccl_send(c->nccl, buf, n, peer, &r->event, e);
        if (rc != MT_OK) {
            free(r);
            return rc;
        }
        *req = r;
        return MT_OK;
    }
#endif
    comm_call_begin(c, peer);
    int rc = MPI_Isend(buf, (int)n, MPI_FLOAT, peer, tag, c->world, &r->r);
    comm_call_end(c);
    if (rc != MPI_SUCCESS) {
        free(r);
        char what[256];
        return check_fail(e, "MPI", "MPI_Isend", check_mpi_string(rc, what, sizeof what), __FILE__,
                          __LINE__);
    }
    comm_sends_add(c, r);
    *req = r;
    return MT_OK;
}

int comm_test(struct comm *c, struct comm_req **req, bool *done, struct mt_err *e)
{
    *done = true;
    if (*req == NULL)
        return MT_OK;
    int flag = 0;
#ifdef HAVE_NCCL
    if (c->nccl) {
        bool fired = false;
        TRY(comm_nccl_test((*req)->event, &fired, e));
        flag = fired;
    } else
#endif
        MPI_TRY(e, (comm_call_begin(c, (*req)->peer),
                    comm_call_ended(c, MPI_Test(&(*req)->r, &flag, MPI_STATUS_IGNORE))));
    *done = flag != 0;
    if (flag) {
        comm_sends_remove(c, *req);
        free(*req);
        *req = NULL;
    }
    return MT_OK;
}

int comm_wait(struct comm *c, struct comm_req **req, struct mt_err *e)
{
    if (*req == NULL)
        return MT_OK;
    char what[64];
    snprintf(what, sizeof what, "send to rank %d not taken", (*req)->peer);
#ifdef HAVE_NCCL
    if (c->nccl) {
        comm_waiting(c, (*req)->peer);
        TRY(comm_nccl_waited(
            c, comm_nccl_wait(c->nccl, (*req)->event, (*req)->peer, c->timeout_s, e)));
    } else
#endif
        TRY(comm_poll(c, &(*req)->r, (*req)->peer, what, e));
    comm_sends_remove(c, *req);
    free(*req);
    *req = NULL;
    return MT_OK;
}

int comm_recv(struct comm *c, float *buf, size_t n, int peer, int tag, const char *what,
              struct mt_err *e)
{
    TRY(comm_count(n, e));
#ifdef HAVE_NCCL
    if (c->nccl) {
        comm_waiting(c, peer);
        return comm_nccl_waited(c, comm_nccl_recv(c->nccl, buf, n, peer, c->timeout_s, e));
    }
#endif
    MPI_Request r;
    MPI_TRY(e, (comm_call_begin(c, peer),
                comm_call_ended(c, MPI_Irecv(buf, (int)n, MPI_FLOAT, peer, tag, c->world, &r))));
    char label[160];
    snprintf(label, sizeof label, "waiting for rank %d (%s)", peer, what);
    return comm_poll(c, &r, peer, label, e);
}

int comm_allreduce(struct comm *c, int stage, float *buf, size_t n, struct mt_err *e)
{
    if (stage < 0 || stage >= c->stages)
        return err_set(e, MT_EINVAL, "comm: allreduce of stage %d out of range", stage);
    if (c->group[stage] == MPI_COMM_NULL)
        return MT_OK;
    TRY(comm_count(n, e));
#ifdef HAVE_NCCL
    if (c->nccl) {
        comm_waiting(c, COMM_WAIT_GROUP);
        return comm_nccl_waited(c, comm_nccl_allreduce(c->nccl, stage, buf, n, c->timeout_s, e));
    }
#endif
    MPI_Request r;
    MPI_TRY(e, (comm_call_begin(c, COMM_WAIT_GROUP),
                comm_call_ended(c, MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM,
                                                  c->group[stage], &r))));
    char label[96];
    snprintf(label, sizeof label, "allreduce of stage %d over %d replicas", stage,
             c->group_size[stage]);
    return comm_poll(c, &r, COMM_WAIT_GROUP, label, e);
}

int comm_step_end(struct comm *c, int status, double loss_sum, double step_s, struct comm_step *out,
                  struct mt_err *e)
{
    /* The maxima ride in one allreduce: status, then a rank that reports it (encoded so
     * that MAX picks one), then the step time; the loss needs a sum. */
    double mx[3] = {(double)status, status ? (double)c->rank : -1.0, step_s};
    double sum = loss_sum;
    MPI_Request r[2];
    MPI_TRY(e, (comm_call_begin(c, COMM_WAIT_GROUP),
                comm_call_ended(c, MPI_Iallreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX,
                                                  c->world, &r[0]))));
    MPI_TRY(e, (comm_call_begin(c, COMM_WAIT_GROUP),
                comm_call_ended(c, MPI_Iallreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM,
                                                  c->world, &r[1]))));
    TRY(comm_poll(c, &r[0], COMM_WAIT_GROUP, "end-of-step status from every rank", e));
    TRY(comm_poll(c, &r[1], COMM_WAIT_GROUP, "end-of-step loss from every rank", e));
    out->status = (int)mx[0];
    out->bad_rank = (int)mx[1];
    out->step_s = mx[2];
    out->loss_sum = sum;
    return MT_OK;
}

int comm_barrier(struct comm *c, struct mt_err *e)
{
    MPI_Request r;
    MPI_TRY(e, (comm_call_begin(c, COMM_WAIT_GROUP),
                comm_call_ended(c, MPI_Ibarrier(c->world, &r))));
    return comm_poll(c, &r, COMM_WAIT_GROUP, "barrier", e);
}

int comm_gather(struct comm *c, const void *buf, size_t bytes, void **all, size_t *counts,
                struct mt_err *e)
{
    *all = NULL;
    if (bytes > INT32_MAX)
        return err_set(e, MT_EINVAL, "comm: gather of %zu bytes is over MPI's int count", bytes);
    int mine = (int)bytes;
    int *cnt = c->rank == 0 ? xcalloc((size_t)c->size, sizeof *cnt) : NULL;
    int *disp = c->rank == 0 ? xcalloc((size_t)c->size, sizeof *disp) : NULL;
    int rc = MT_OK;
    MPI_Request r;
    if (MPI_Igather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, c->world, &r) != MPI_SUCCESS) {
        rc = err_set(e, MT_EDEVICE, "rank %d: MPI_Igather of trace sizes failed", c->rank);
        goto out;
    }
    if ((rc = comm_poll(c, &r, COMM_WAIT_GROUP, "gathering trace sizes", e)) != MT_OK)
        goto out;
    unsigned char *dst = NULL;
    if (c->rank == 0) {
        size_t total = 0;
        for (int i = 0; i < c->size; i++) {
            counts[i] = (size_t)cnt[i];
            if (total + (size_t)cnt[i] > INT32_MAX) {
                rc = err_set(e, MT_EINVAL, "comm: gathered trace over 2 GiB");
                goto out;
            }
            disp[i] = (int)total;
            total += (size_t)cnt[i];
        }
        dst = xmalloc(total ? total : 1);
    }
    if (MPI_Igatherv(buf, mine, MPI_BYTE, dst, cnt, disp, MPI_BYTE, 0, c->world, &r) !=
        MPI_SUCCESS) {
        free(dst);
        rc = err_set(e, MT_EDEVICE, "rank %d: MPI_Igatherv of the trace failed", c->rank);
        goto out;
    }
    if ((rc = comm_poll(c, &r, COMM_WAIT_GROUP, "gathering the trace", e)) != MT_OK) {
        free(dst);
        goto out;
    }
    *all = dst;
out:
    free(cnt);
    free(disp);
    return rc;
}

static int comm_reduce_doubles(struct comm *c, double *v, int n, MPI_Op op, struct mt_err *e)
{
    MPI_Request r;
    MPI_TRY(e, (comm_call_begin(c, COMM_WAIT_GROUP),
                comm_call_ended(c, MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, c->world,
                                                  &r))));
    return comm_poll(c, &r, COMM_WAIT_GROUP, "allreduce of the run's figures", e);
}

int comm_max_doubles(struct comm *c, double *v, int n, struct mt_err *e)
{
    return comm_reduce_doubles(c, v, n, MPI_MAX, e);
}

int comm_bcast(struct comm *c, int stage, void *buf, size_t bytes, int root, struct mt_err *e)
{
    MPI_Comm m = stage < 0 ? c->world : c->group[stage];
    if (m == MPI_COMM_NULL)
        return MT_OK;
    if (bytes > INT32_MAX)
        return err_set(e, MT_EINVAL, "comm: broadcast of %zu bytes", bytes);
    MPI_Request r;
    MPI_TRY(e, (comm_call_begin(c, COMM_WAIT_GROUP),
                comm_call_ended(c, MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, m, &r))));
    return comm_poll(c, &r, COMM_WAIT_GROUP, "broadcast", e);
}

int comm_group_rank(const struct comm *c, int stage)
{
    MPI_Comm m = stage < 0 ? c->world : c->group[stage];
    if (m == MPI_COMM_NULL)
        return -1;
    int r = -1;
    MPI_Comm_rank(m, &r);
    return r;
}
