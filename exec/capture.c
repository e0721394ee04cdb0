/* exec/capture.c: per-rank recording of a run (exec/capture.h).
 *
 * A spool file is a 1 KiB header (struct capture_head: who, the rank's state, an error
 * message, the record count) followed by fixed-size records. It is mapped MAP_SHARED and
 * written in place: a record's fields are stored first and the count is published after
 * them (release store), so whatever the kernel holds when the process dies — even by
 * SIGKILL — is a consistent prefix. The mapping doubles (ftruncate + mremap) when full.
 * Writing a record costs two clock reads and a few stores: no system call per instruction,
 * which keeps the executor's overhead per instruction in the microseconds (bench/). */
#include <config.h>
#include "exec/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec/comm.h"
#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/xalloc.h"

#define CAPTURE_MAGIC "MTSPOOL2"
#define CAPTURE_HEAD_BYTES 1024
#define CAPTURE_MAX_RECS ((size_t)1 << 28)

struct capture_head {
    char magic[8];
    int32_t rank, dev, dp_rank, pid;
    int32_t state, signal;
    int64_t nrec; /* published with a release store after the record */
    int64_t cap;
    int32_t rec_bytes, pad;
    double alive_us; /* CLOCK_MONOTONIC of the last sign of life (record or wait poll) */
    double ended_us;      /* when a signal or exit() ended it (0: not so) */
    double wait_since_us; /* when its current wait began (as the first poll saw it) */
    int32_t waiting_for, pad2; /* COMM_WAIT_NONE, a rank, or COMM_WAIT_GROUP */
    struct capture_wait past[CAPTURE_PAST_WAITS]; /* the last waits that ended, newest first */
    char msg[512];
};

struct capture {
    int fd; /* -1: anonymous memory */
    char *path;
    unsigned char *map;
    size_t map_bytes, cap;
    int rank;
    double origin_us;
    bool full; /* growing failed: later records are dropped, the count stays consistent */
};

static struct capture *capture_signal_target;

static double capture_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static struct capture_head *capture_head(const struct capture *c)
{
    return (struct capture_head *)(void *)c->map;
}

static struct capture_rec *capture_rec_at(const struct capture *c, size_t i)
{
    return (struct capture_rec *)(void *)(c->map + CAPTURE_HEAD_BYTES) + i;
}

char *capture_spool_path(const char *dir, int rank)
{
    size_t n = strlen(dir) + 32;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/rank-%05d.spool", dir, rank);
    return p;
}

static size_t capture_bytes_for(size_t cap)
{
    return CAPTURE_HEAD_BYTES + cap * sizeof(struct capture_rec);
}

int capture_open(const char *spool_dir, int rank, int dev, int dp_rank, size_t cap_hint,
                 struct capture **out, struct mt_err *e)
{
    _Static_assert(sizeof(struct capture_head) <= CAPTURE_HEAD_BYTES, "spool header too big");
    *out = NULL;
    struct capture *c = xcalloc(1, sizeof *c);
    c->fd = -1;
    c->rank = rank;
    c->cap = cap_hint < 1024 ? 1024 : cap_hint > CAPTURE_MAX_RECS ? CAPTURE_MAX_RECS : cap_hint;
    c->map_bytes = capture_bytes_for(c->cap);
    if (spool_dir != NULL) {
        c->path = capture_spool_path(spool_dir, rank);
        c->fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (c->fd < 0 || ftruncate(c->fd, (off_t)c->map_bytes) != 0) {
            int rc = err_set(e, MT_EIO, "capture: %s: %s", c->path, strerror(errno));
            capture_close(c, true);
            return rc;
        }
        c->map = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
    } else {
        c->map =
            mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (c->map == MAP_FAILED) {
        c->map = NULL;
        int rc =
            err_set(e, MT_EIO, "capture: mmap of %zu bytes: %s", c->map_bytes, strerror(errno));
        capture_close(c, true);
        return rc;
    }
    struct capture_head *h = capture_head(c);
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CAPTURE_MAGIC, 8);
    h->rank = rank;
    h->dev = dev;
    h->dp_rank = dp_rank;
    h->pid = (int32_t)getpid();
    h->state = CAPTURE_RUNNING;
    h->cap = (int64_t)c->cap;
    h->rec_bytes = (int32_t)sizeof(struct capture_rec);
    c->origin_us = capture_clock_us();
    h->alive_us = c->origin_us;
    h->waiting_for = COMM_WAIT_NONE;
    *out = c;
    return MT_OK;
}

