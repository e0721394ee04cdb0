/* exec/interp_offload.c: what a rank holds in flight beside its compute (exec/interp.c's
 * header): the buffers between instructions, sends until MPI completes them, and offload's
 * copies (OF/RL, issue 29) until the backend's copy lanes finish them. Both are polled after
 * every instruction and waited for at the end of a step.
 *
 * Offload. OF(mb, s) starts a copy of FW(mb, s)'s activations to host memory on the backend's
 * device-to-host lane; the device blocks stay until the copy ends (the poll that sees it done
 * frees them). RL(mb, s) takes the device blocks at its start and queues the copy back on the
 * host-to-device lane; an RL whose OF is still copying first waits for it (the simulator's
 * dependency RL after OF). The backward (or recompute) of an offloaded forward waits for its
 * RL to end, which frees the host copies. Where the lanes share the rank's cores (the CPU
 * backend's threads; a GPU's copy engines are its own), before a compute instruction the rank
 * ends its OFs (waiting for a running one, running itself one its lane has not started) and
 * runs the RLs its lanes have not started (exec/backend.h copy_help): an OF then overlaps the
 * sends, receives and copies after its forward, an RL compute as well, and what an OF gives
 * back is given back before the compute after it, as the simulator has it for a copy shorter
 * than that gap, not whenever the OS scheduler lets a lagging lane run (exec/copy_cpu.c). A
 * copy moves bytes and changes no value, so a run computes what it would without offload, bit
 * for bit. Each (mb, s) goes
 *     NONE --OF--> OUT --copy ends--> AWAY --RL--> IN --copy ends--> NONE. */
#include <config.h>
#include "exec/interp_internal.h"

#include <stdlib.h>

#include "exec/backend.h"
#include "exec/comm.h"
#include "util/err.h"
#include "util/xalloc.h"

/* A buffer between instructions (an activation or gradient of B x T x C floats), counted. */
float *interp_p2p_alloc(struct interp *x)
{
    size_t before = x->b->mem_current();
    float *buf = x->b->buf_alloc(x->nc);
    x->hidden_bytes = (double)(x->b->mem_current() - before);
    if (++x->p2p_now > x->p2p_max)
        x->p2p_max = x->p2p_now;
    return buf;
}

void interp_free_buf(struct interp *x, float **slot)
{
    if (*slot != NULL) {
        x->b->buf_free(*slot);
        x->p2p_now--;
        *slot = NULL;
    }
}

int interp_send(struct interp *x, float **slot, int peer, int tag, struct mt_err *e)
{
    if (x->nsends == x->cap_sends) {
        x->cap_sends = x->cap_sends ? 2 * x->cap_sends : 8;
        x->sends = xreallocarray(x->sends, (size_t)x->cap_sends, sizeof *x->sends);
    }
    struct interp_send *s = &x->sends[x->nsends];
    s->buf = *slot;
    s->host = NULL;
    const float *wire = s->buf;
    if (x->staged) {
        s->host = xmalloc(x->nc * sizeof(float));
        TRY(x->b->buf_to_host(s->host, s->buf, x->nc, e));
        wire = s->host;
    }
    TRY(comm_send(x->cm, wire, x->nc, peer, tag, &s->req, e));
    *slot = NULL;
    x->nsends++;
    return MT_OK;
}

int interp_recv(struct interp *x, float **slot, int peer, int tag, const char *what,
                       struct mt_err *e)
{
    *slot = interp_p2p_alloc(x);
    float *wire = x->staged ? x->stage_host : *slot;
    TRY(comm_recv(x->cm, wire, x->nc, peer, tag, what, e));
    if (x->staged)
        TRY(x->b->buf_from_host(*slot, wire, x->nc, e));
    return MT_OK;
}

