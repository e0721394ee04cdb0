/* exec/copy_cpu.c: the CPU backend's copy lanes for offload (OF/RL; exec/backend.h copy_*).
 * Host memory here is the host pool of exec/memcount.h, counted apart from the device's count,
 * so a run measures the bytes a device holds and the bytes it offloaded separately. Each lane
 * (device-to-host for OF, host-to-device for RL) is one helper thread running its copies one at
 * a time in the order they were started, as the simulator's copy lanes do (docs/design.md
 * "Offload"), while the rank's thread computes. The threads only copy and take host blocks:
 * every change of the device's count happens on the rank's thread (copy_start, copy_end), so
 * the memory hook and the per-instruction peaks see them in program order.
 * Unlike a GPU's copy engines the lanes compete with compute for the cores: where ranks
 * oversubscribe them (CI runs 4 ranks on 2), a lane's thread may not run for a whole
 * instruction, and its copy would end (and free its device blocks) late, by the scheduler's
 * whim. So a rank waiting for a copy, or about to compute, runs on its own thread the copies
 * its lanes have not started (copy_test, copy_help; exec/interp_offload.c says when). */
#include <config.h>
#include "exec/copy_cpu.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exec/memcount.h"
#include "exec/xformer.h"
#include "util/err.h"
#include "util/xalloc.h"

/* One activation handle's offload: its block slots and their host copies. */
struct copy_rec {
    void ***slots; /* [n] the handle's block slots (xformer_act_blocks) */
    void **host;   /* [n] host-pool copies, NULL where the slot is empty */
    int n;
    bool to_host; /* the copy started last: OF (true) or RL */
    bool done;    /* under its lane's lock */
    struct copy_rec *next;
};

struct copy_lane {
    pthread_t thread;
    bool started, stop;
    bool busy; /* a copy of its queue is running (on its thread, or on a rank's: copy_help) */
    pthread_mutex_t lock;
    pthread_cond_t work, finished;
    struct copy_rec *head, *tail;
};

static struct copy_lane copy_lanes[2] = {
    {.lock = PTHREAD_MUTEX_INITIALIZER,
     .work = PTHREAD_COND_INITIALIZER,
     .finished = PTHREAD_COND_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER,
     .work = PTHREAD_COND_INITIALIZER,
     .finished = PTHREAD_COND_INITIALIZER},
};

static struct copy_lane *copy_lane_of(const struct copy_rec *r)
{
    return &copy_lanes[r->to_host ? 0 : 1];
}

static void copy_run(struct copy_rec *r)
{
    for (int i = 0; i < r->n; i++) {
        void *dev = *r->slots[i];
        if (dev == NULL)
            continue;
        size_t bytes = memcount_size(dev);
        if (r->to_host) {
            r->host[i] = memcount_host_alloc(bytes);
            memcpy(r->host[i], dev, bytes);
        } else {
            memcpy(dev, r->host[i], bytes);
        }
    }
}

/* Under the lane's lock: its next copy, now running, or NULL while one runs or none waits. */
static struct copy_rec *copy_lane_take(struct copy_lane *l)
{
    if (l->head == NULL || l->busy)
        return NULL;
    l->busy = true;
    return l->head;
}

/* Under the lane's lock: runs r (taken), the lock released meanwhile; nothing else touches r
 * or its blocks until it is done. */
static void copy_lane_run(struct copy_lane *l, struct copy_rec *r)
{
    pthread_mutex_unlock(&l->lock);
    copy_run(r);
    pthread_mutex_lock(&l->lock);
    l->head = r->next;
    if (l->head == NULL)
        l->tail = NULL;
    r->next = NULL;
    r->done = true;
    l->busy = false;
    pthread_cond_broadcast(&l->finished);
    pthread_cond_signal(&l->work);
}

static void *copy_lane_main(void *arg)
{
    struct copy_lane *l = arg;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        struct copy_rec *r;
        while ((r = copy_lane_take(l)) == NULL && !l->stop)
            pthread_cond_wait(&l->work, &l->lock);
        if (r == NULL)
            break;
        copy_lane_run(l, r);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

static int copy_queue(struct copy_rec *r, struct mt_err *e)
{
    struct copy_lane *l = copy_lane_of(r);
    pthread_mutex_lock(&l->lock);
    if (!l->started) {
        l->stop = false;
        if (pthread_create(&l->thread, NULL, copy_lane_main, l) != 0) {
            r->done = true; /* never queued: nothing to wait for */
            pthread_mutex_unlock(&l->lock);
            return err_set(e, MT_EIO, "cannot start a copy lane thread");
        }
        l->started = true;
    }
    r->done = false;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
    pthread_cond_signal(&l->work);
    pthread_mutex_unlock(&l->lock);
    return MT_OK;
}

int copy_cpu_start(void *act, void **rec, struct mt_err *e)
{
    struct copy_rec *r = *rec;
    if (r == NULL) { /* OF: the device blocks stay until copy_end */
        r = xcalloc(1, sizeof *r);
        r->n = xformer_act_nblocks(act);
        r->slots = xcalloc((size_t)r->n, sizeof *r->slots);
        r->host = xcalloc((size_t)r->n, sizeof *r->host);
        xformer_act_blocks(act, r->slots);
        r->to_host = true;
    } else { /* RL: the device blocks are taken at its start */
        for (int i = 0; i < r->n; i++)
            if (r->host[i] != NULL)
                *r->slots[i] = memcount_alloc(memcount_size(r->host[i]));
        r->to_host = false;
    }
    *rec = r; /* the caller's, even if the lane does not start (copy_drop frees it) */
    return copy_queue(r, e);
}

int copy_cpu_test(void *rec, bool wait, bool *done, struct mt_err *e)
{
    struct copy_rec *r = rec;
    struct copy_lane *l = copy_lane_of(r);
    pthread_mutex_lock(&l->lock);
    while (wait && !r->done) {
        struct copy_rec *next = copy_lane_take(l); /* the lane idle: run its copies here */
        if (next != NULL)
            copy_lane_run(l, next);
        else
            pthread_cond_wait(&l->finished, &l->lock);
    }
    *done = r->done;
    pthread_mutex_unlock(&l->lock);
    return MT_OK;
}

void copy_cpu_help(void *rec)
{
    struct copy_rec *r = rec;
    struct copy_lane *l = copy_lane_of(r);
    pthread_mutex_lock(&l->lock);
    struct copy_rec *next;
    while (!r->done && (next = copy_lane_take(l)) != NULL)
        copy_lane_run(l, next);
    pthread_mutex_unlock(&l->lock);
}

void copy_cpu_drop(void *rec)
{
    struct copy_rec *r = rec;
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++)
        memcount_host_free(r->host[i]);
    free(r->host);
    free(r->slots);
    free(r);
}

void copy_cpu_end(void *rec)
{
    struct copy_rec *r = rec;
    if (!r->to_host) {
        copy_cpu_drop(r);
        return;
    }
    for (int i = 0; i < r->n; i++)
        if (r->host[i] != NULL) {
            memcount_free(*r->slots[i]);
            *r->slots[i] = NULL;
        }
}

void copy_cpu_close(void)
{
    for (int i = 0; i < 2; i++) {
        struct copy_lane *l = &copy_lanes[i];
        pthread_mutex_lock(&l->lock);
        bool started = l->started;
        l->stop = true;
        pthread_cond_signal(&l->work);
        pthread_mutex_unlock(&l->lock);
        if (started)
            pthread_join(l->thread, NULL);
        l->started = false;
    }
}