void capture_close(struct capture *c, bool remove)
{
    if (c == NULL)
        return;
    if (capture_signal_target == c)
        capture_signal_target = NULL;
    if (c->map)
        munmap(c->map, c->map_bytes);
    if (c->fd >= 0)
        close(c->fd);
    if (c->path && remove)
        unlink(c->path);
    free(c->path);
    free(c);
}

void capture_set_origin(struct capture *c)
{
    c->origin_us = capture_clock_us();
}

double capture_now_us(const struct capture *c)
{
    return capture_clock_us() - c->origin_us;
}

static bool capture_grow(struct capture *c)
{
    if (c->full || c->cap >= CAPTURE_MAX_RECS)
        return false;
    size_t cap = c->cap * 2, bytes = capture_bytes_for(cap);
    if (c->fd >= 0 && ftruncate(c->fd, (off_t)bytes) != 0)
        return false;
    void *m = mremap(c->map, c->map_bytes, bytes, MREMAP_MAYMOVE);
    if (m == MAP_FAILED)
        return false;
    c->map = m;
    c->map_bytes = bytes;
    c->cap = cap;
    capture_head(c)->cap = (int64_t)cap;
    return true;
}

static struct capture_rec *capture_next(struct capture *c)
{
    size_t n = (size_t)__atomic_load_n(&capture_head(c)->nrec, __ATOMIC_RELAXED);
    if (n >= c->cap && !capture_grow(c)) {
        c->full = true;
        return NULL;
    }
    struct capture_rec *r = capture_rec_at(c, n);
    memset(r, 0, sizeof *r);
    r->rank = c->rank;
    return r;
}

static void capture_publish(struct capture *c)
{
    __atomic_add_fetch(&capture_head(c)->nrec, 1, __ATOMIC_RELEASE);
    capture_head(c)->alive_us = capture_clock_us();
}

void capture_alive(void *ctx, int waiting_for)
{
    struct capture *c = ctx;
    struct capture_head *h = capture_head(c);
    h->alive_us = capture_clock_us();
    if (waiting_for == h->waiting_for)
        return;
    if (h->waiting_for != COMM_WAIT_NONE) { /* a wait ends: kept for the post-mortem */
        memmove(h->past + 1, h->past, (CAPTURE_PAST_WAITS - 1) * sizeof *h->past);
        h->past[0] = (struct capture_wait){h->wait_since_us, h->alive_us, h->waiting_for, 0};
    }
    if (waiting_for != COMM_WAIT_NONE)
        h->wait_since_us = h->alive_us;
    h->waiting_for = waiting_for;
}

void capture_instr(struct capture *c, const struct instr *in, int step, double t0_us, double t1_us,
                   size_t mem_bytes)
{
    struct capture_rec *r = capture_next(c);
    if (r == NULL)
        return;
    r->kind = CAPTURE_INSTR;
    r->t0_us = t0_us;
    r->t1_us = t1_us;
    r->value = (double)mem_bytes;
    r->op = (int32_t)in->op;
    r->mb = in->mb;
    r->part = in->part;
    r->stage = in->stage;
    r->peer = in->peer;
    r->step = step;
    capture_publish(c);
}

void capture_mem(struct capture *c, size_t bytes)
{
    struct capture_rec *r = capture_next(c);
    if (r == NULL)
        return;
    r->kind = CAPTURE_MEM;
    r->t0_us = r->t1_us = capture_now_us(c);
    r->value = (double)bytes;
    r->op = r->mb = r->part = r->stage = r->peer = r->step = -1;
    capture_publish(c);
}

void capture_mem_hook(size_t bytes, void *ctx)
{
    capture_mem(ctx, bytes);
}

void capture_step(struct capture *c, int step, double t0_us, double t1_us, double loss)
{
    struct capture_rec *r = capture_next(c);
    if (r == NULL)
        return;
    r->kind = CAPTURE_STEP;
    r->t0_us = t0_us;
    r->t1_us = t1_us;
    r->value = loss;
    r->op = r->mb = r->part = r->stage = r->peer = -1;
    r->step = step;
    capture_publish(c);
}

void capture_a2a(struct capture *c, int step, double t0_us, double t1_us, double bytes)
{
    struct capture_rec *r = capture_next(c);
    if (r == NULL)
        return;
    r->kind = CAPTURE_A2A;
    r->t0_us = t0_us;
    r->t1_us = t1_us;
    r->value = bytes;
    r->op = r->mb = r->part = r->stage = r->peer = -1;
    r->step = step;
    capture_publish(c);
}