/* Ends the copy of slot k once it is done (with `wait`, waiting for it). */
static int interp_copy_poll(struct interp *x, size_t k, bool wait, struct mt_err *e)
{
    struct interp_copy *c = &x->copy[k];
    if (c->state != INTERP_COPY_OUT && c->state != INTERP_COPY_IN)
        return MT_OK;
    bool done = false;
    TRY(x->b->copy_test(c->rec, wait, &done, e));
    if (!done)
        return MT_OK;
    x->b->copy_end(c->rec); /* OF: frees the device blocks; RL: the host copies and rec */
    if (c->state == INTERP_COPY_OUT) {
        c->state = INTERP_COPY_AWAY;
    } else {
        c->state = INTERP_COPY_NONE;
        c->rec = NULL;
    }
    x->ncopies--;
    return MT_OK;
}

int interp_copy(struct interp *x, const struct instr *in, const char **why, struct mt_err *e)
{
    size_t k = interp_slot(x, in->mb, in->stage);
    struct interp_copy *c = &x->copy[k];
    *why = NULL;
    if (in->op == OP_OF) {
        if (x->act[k] == NULL || c->state != INTERP_COPY_NONE) {
            *why = x->act[k] == NULL ? "no activations to offload (forward missing)"
                                     : "its activations are offloaded already";
            return MT_EINFEASIBLE;
        }
    } else {
        if (c->state != INTERP_COPY_OUT && c->state != INTERP_COPY_AWAY) {
            *why = "nothing to reload (no OF before it)";
            return MT_EINFEASIBLE;
        }
        TRY(interp_copy_poll(x, k, true, e)); /* RL after its OF */
    }
    TRY(x->b->copy_start(x->act[k], &c->rec, e));
    c->state = in->op == OP_OF ? INTERP_COPY_OUT : INTERP_COPY_IN;
    x->ncopies++;
    return MT_OK;
}

int interp_copy_ready(struct interp *x, size_t k, const char **why, struct mt_err *e)
{
    struct interp_copy *c = &x->copy[k];
    *why = NULL;
    if (c->state == INTERP_COPY_OUT || c->state == INTERP_COPY_AWAY) {
        *why = "its activations are offloaded (no RL before it)";
        return MT_EINFEASIBLE;
    }
    return interp_copy_poll(x, k, true, e);
}

int interp_copies_before_compute(struct interp *x, struct mt_err *e)
{
    size_t n = (size_t)x->N * x->S;
    for (size_t k = 0; k < n; k++) {
        struct interp_copy *c = &x->copy[k];
        if (x->b->copy_help == NULL) /* lanes of their own (CUDA's copy engines) */
            break;
        if (c->state == INTERP_COPY_OUT)
            TRY(interp_copy_poll(x, k, true, e));
        else if (c->state == INTERP_COPY_IN)
            x->b->copy_help(c->rec);
    }
    return interp_reap(x, false, e);
}

void interp_copies_fini(struct interp *x)
{
    if (x->copy == NULL)
        return;
    size_t n = (size_t)x->N * x->S;
    for (size_t k = 0; k < n; k++) {
        struct interp_copy *c = &x->copy[k];
        if (c->rec == NULL)
            continue;
        bool done;
        struct mt_err ignore = {0};
        x->b->copy_test(c->rec, true, &done, &ignore); /* the lane must let go of it */
        x->b->copy_drop(c->rec);
    }
    free(x->copy);
    x->copy = NULL;
    x->b->copy_close();
}

/* Completes finished sends and copies, freeing what they held; with `wait`, all of them. */
int interp_reap(struct interp *x, bool wait, struct mt_err *e)
{
    size_t n = (size_t)x->N * x->S;
    for (size_t k = 0; x->ncopies > 0 && k < n; k++)
        TRY(interp_copy_poll(x, k, wait, e));
    int kept = 0;
    for (int i = 0; i < x->nsends; i++) {
        struct interp_send *s = &x->sends[i];
        bool done = true;
        if (wait)
            TRY(comm_wait(x->cm, &s->req, e));
        else
            TRY(comm_test(x->cm, &s->req, &done, e));
        if (done) {
            x->b->buf_free(s->buf);
            x->p2p_now--;
            free(s->host);
        } else {
            x->sends[kept++] = *s;
        }
    }
    x->nsends = kept;
    return MT_OK;
}

