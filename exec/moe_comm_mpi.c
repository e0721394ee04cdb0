/* exec/moe_comm_mpi.c: the MoE layer's ep group over MPI (exec/xformer_moe.h). Non-blocking
 * collectives polled with a deadline, as exec/comm_mpi.c polls its sends and receives. */
#include <config.h>
#include "exec/xformer_moe.h"

#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "util/err.h"
#include "util/xalloc.h"

struct moe_mpi {
    MPI_Comm comm;
    double timeout_s;
    int *scount, *sdispl, *rcount, *rdispl; /* in floats, [size] each */
};

static double mpi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int poll_done(struct moe_mpi *m, MPI_Request *r, const char *what, struct mt_err *e)
{
    double deadline = mpi_now() + m->timeout_s;
    for (unsigned spin = 0;; spin++) {
        int done = 0;
        if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return err_set(e, MT_EDEVICE, "moe %s: MPI_Test failed", what);
        if (done)
            return MT_OK;
        if ((spin & 255) == 255 && mpi_now() > deadline)
            return err_set(e, MT_ETIMEOUT, "moe %s: the ep group did not answer within %.3g s",
                           what, m->timeout_s);
        sched_yield();
    }
}

static int mpi_alltoall_int(struct moe_ep *g, const int *send, int *recv, int per, struct mt_err *e)
{
    struct moe_mpi *m = g->impl;
    MPI_Request r;
    if (MPI_Ialltoall(send, per, MPI_INT, recv, per, MPI_INT, m->comm, &r) != MPI_SUCCESS)
        return err_set(e, MT_EDEVICE, "moe counts: MPI_Ialltoall failed");
    return poll_done(m, &r, "counts all-to-all", e);
}

static int mpi_alltoallv(struct moe_ep *g, const float *send, const int *scount, const int *sdispl,
                         float *recv, const int *rcount, const int *rdispl, int width,
                         struct mt_err *e)
{
    struct moe_mpi *m = g->impl;
    for (int r = 0; r < g->size; r++) {
        m->scount[r] = scount[r] * width;
        m->sdispl[r] = sdispl[r] * width;
        m->rcount[r] = rcount[r] * width;
        m->rdispl[r] = rdispl[r] * width;
    }
    MPI_Request q;
    if (MPI_Ialltoallv(send, m->scount, m->sdispl, MPI_FLOAT, recv, m->rcount, m->rdispl, MPI_FLOAT,
                       m->comm, &q) != MPI_SUCCESS)
        return err_set(e, MT_EDEVICE, "moe rows: MPI_Ialltoallv failed");
    return poll_done(m, &q, "rows all-to-all", e);
}

int moe_ep_mpi_open(struct moe_ep *g, int color, int key, double timeout_s, struct mt_err *e)
{
    moe_ep_local(g);
    struct moe_mpi *m = xcalloc(1, sizeof *m);
    if (MPI_Comm_split(MPI_COMM_WORLD, color, key, &m->comm) != MPI_SUCCESS) {
        free(m);
        return err_set(e, MT_EDEVICE, "moe: MPI_Comm_split of the ep group failed");
    }
    MPI_Comm_size(m->comm, &g->size);
    MPI_Comm_rank(m->comm, &g->rank);
    m->timeout_s = timeout_s;
    m->scount = xcalloc(4 * (size_t)g->size, sizeof(int));
    m->sdispl = m->scount + g->size;
    m->rcount = m->sdispl + g->size;
    m->rdispl = m->rcount + g->size;
    g->impl = m;
    g->alltoall_int = mpi_alltoall_int;
    g->alltoallv = mpi_alltoallv;
    return MT_OK;
}

void moe_ep_mpi_close(struct moe_ep *g)
{
    struct moe_mpi *m = g->impl;
    if (!m)
        return;
    MPI_Comm_free(&m->comm);
    free(m->scount);
    free(m);
    g->impl = NULL;
}
