/* exec/interp_weights.c: which weights an instruction of an asynchronous plan reads, and the
 * updates that make them (exec/interp.c's header: "Weight versions", "PipeMare's two
 * techniques"). */
#include <config.h>
#include "exec/interp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

/* Each stage's staleness in the plan (the largest delay of a backward, in updates), as
 * sim/core/async.c counts it, from this device's own list: T1 and T2 need it. Then T2's velocity
 * (zeros) for every stage that has stale backwards. Uses x->ver as scratch. */
int interp_setup_async(struct interp *x, struct mt_err *e)
{
    const struct instr *list = plan_instrs(x->p, x->dev);
    int len = plan_len(x->p, x->dev);
    for (int i = 0; i < len; i++) {
        const struct instr *in = &list[i];
        int pi = in->stage >= 0 && in->stage < x->S ? x->part_of_stage[in->stage] : -1;
        if (pi < 0)
            continue;
        struct interp_part *ip = &x->part[pi];
        size_t k = interp_slot(x, in->mb, in->stage);
        if (plan_op_is_forward(in->op))
            x->ver[k] = ip->t;
        else if (in->op == OP_BW && ip->t - x->ver[k] > ip->tau)
            ip->tau = ip->t - x->ver[k];
        else if (in->op == OP_OS)
            ip->t++;
    }
    for (int i = 0; i < x->nparts; i++) {
        struct interp_part *ip = &x->part[i];
        ip->t = 0;
        if (x->o->correction_decay <= 0 || ip->tau < 1)
            continue;
        ip->gamma = (float)pow(x->o->correction_decay, 1.0 / ip->tau);
        size_t n = x->b->stage_nparams(ip->st);
        float *zeros = xcalloc(n, sizeof(float));
        size_t before = x->b->mem_current();
        ip->velocity = x->b->buf_alloc(n);
        x->correction_bytes += (double)(x->b->mem_current() - before);
        int rc = x->b->buf_from_host(ip->velocity, zeros, n, e);
        free(zeros);
        TRY(rc);
    }
    memset(x->ver, 0, (size_t)x->N * x->S * sizeof *x->ver);
    return MT_OK;
}

static struct interp_version *interp_version_find(struct interp_part *ip, int ver)
{
    for (int i = 0; i < ip->nvers; i++)
        if (ip->vers[i].ver == ver)
            return &ip->vers[i];
    return NULL;
}

/* A forward read the current version: PipeDream takes a reference on it. */
void interp_version_read(struct interp *x, struct interp_part *ip)
{
    struct interp_version *v = interp_version_find(ip, ip->t);
    if (v == NULL) {
        if (ip->nvers == ip->cap_vers) {
            ip->cap_vers = ip->cap_vers ? 2 * ip->cap_vers : 4;
            ip->vers = xreallocarray(ip->vers, (size_t)ip->cap_vers, sizeof *ip->vers);
        }
        v = &ip->vers[ip->nvers++];
        *v = (struct interp_version){.ver = ip->t};
    }
    v->refs++;
}

/* Before an OS replaces the current version: keep a copy while micro-batches in flight read
 * it. */
static int interp_version_stash(struct interp *x, struct interp_part *ip, struct mt_err *e)
{
    struct interp_version *v = interp_version_find(ip, ip->t);
    if (v == NULL || v->refs == 0)
        return MT_OK;
    size_t n = x->b->stage_nparams(ip->st);
    size_t before = x->b->mem_current();
    v->buf = x->b->buf_alloc(n);
    v->bytes = x->b->mem_current() - before;
    TRY(x->b->buf_copy(v->buf, x->b->stage_params(ip->st), n, e));
    x->stash_now += (double)v->bytes;
    x->stashed++;
    if (x->stash_now > x->stash_peak)
        x->stash_peak = x->stash_now;
    if (x->stashed > x->max_stashed)
        x->max_stashed = x->stashed;
    return MT_OK;
}

/* The backward of a micro-batch that read version ver is done: drop its reference, and the
 * copy with the last one. */
void interp_version_release(struct interp *x, struct interp_part *ip, int ver)
{
    struct interp_version *v = interp_version_find(ip, ver);
    if (v == NULL || --v->refs > 0)
        return;
    if (v->buf != NULL) {
        x->b->buf_free(v->buf);
        x->stash_now -= (double)v->bytes;
        x->stashed--;
    }
    *v = ip->vers[--ip->nvers];
}

/* Runs an RC or BW of (mb, stage) on the weights the scheme gives it: PipeDream the version
 * its forward read, Async with T2 the current ones extrapolated back by its delay, otherwise
 * the current ones. `run` is the instruction itself. */
int interp_on_weights(struct interp *x, struct interp_part *ip, int delay, int ver,
                      int (*run)(struct interp *x, void *arg, struct mt_err *e), void *arg,
                      struct mt_err *e)
{
    float *w = NULL, *tmp = NULL;
    if (delay > 0 && x->stash) {
        struct interp_version *v = interp_version_find(ip, ver);
        if (v == NULL || v->buf == NULL)
            return err_set(e, MT_EINFEASIBLE, "weight version %d was not stashed", ver);
        w = v->buf;
    } else if (delay > 0 && ip->velocity != NULL) {
        size_t n = x->b->stage_nparams(ip->st);
        tmp = x->b->buf_alloc(n);
        int rc = x->b->buf_extrapolate(tmp, x->b->stage_params(ip->st), ip->velocity, (float)delay,
                                       n, e);
        if (rc != MT_OK) {
            x->b->buf_free(tmp);
            return rc;
        }
        w = tmp;
    }
    if (w == NULL)
        return run(x, arg, e);
    float *own = x->b->stage_swap_params(ip->st, w);
    int rc = run(x, arg, e);
    x->b->stage_swap_params(ip->st, own);
    x->b->buf_free(tmp);
    return rc;
}

/* OS: AdamW with the stage's own step counter; T1 scales the step size, T2 updates the
 * velocity; PipeDream first keeps the version the update replaces. */
int interp_update(struct interp *x, struct interp_part *ip, const struct instr *in,
                  struct mt_err *e)
{
    const struct interp_opts *o = x->o;
    float lr = o->lr;
    if (o->lr_warmup > 0 && ip->tau > 1) {
        double p = fmin((double)interp_iteration(x, in->mb) / o->lr_warmup, 1.0);
        lr = (float)((double)o->lr * pow((double)ip->tau, -(1.0 - p)));
    }
    if (x->stash)
        TRY(interp_version_stash(x, ip, e));
    size_t n = x->b->stage_nparams(ip->st);
    float *before = NULL;
    if (ip->velocity != NULL) {
        before = x->b->buf_alloc(n);
        int rc = x->b->buf_copy(before, x->b->stage_params(ip->st), n, e);
        if (rc != MT_OK) {
            x->b->buf_free(before);
            return rc;
        }
    }
    int rc =
        x->b->stage_adamw(ip->st, lr, o->beta1, o->beta2, o->eps, o->weight_decay, ip->t + 1, e);
    if (rc == MT_OK && before != NULL)
        rc = x->b->buf_ema_delta(ip->velocity, x->b->stage_params(ip->st), before, ip->gamma, n, e);
    x->b->buf_free(before);
    ip->t++;
    ip->zero_pending = true;
    return rc;
}