void capture_set_state(struct capture *c, enum capture_state s, const char *msg)
{
    struct capture_head *h = capture_head(c);
    if (msg != NULL)
        snprintf(h->msg, sizeof h->msg, "%s", msg);
    h->alive_us = capture_clock_us();
    __atomic_store_n(&h->state, (int32_t)s, __ATOMIC_RELEASE);
}

/* Async-signal-safe: plain stores into the mapping. */
static void capture_mark_end(int state, int sig)
{
    struct capture *c = capture_signal_target;
    if (c != NULL && c->map != NULL) {
        struct capture_head *h = capture_head(c);
        if (h->state == CAPTURE_RUNNING) {
            h->signal = sig;
            /* not alive_us: a hung rank's silence before the end is the evidence */
            h->ended_us = capture_clock_us(); /* clock_gettime is async-signal-safe */
            __atomic_store_n(&h->state, (int32_t)state, __ATOMIC_RELEASE);
        }
    }
}

static void capture_on_signal(int sig)
{
    capture_mark_end(sig == SIGTERM || sig == SIGINT ? CAPTURE_TERMINATED : CAPTURE_CRASHED, sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void capture_on_exit(void)
{
    capture_mark_end(CAPTURE_EXITED, 0);
}

void capture_watch_signals(struct capture *c)
{
    static bool at_exit;
    capture_signal_target = c;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = capture_on_signal;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    if (!at_exit)
        at_exit = atexit(capture_on_exit) == 0;
}

const struct capture_rec *capture_records(const struct capture *c, size_t *n)
{
    *n = (size_t)__atomic_load_n(&capture_head(c)->nrec, __ATOMIC_ACQUIRE);
    return capture_rec_at(c, 0);
}

int capture_gather(struct capture *c, struct comm *cm, struct capture_rec **all, size_t *n,
                   struct mt_err *e)
{
    *all = NULL;
    *n = 0;
    size_t mine;
    const struct capture_rec *r = capture_records(c, &mine);
    size_t *counts = xcalloc((size_t)comm_size(cm), sizeof *counts);
    void *buf = NULL;
    int rc = comm_gather(cm, r, mine * sizeof *r, &buf, counts, e);
    if (rc == MT_OK && buf != NULL) {
        size_t total = 0;
        for (int i = 0; i < comm_size(cm); i++)
            total += counts[i];
        *all = buf;
        *n = total / sizeof **all;
    }
    free(counts);
    return rc;
}

int capture_spool_read(const char *dir, int rank, struct capture_spool *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    out->waiting_for = COMM_WAIT_NONE;
    char *path = capture_spool_path(dir, rank);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(path);
        return MT_OK;
    }
    int rc = MT_OK;
    struct stat st;
    struct capture_head h;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < CAPTURE_HEAD_BYTES ||
        pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, CAPTURE_MAGIC, 8) != 0 ||
        h.rec_bytes != (int32_t)sizeof(struct capture_rec)) {
        rc = err_set(e, MT_EPARSE, "%s: not a spool file of this version", path);
        goto out;
    }
    size_t room = ((size_t)st.st_size - CAPTURE_HEAD_BYTES) / sizeof(struct capture_rec);
    size_t n = h.nrec < 0 ? 0 : (size_t)h.nrec;
    if (n > room)
        n = room;
    out->dev = h.dev;
    out->dp_rank = h.dp_rank;
    out->pid = h.pid;
    out->state = h.state;
    out->signal = h.signal;
    out->alive_us = h.alive_us;
    out->ended_us = h.ended_us;
    out->waiting_for = h.waiting_for;
    out->wait_since_us = h.wait_since_us;
    memcpy(out->past, h.past, sizeof out->past);
    memcpy(out->msg, h.msg, sizeof out->msg);
    out->msg[sizeof out->msg - 1] = '\0';
    out->rec = xmalloc((n ? n : 1) * sizeof *out->rec);
    ssize_t want = (ssize_t)(n * sizeof *out->rec);
    if (n > 0 && pread(fd, out->rec, (size_t)want, CAPTURE_HEAD_BYTES) != want) {
        rc = err_set(e, MT_EIO, "%s: short read", path);
        goto out;
    }
    out->n = n;
out:
    close(fd);
    free(path);
    if (rc != MT_OK)
        capture_spool_fini(out);
    return rc;
}

void capture_spool_fini(struct capture_spool *s)
{
    if (s == NULL)
        return;
    free(s->rec);
    s->rec = NULL;
    s->n = 0;
}
