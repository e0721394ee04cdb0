/* exec/interp.c: runs a plan's instruction list on one rank (exec/interp.h).
 *
 * State of a rank. Its device holds one model stage per part (Chimera: two replicas of
 * the same layers, initialised identically since weights depend only on the global layer;
 * interleaved: v distinct chunks), each built with the layer split of model/cost.c so that
 * a plan's stage s holds the same layers here as in the simulator. Between instructions
 * four tables indexed by (mb, stage) hold the buffers in flight:
 *     out[mb,s]   output of FW(mb,s): consumed by SA(mb,s) or by a local FW(mb,s+1)
 *     in[mb,s]    input of FW(mb,s) received by RA(mb,s)
 *     dout[mb,s]  gradient of stage s's output received by RG(mb,s)
 *     din[mb,s]   input gradient made by BW(mb,s): consumed by SG(mb,s) or a local BW(mb,s-1)
 * and act[mb,s] the activation handle from FW/CFW until BW. A send takes its buffer along
 * and frees it when MPI reports completion (polled after every instruction, waited for at
 * the end of the step), so a buffer is never changed while in flight; offload's copies (OF/RL)
 * are polled alike (exec/interp_offload.c). The dependency rules
 * are sim/core/vpipe.h's: a validated plan lists every cross-device dependency as a send/receive
 * pair and every local one in program order, so running each list in order with blocking
 * receives obeys them; a buffer that is missing when an instruction needs it is a plan
 * error, reported with the instruction.
 *
 * Messages are matched by tag: the activation entering stage s of micro-batch mb has tag
 * s*N + mb, the gradient leaving it (S + s)*N + mb, on the world communicator. Ranks are
 * replica-major (rank = dp_rank * pp + dev), so a plan's peer device p is rank
 * dp_rank * pp + p.
 *
 * Asynchronous plans (Async = PipeMare, PipeDream; issue 11, sim/schemes/scheme_async.c). A plan of
 * K iterations holds K x N micro-batches: micro-batch k*N + m is micro-batch m of the plan's
 * iteration k (its instructions carry step = k); in the r-th run of the plan that is step
 * r*K + k, which reads dataset batch ((r*K + k)*dp + dp_rank)*N + m, the batch a synchronous
 * plan's step r*K + k reads, and its loss goes to that step. Each stage counts its own AdamW
 * steps t = 1, 2, ... at its OSes (a synchronous plan's OS is step k + 1, as before), and
 * every update covers exactly U backwards (interp_check). Gradient scale: the last stage's
 * loss scale is 1/(U x dp) instead of 1/(N x dp), so an update applies the mean gradient of
 * the U x dp micro-batches it covers, as a synchronous step applies the mean over its N x dp:
 * with U = N both take the same step from the same data when nothing is stale, and the
 * gradient's size does not change with U (AdamW is nearly scale-free, but not in eps, nor
 * once T2 extrapolates with it). Gradients are zeroed before the first backward after an OS,
 * so a dump after the last step holds the last update's gradients.
 *
 * Weight versions. A stage's version is its update count; FW/CFW of (mb, s) records the
 * version it read, ver[mb, s], and a later RC or BW of it has delay d = version now -
 * ver[mb, s] (sim/core/async.h's staleness; the stage's tau is its largest d in the plan).
 *   Async: every instruction reads the current weights (the activations the forward kept were
 *     made by version ver, the backward multiplies by the current one: PipeMare without T2).
 *   PipeDream: RC and BW read version ver. An OS that replaces a version some micro-batch in
 *     flight read first copies it (buf_alloc: the allocator measures it); an RC/BW with d > 0
 *     swaps that copy in as the stage's parameters (stage_swap_params, no copy) and back; the
 *     BW of the last micro-batch that read a version frees its copy. So the extra bytes are
 *     one weight copy per version kept, the versions sim/core/async.c counts; they are reported as
 *     peak_stash_bytes and max_stashed. The executor's copies are fp32 (4 bytes a parameter);
 *     the simulator charges 2 (fp16 weights, sim/core/memory.h MEM_STASH_BYTES_PER_PARAM): the
 *     versions agree, the bytes differ by that factor.
 *
 * PipeMare's two techniques (Yang et al., "PipeMare: Asynchronous Pipeline Parallel DNN
 * Training", MLSys 2021, arXiv:1910.05124). RECONSTRUCTED, NOT QUOTED: the paper's text could
 * not be retrieved when this was written (only its abstract, reference/related.md, and
 * docs/design.md's description), so these are our formulas for the techniques as described there,
 * and they may differ from the paper's equations in detail:
 *   T1, learning-rate rescheduling (--lr-reschedule[=W]): stage i, staleness tau_i, steps with
 *       lr_i(k) = lr * tau_i ^ -(1 - p),    p = min(k / W, 1),
 *     k the step (0-based iteration) of the update's last micro-batch, W warm-up steps:
 *     the step size is divided by the delay at the start and released geometrically to the
 *     plain lr at k = W. tau_i <= 1 keeps lr. Computed in double, rounded to float once.
 *   T2, discrepancy correction (--discrepancy-correction[=D]): a stage with tau_i >= 1 keeps a
 *     velocity, an exponential average of its updates, delta_0 = 0 and at every OS
 *       delta <- gamma_i delta + (1 - gamma_i) (w_after - w_before),   gamma_i = D ^ (1/tau_i)
 *     (float, elementwise); an RC or BW with delay d >= 1 runs on
 *       u = w - d delta
 *     the weights extrapolated back d updates along the velocity, an estimate of the version
 *     its forward read, made in a transient buffer that is swapped in and out. The velocity
 *     is one more weight copy per stage (correction_bytes, part of the static bytes); the
 *     transient buffers (u, and w_before at an OS) one more while they live.
 *
 * Measuring (issue 12). The allocator's peak is reset before every instruction, so a step's and
 * the run's peak are the largest instruction peaks. Around each forward, recompute and backward
 * the rank notes what it kept and how far above that the backend went (struct interp_measure);
 * during a FW or a whole-stage RC a memory hook records every allocation, one block after the
 * other in the order exec/backend.h promises (the embedding output, each layer, the head), so a
 * layer's bytes are read off the allocator as Mimose reads them off its per-layer hooks. The
 * buffers that carry activations and gradients between instructions (and sends in flight) are
 * counted as they come and go. Variable-length runs (struct interp_stream) switch plan and T
 * at every step: the stages, their weights and optimizer state stay; only the instruction list
 * (its checkpointing) and the tensors' sizes change. */
#include <config.h>
#include "exec/interp_internal.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/backend.h"
#include "exec/capture.h"
#include "exec/comm.h"
#include "exec/dataset.h"
#include "exec/xformer.h"
#include "exec/xformer_moe.h"
#include "model/config.h"
#include "model/cost.h"
#include "sim/core/vpipe.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* ---------------------------------------------------------------------------------------- */
/* setup and teardown                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* The backend's memory hook: records the allocations of a running forward or recompute (the
 * header's "Measuring") and feeds the trace's memory counter. */
static void interp_mem_hook(size_t bytes, void *ctx)
{
    struct interp *x = ctx;
    if (x->rec_on && bytes > x->hook_last) {
        if (x->ninc == x->cap_inc) {
            x->cap_inc = x->cap_inc ? 2 * x->cap_inc : 64;
            x->inc = xreallocarray(x->inc, (size_t)x->cap_inc, sizeof *x->inc);
        }
        x->inc[x->ninc++] = (double)(bytes - x->hook_last);
    }
    x->hook_last = bytes;
    if (x->cap)
        capture_mem_hook(bytes, x->cap);
}

/* Starts measuring an instruction's compute: returns what the device holds now. */
static double interp_measure_begin(struct interp *x)
{
    if (x->b->mem_reset_peak)
        x->b->mem_reset_peak();
    x->ninc = 0;
    x->rec_on = true;
    return (double)x->b->mem_current();
}

/* One layer's block among the allocations recorded over a FW (skip = 1: the kept input came
 * first) or a whole-stage RC (skip = 0). */
static void interp_note_blocks(struct interp *x, const struct interp_part *ip, int skip,
                               struct interp_stage_bytes *sb)
{
    int at = skip;
    if (ip->is_first && at < x->ninc)
        sb->enc_bytes = x->inc[at++];
    if (at + ip->n > x->ninc)
        return;
    double sum = 0;
    for (int l = 0; l < ip->n; l++)
        sum += x->inc[at + l];
    sb->layer_bytes = sum / ip->n;
}

static void interp_fini(struct interp *x)
{
    interp_copies_fini(x); /* before the handles whose blocks the copies move */
    for (int i = 0; i < x->nsends; i++) {
        /* only on error paths: the job is ending, the request is abandoned */
        free(x->sends[i].req);
        x->b->buf_free(x->sends[i].buf);
        free(x->sends[i].host);
    }
    free(x->sends);
    size_t n = (size_t)x->N * x->S;
    if (x->act)
        for (size_t i = 0; i < n; i++) {
            if (x->act[i])
                x->b->act_free(x->act[i]);
            if (x->wk[i])
                x->b->wgrad_free(x->wk[i]);
            interp_free_buf(x, &x->out[i]);
            interp_free_buf(x, &x->in[i]);
            interp_free_buf(x, &x->dout[i]);
            interp_free_buf(x, &x->din[i]);
        }
    free(x->act);
    free(x->wk);
    free(x->out);
    free(x->in);
    free(x->dout);
    free(x->din);
    free(x->ver);
    free(x->loss_sum);
    for (int i = 0; i < x->nparts; i++) {
        struct interp_part *ip = &x->part[i];
        for (int v = 0; v < ip->nvers; v++)
            x->b->buf_free(ip->vers[v].buf);
        free(ip->vers);
        x->b->buf_free(ip->velocity);
        x->b->stage_free(ip->st);
    }
    free(x->part_of_stage);
    free(x->sb);
    if (x->ep) {
        moe_ep_mpi_close(x->ep);
        free(x->ep);
    }
    free(x->inc);
    free(x->tokens);
    free(x->targets);
    free(x->stage_host);
    dataset_close(x->ds);
}

/* A MoE exchange into the trace: it ended now, `seconds` ago. */
static void interp_a2a_hook(void *ctx, double seconds, double bytes)
{
    struct interp *x = ctx;
    double t1 = capture_now_us(x->cap);
    capture_a2a(x->cap, x->step * x->K, t1 - 1e6 * seconds, t1, bytes);
}

static int interp_setup(struct interp *x, struct mt_err *e)
{
    const struct config *c = plan_config(x->p);
    struct xformer_dims d;
    TRY(interp_dims(c, &d, &x->B, &x->T, e));
    struct cost_model cost;
    TRY(scheme_costs(c, &cost, e));
    x->C = d.channels;
    x->nc = (size_t)x->B * x->T * d.channels;
    x->part_of_stage = xmalloc((size_t)x->S * sizeof(int));
    for (int s = 0; s < x->S; s++)
        x->part_of_stage[s] = -1;
    int rc = MT_OK;
    if (d.experts > 0) {
        /* ep inside dp (exec/interp_check.c interp_moe_dims): this device's dp replicas;
         * collective over the world, as every rank of a MoE run comes here */
        x->ep = xcalloc(1, sizeof *x->ep);
        rc = moe_ep_mpi_open(x->ep, x->dev, x->dpr, x->o->timeout_s > 30 ? x->o->timeout_s : 30,
                             e);
        if (rc != MT_OK) {
            free(x->ep);
            x->ep = NULL;
            cost_model_fini(&cost);
            return rc;
        }
        d.ep_rank = x->ep->rank;
        if (x->cap) {
            x->ep->on_exchange = interp_a2a_hook;
            x->ep->exchange_ctx = x;
        }
    }
    for (int part = 0; rc == MT_OK && part < x->g->parts; part++) {
        struct interp_part *ip = &x->part[x->nparts];
        ip->part = part;
        ip->stage = vpipe_stage(x->g, x->dev, 0, part);
        ip->first = cost.stage[ip->stage].first_layer;
        ip->n = cost.stage[ip->stage].num_layers;
        ip->is_first = ip->stage == 0;
        ip->is_last = ip->stage == x->S - 1;
        size_t before = x->b->mem_current();
        rc = x->b->stage_create(&d, ip->first, ip->n, x->o->seed, &ip->st, e);
        ip->static_bytes = (double)(x->b->mem_current() - before);
        if (rc != MT_OK) {
            err_wrap(e, "stage %d (layers %d..%d)", ip->stage, ip->first, ip->first + ip->n - 1);
            break;
        }
        if (x->ep) /* the cpu backend's stage (interp_check_backend) */
            xformer_stage_set_ep((struct xformer_stage *)ip->st, x->ep);
        /* an update applies the mean gradient of the micro-batches it covers (header) */
        int per_update = x->async ? (c->update_interval > 0 ? c->update_interval : 1) : x->N;
        x->b->stage_set_loss_scale(ip->st, (float)(1.0 / ((double)per_update * x->dp)));
        x->part_of_stage[ip->stage] = x->nparts++;
    }
    cost_model_fini(&cost);
    if (rc != MT_OK)
        return rc;
    size_t n = (size_t)x->N * x->S;
    x->ver = xcalloc(n, sizeof *x->ver);
    x->loss_sum = xcalloc((size_t)x->K, sizeof *x->loss_sum);
    if (x->async)
        TRY(interp_setup_async(x, e));
    x->act = xcalloc(n, sizeof *x->act);
    x->wk = xcalloc(n, sizeof *x->wk);
    x->out = xcalloc(n, sizeof *x->out);
    x->in = xcalloc(n, sizeof *x->in);
    x->dout = xcalloc(n, sizeof *x->dout);
    x->din = xcalloc(n, sizeof *x->din);
    TRY(interp_check_backend(x->p, x->b, e));
    if (interp_plan_has_copy(x->p))
        x->copy = xcalloc(n, sizeof *x->copy);
    /* token and staging buffers for the longest step */
    int maxT = x->o->stream && x->o->stream->max_T > x->T ? x->o->stream->max_T : x->T;
    if (maxT > d.max_seq)
        return err_set(e, MT_EINVAL, "steps of %d tokens: the model has %d positions", maxT,
                       d.max_seq);
    x->tokens = xmalloc((size_t)x->B * maxT * sizeof(int));
    x->targets = xmalloc((size_t)x->B * maxT * sizeof(int));
    x->staged = x->b->device_memory && comm_kind(x->cm) == COMM_MPI;
    if (x->staged)
        x->stage_host = xmalloc((size_t)x->B * maxT * d.channels * sizeof(float));
    x->sb = xcalloc((size_t)x->nparts, sizeof *x->sb);
    if (x->o->data_path == NULL)
        return err_set(e, MT_EINVAL, "no training data file given");
    TRY(dataset_open(x->o->data_path, &x->ds, e));
    return MT_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* instructions                                                                               */
/* ---------------------------------------------------------------------------------------- */

static int interp_fail(struct interp *x, const struct instr *in, int pos, struct mt_err *e,
                       int code, const char *what)
{
    char label[32], why[MT_ERR_MSG_MAX / 2];
    plan_instr_label(x->p, in, label, sizeof label);
    snprintf(why, sizeof why, "%s", what); /* `what` may be e->msg itself */
    return err_set(e, code, "rank %d (device %d), step %d, instruction %d (%s, stage %d): %s",
                   x->rank, x->dev, x->step * x->K + (in->mb > 0 ? in->mb / x->Nit : 0) + 1, pos,
                   label, in->stage, why);
}

static int interp_peer(const struct interp *x, int dev)
{
    return x->dpr * x->pp + dev;
}

/* A message is tagged by its receive's (kind, mb, stage), which a send finds through
 * vpipe_peer: both sides name the same message without knowing the pairing rule. */
static int interp_tag(const struct interp *x, const struct instr *in)
{
    enum op recv_op = in->op;
    int stage = in->stage;
    if (vpipe_is_send(in->op))
        vpipe_peer(in->op, in->stage, &recv_op, &stage);
    return ((recv_op == OP_RG ? x->S : 0) + stage) * x->N + in->mb;
}

/* The step (iteration) micro-batch mb of the current run belongs to. */
static long interp_batch(const struct interp *x, int mb)
{
    return (interp_iteration(x, mb) * x->dp + x->dpr) * x->Nit + mb % x->Nit;
}

static int interp_forward(struct interp *x, const struct instr *in, int pos, struct interp_part *ip,
                          struct mt_err *e)
{
    int mb = in->mb, s = in->stage;
    size_t k = interp_slot(x, mb, s);
    if (x->act[k] != NULL)
        return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "a second forward of this micro-batch");
    const int *tokens = NULL, *targets = NULL;
    const float *hidden = NULL;
    float **src = NULL;
    if (ip->is_first) {
        TRY(dataset_batch(x->ds, interp_batch(x, mb), x->B, x->T, x->tokens, NULL, e));
        tokens = x->tokens;
    } else {
        src = x->in[k] ? &x->in[k] : &x->out[interp_slot(x, mb, s - 1)];
        if (*src == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE,
                               "its input has not arrived (no RA, and the previous stage is not "
                               "on this device)");
        hidden = *src;
    }
    if (ip->is_last) {
        TRY(dataset_batch(x->ds, interp_batch(x, mb), x->B, x->T, NULL, x->targets, e));
        targets = x->targets;
    } else {
        x->out[k] = interp_p2p_alloc(x);
    }
    float loss = 0.0f;
    enum xformer_keep keep = in->op == OP_CFW ? XFORMER_KEEP_CHECKPOINT : XFORMER_KEEP_FULL;
    double before = interp_measure_begin(x);
    int rc = x->b->forward(ip->st, tokens, hidden, targets, x->B, x->T, keep, in->ckpt_layers,
                           ip->is_last ? NULL : x->out[k], ip->is_last ? &loss : NULL, &x->act[k],
                           e);
    x->rec_on = false;
    if (rc != MT_OK)
        return interp_fail(x, in, pos, e, rc, e->msg);
    struct interp_stage_bytes *sb = &x->sb[ip - x->part];
    double kept = (double)x->b->mem_current() - before;
    double over = (double)x->b->mem_peak() - before;
    if (in->op == OP_FW) {
        sb->act_bytes = kept;
        sb->fw_work_bytes = over - kept;
        interp_note_blocks(x, ip, 1, sb);
    } else if (in->ckpt_layers <= 0 || in->ckpt_layers >= ip->n) {
        sb->ckpt_bytes = kept;
        sb->cfw_peak_bytes = fmax(sb->cfw_peak_bytes, over);
    }
    if (src != NULL)
        interp_free_buf(x, src);
    if (ip->is_last)
        x->loss_sum[mb / x->Nit] += (double)loss;
    x->ver[k] = ip->t;
    if (x->stash)
        interp_version_read(x, ip);
    return MT_OK;
}

struct interp_bw {
    void **act;
    const float *dout;
    float *din;
    void **wk; /* split backward's B: where its W's handle goes; NULL for BW */
};

static int interp_run_backward(struct interp *x, void *arg, struct mt_err *e)
{
    struct interp_bw *a = arg;
    if (a->wk != NULL)
        return x->b->backward_input(a->act, a->dout, a->din, a->wk, e);
    return x->b->backward(a->act, a->dout, a->din, e);
}

static int interp_run_recompute(struct interp *x, void *arg, struct mt_err *e)
{
    return x->b->recompute(arg, e);
}

static int interp_backward(struct interp *x, const struct instr *in, int pos,
                           struct interp_part *ip, struct mt_err *e)
{
    int mb = in->mb, s = in->stage;
    size_t k = interp_slot(x, mb, s);
    if (x->act[k] == NULL)
        return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "no activations (forward missing)");
    const char *why = NULL;
    int ready = x->copy ? interp_copy_ready(x, k, &why, e) : MT_OK;
    if (ready != MT_OK)
        return interp_fail(x, in, pos, e, ready, why ? why : e->msg);
    float **src = NULL;
    if (!ip->is_last) {
        src = x->dout[k] ? &x->dout[k] : &x->din[interp_slot(x, mb, s + 1)];
        if (*src == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE,
                               "the gradient of its output has not arrived (no RG, and the next "
                               "stage is not on this device)");
    }
    if (!ip->is_first)
        x->din[k] = interp_p2p_alloc(x);
    if (ip->zero_pending) {
        x->b->stage_zero_grad(ip->st);
        ip->zero_pending = false;
    }
    bool split = in->op == OP_B;
    struct interp_bw a = {&x->act[k], src ? *src : NULL, ip->is_first ? NULL : x->din[k],
                          split ? &x->wk[k] : NULL};
    double before = interp_measure_begin(x);
    double held = (double)x->b->mem_current();
    x->rec_on = false;
    int rc = interp_on_weights(x, ip, ip->t - x->ver[k], x->ver[k], interp_run_backward, &a, e);
    if (rc != MT_OK)
        return interp_fail(x, in, pos, e, rc, e->msg);
    struct interp_stage_bytes *sb = &x->sb[ip - x->part];
    /* a B's scratch is over what it keeps for its W, which it took first (sim/core/memory.h) */
    double kept = split ? (double)x->b->mem_current() - held + sb->act_bytes : 0;
    sb->bw_work_bytes = fmax(sb->bw_work_bytes, (double)x->b->mem_peak() - before - kept);
    if (src != NULL)
        interp_free_buf(x, src);
    if (x->stash)
        interp_version_release(x, ip, x->ver[k]);
    return MT_OK;
}

static int interp_exec(struct interp *x, const struct instr *in, int pos, struct mt_err *e)
{
    int pi = in->stage >= 0 && in->stage < x->S ? x->part_of_stage[in->stage] : -1;
    if (pi < 0)
        return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "this device does not hold the stage");
    struct interp_part *ip = &x->part[pi];
    int mb = in->mb, s = in->stage;
    char what[96];
    const char *why = NULL;
    int rc = MT_OK;
    switch (in->op) {
    case OP_FW:
    case OP_CFW: return interp_forward(x, in, pos, ip, e);
    case OP_RC: {
        size_t k = interp_slot(x, mb, s);
        void *a = x->act[k];
        if (a == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "no checkpoint to recompute from");
        if (x->copy && (rc = interp_copy_ready(x, k, &why, e)) != MT_OK)
            return interp_fail(x, in, pos, e, rc, why ? why : e->msg);
        double before = interp_measure_begin(x);
        rc = interp_on_weights(x, ip, ip->t - x->ver[k], x->ver[k], interp_run_recompute, a, e);
        x->rec_on = false;
        struct interp_stage_bytes *sb = &x->sb[pi];
        if (rc == MT_OK && (in->ckpt_layers <= 0 || in->ckpt_layers >= ip->n) &&
            sb->ckpt_bytes > 0) {
            sb->act_bytes = sb->ckpt_bytes + (double)x->b->mem_current() - before;
            interp_note_blocks(x, ip, 0, sb);
        }
        break;
    }
    case OP_BW:
    case OP_B: return interp_backward(x, in, pos, ip, e);
    case OP_W: {
        size_t k = interp_slot(x, mb, s);
        if (x->wk[k] == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "no B before this W");
        if (ip->zero_pending) {
            x->b->stage_zero_grad(ip->st);
            ip->zero_pending = false;
        }
        x->rec_on = false;
        rc = x->b->backward_weight(&x->wk[k], e);
        break;
    }
    case OP_SA: {
        float **slot = &x->out[interp_slot(x, mb, s)];
        if (*slot == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "nothing to send (forward missing)");
        rc = interp_send(x, slot, interp_peer(x, in->peer), interp_tag(x, in), e);
        break;
    }
    case OP_SG: {
        float **slot = &x->din[interp_slot(x, mb, s)];
        if (*slot == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "nothing to send (backward missing)");
        rc = interp_send(x, slot, interp_peer(x, in->peer), interp_tag(x, in), e);
        break;
    }
    case OP_RA: {
        float **slot = &x->in[interp_slot(x, mb, s)];
        if (*slot != NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "activation received twice");
        snprintf(what, sizeof what, "activation of micro-batch %d into stage %d", mb, s);
        rc = interp_recv(x, slot, interp_peer(x, in->peer), interp_tag(x, in), what, e);
        break;
    }
    case OP_RG: {
        float **slot = &x->dout[interp_slot(x, mb, s)];
        if (*slot != NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "gradient received twice");
        snprintf(what, sizeof what, "gradient of micro-batch %d out of stage %d", mb, s);
        rc = interp_recv(x, slot, interp_peer(x, in->peer), interp_tag(x, in), what, e);
        break;
    }
    case OP_AR: {
        float *grads = x->b->stage_grads(ip->st);
        size_t n = x->b->stage_nparams(ip->st);
        if (x->ep) {
            /* a MoE stage: all but this rank's experts (ep = dp: no expert dp to reduce) */
            size_t *off = xmalloc(2 * ((size_t)ip->n + 1) * sizeof *off), *len = off + ip->n + 1;
            int nr = xformer_stage_ep_ranges((struct xformer_stage *)ip->st, off, len, ip->n + 1);
            for (int r = 0; rc == MT_OK && r < nr; r++)
                rc = comm_allreduce(x->cm, s, grads + off[r], len[r], e);
            free(off);
            break;
        }
        if (!x->staged) {
            rc = comm_allreduce(x->cm, s, grads, n, e);
            break;
        }
        /* device gradients over host MPI: through a host copy */
        float *host = xmalloc(n * sizeof(float));
        rc = x->b->buf_to_host(host, grads, n, e);
        if (rc == MT_OK)
            rc = comm_allreduce(x->cm, s, host, n, e);
        if (rc == MT_OK)
            rc = x->b->buf_from_host(grads, host, n, e);
        free(host);
        break;
    }
    case OP_OS: rc = interp_update(x, ip, in, e); break;
    case OP_OF:
    case OP_RL:
        if (x->copy && (rc = interp_copy(x, in, &why, e)) != MT_OK)
            return interp_fail(x, in, pos, e, rc, why ? why : e->msg);
        break;
    default:
        return interp_fail(x, in, pos, e, MT_EUNSUPPORTED, "instruction not run by the executor");
    }
    if (rc != MT_OK)
        return interp_fail(x, in, pos, e, rc, e->msg);
    return MT_OK;
}

/* A plan that ran to the end of a step leaves nothing behind. */
static int interp_step_clean(struct interp *x, struct mt_err *e)
{
    size_t n = (size_t)x->N * x->S;
    for (size_t i = 0; i < n; i++) {
        int mb = (int)(i / (size_t)x->S), s = (int)(i % (size_t)x->S);
        const char *left = x->act[i]    ? "activations (no backward)"
                           : x->wk[i]   ? "a B's gradients (no W)"
                           : x->out[i]  ? "a forward output nobody consumed"
                           : x->in[i]   ? "a received activation nobody consumed"
                           : x->dout[i] ? "a received gradient nobody consumed"
                           : x->din[i]  ? "an input gradient nobody consumed"
                                        : NULL;
        if (left)
            return err_set(e, MT_EINFEASIBLE,
                           "rank %d (device %d), end of step %d: micro-batch %d stage %d left %s",
                           x->rank, x->dev, (x->step + 1) * x->K, mb, s, left);
    }
    return MT_OK;
}

static int interp_dump(struct interp *x, struct mt_err *e)
{
    for (int i = 0; i < x->nparts; i++) {
        struct interp_part *ip = &x->part[i];
        size_t n = x->b->stage_nparams(ip->st);
        float *buf = xmalloc(n * sizeof(float));
        for (int grads = 1; grads >= 0; grads--) {
            int rc = x->b->stage_read(ip->st, grads, buf, e);
            char path[4096];
            snprintf(path, sizeof path, "%s/stage-%03d.rank-%05d.%s", x->o->dump_dir, ip->stage,
                     x->rank, grads ? "grad" : "param");
            /* atomic: an interrupted dump never leaves half a file over a good one */
            if (rc == MT_OK)
                rc = str_write_file_atomic(path, (const char *)buf, n * sizeof(float), e);
            if (rc != MT_OK) {
                free(buf);
                return rc;
            }
        }
        free(buf);
    }
    return MT_OK;
}

/* DIR/loss: one line per step, every bit of the double (JSON output may round the last). */
static int interp_dump_loss(const char *dir, const struct interp_result *r, struct mt_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/loss", dir);
    size_t cap = (size_t)r->steps * 32 + 1, len = 0;
    char *text = xmalloc(cap);
    text[0] = '\0';
    for (int k = 0; k < r->steps; k++)
        len += (size_t)snprintf(text + len, cap - len, "%.17g\n", r->loss[k]);
    int rc = str_write_file_atomic(path, text, len, e);
    free(text);
    return rc;
}

/* A variable-length run's next step: its plan (the run's geometry) and T. */
static int interp_stream_begin(struct interp *x, const struct instr **list, int *len,
                               struct mt_err *e)
{
    const struct plan *sp = NULL;
    int T = 0;
    TRY(x->o->stream->begin(x->o->stream->ctx, x->step, &sp, &T, e));
    const struct plan_geom *g = plan_geom(sp);
    if (g->scheme != x->g->scheme || g->devices != x->g->devices || g->parts != x->g->parts ||
        g->stages != x->g->stages || g->mbs != x->g->mbs)
        return err_set(e, MT_EINVAL, "step %d: its plan has another geometry than the run's",
                       x->step + 1);
    if (T < 1 || T > x->o->stream->max_T)
        return err_set(e, MT_EINVAL, "step %d: %d tokens, outside [1, %d]", x->step + 1, T,
                       x->o->stream->max_T);
    x->p = sp;
    x->T = T;
    x->nc = (size_t)x->B * T * x->C;
    *list = plan_instrs(sp, x->dev);
    *len = plan_len(sp, x->dev);
    return MT_OK;
}

int interp_run(const struct plan *p, const struct backend_ops *b, struct comm *cm,
               struct capture *cap, const struct interp_opts *o, interp_progress_fn progress,
               void *ctx, struct interp_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    TRY(interp_check(p, comm_size(cm), e));
    TRY(interp_check_opts(p, o, e));
    struct interp x = {0};
    x.p = p;
    x.g = plan_geom(p);
    x.b = b;
    x.cm = cm;
    x.cap = cap;
    x.o = o;
    x.rank = comm_rank(cm);
    x.pp = x.g->devices;
    x.dp = plan_config(p)->cluster.dp;
    x.dev = x.rank % x.pp;
    x.dpr = x.rank / x.pp;
    x.S = x.g->stages;
    x.N = x.g->mbs;
    x.K = interp_plan_iterations(p);
    x.Nit = x.N / x.K;
    x.async = config_scheme_async(x.g->scheme);
    x.stash = x.g->scheme == SCHEME_PIPEDREAM;
    int rc = interp_setup(&x, e);
    if (rc != MT_OK) {
        err_wrap(e, "rank %d", x.rank);
        interp_fini(&x);
        return rc;
    }
    out->loss = xcalloc((size_t)(o->steps > 0 ? o->steps : 1), sizeof(double));
    out->step_s = xcalloc((size_t)(o->steps > 0 ? o->steps : 1), sizeof(double));
    struct interp_device me = {.rank = x.rank, .dev = x.dev, .dp_rank = x.dpr};
    me.static_bytes = (double)b->mem_current();
    x.run_peak = me.static_bytes;
    if (cap || o->stream) {
        x.hook_last = b->mem_current();
        b->mem_watch(interp_mem_hook, &x);
    }
    if (cap)
        comm_set_idle_hook(cm, capture_alive, cap);
    /* All ranks start together and share the trace's time origin. */
    rc = comm_barrier(cm, e);
    if (cap)
        capture_set_origin(cap);
    const struct instr *list = plan_instrs(p, x.dev);
    int len = plan_len(p, x.dev);
    double slowest = 0.0;
    bool all_know = false; /* an error every rank learned at a step's end */
    int runs = o->steps / x.K;
    for (x.step = 0; rc == MT_OK && x.step < runs; x.step++) {
        if (o->stream != NULL && (rc = interp_stream_begin(&x, &list, &len, e)) != MT_OK)
            break;
        double t_step = cap ? capture_now_us(cap) : 0.0;
        struct timespec ts0, ts1;
        clock_gettime(CLOCK_MONOTONIC, &ts0);
        memset(x.loss_sum, 0, (size_t)x.K * sizeof *x.loss_sum);
        for (int j = 0; j < x.nparts; j++)
            x.sb[j] = (struct interp_stage_bytes){.stage = x.part[j].stage,
                                                  .static_bytes = x.part[j].static_bytes};
        x.step_peak = (double)b->mem_current();
        x.p2p_max = x.p2p_now;
        for (int i = 0; rc == MT_OK && i < len; i++) {
            fault_inject(&x.o->fault, x.rank, x.step, i, len);
            if (x.ncopies > 0 && plan_op_is_compute(list[i].op) &&
                (rc = interp_copies_before_compute(&x, e)) != MT_OK)
                break;
            double t0 = cap ? capture_now_us(cap) : 0.0;
            if (b->mem_reset_peak)
                b->mem_reset_peak();
            rc = interp_exec(&x, &list[i], i, e);
            if (rc == MT_OK)
                rc = b->sync(e);
            x.step_peak = fmax(x.step_peak, (double)b->mem_peak());
            if (rc == MT_OK && cap)
                capture_instr(cap, &list[i], x.step * x.K + list[i].step, t0, capture_now_us(cap),
                              b->mem_current());
            if (rc == MT_OK && (x.nsends > 0 || x.ncopies > 0))
                rc = interp_reap(&x, false, e);
        }
        if (rc == MT_OK && (rc = interp_reap(&x, true, e)) != MT_OK)
            err_wrap(e, "rank %d (device %d), end of step %d", x.rank, x.dev, x.step + 1);
        if (rc == MT_OK)
            rc = interp_step_clean(&x, e);
        if (rc != MT_OK)
            break;
        clock_gettime(CLOCK_MONOTONIC, &ts1);
        double local_s =
            (double)(ts1.tv_sec - ts0.tv_sec) + 1e-9 * (double)(ts1.tv_nsec - ts0.tv_nsec);
        /* One control-plane round per step (iteration) of the run, in order. */
        double loss = 0.0;
        for (int k = 0; k < x.K && rc == MT_OK; k++) {
            int it = x.step * x.K + k;
            int status = isfinite(x.loss_sum[k]) ? 0 : 1;
            struct comm_step st;
            rc = comm_step_end(cm, status, x.loss_sum[k], local_s / x.K, &st, e);
            if (rc != MT_OK) {
                err_wrap(e, "rank %d (device %d), end of step %d", x.rank, x.dev, it + 1);
                break;
            }
            loss = st.loss_sum / ((double)x.Nit * x.dp);
            out->loss[it] = loss;
            out->step_s[it] = st.step_s;
            out->steps = it + 1;
            if (st.status != 0) {
                rc = err_set(e, MT_EINFEASIBLE, "rank %d: the loss is not finite at step %d",
                             st.bad_rank, it + 1);
                all_know = true;
                out->failed_together = true;
                break;
            }
            if (progress)
                progress(it + 1, o->steps, loss, st.step_s, ctx);
            /* After the first (warm-up) step, waits may take as long as a few steps. */
            if (st.step_s > slowest) {
                slowest = st.step_s;
                comm_set_timeout(cm, fmax(o->timeout_s, 4.0 * slowest));
            }
        }
        if (cap && out->steps > 0)
            capture_step(cap, out->steps - 1, t_step, capture_now_us(cap), loss);
        x.run_peak = fmax(x.run_peak, x.step_peak);
        if (rc != MT_OK)
            break;
        if (o->stream != NULL) {
            struct interp_measure m = {.step = x.step,
                                       .T = x.T,
                                       .peak_bytes = x.step_peak,
                                       .hidden_bytes = x.hidden_bytes,
                                       .p2p_buffers = x.p2p_max,
                                       .nstages = x.nparts,
                                       .st = x.sb};
            if ((rc = o->stream->end(o->stream->ctx, &m, e)) != MT_OK)
                break;
        }
    }
    if (rc == MT_OK && o->dump_dir)
        rc = interp_dump(&x, e);
    if (rc == MT_OK && o->dump_dir && x.rank == 0)
        rc = interp_dump_loss(o->dump_dir, out, e);
    if (cap || o->stream)
        b->mem_watch(NULL, NULL);
    if (cap)
        comm_set_idle_hook(cm, NULL, NULL);
    me.peak_bytes = x.run_peak;
    me.peak_act_bytes = me.peak_bytes - me.static_bytes;
    me.peak_stash_bytes = x.stash_peak;
    me.max_stashed = x.max_stashed;
    me.correction_bytes = x.correction_bytes;
    me.peak_host_bytes = b->mem_host_peak && x.copy ? (double)b->mem_host_peak() : 0;
    if (x.ep) {
        me.a2a_s = x.ep->a2a_s;
        me.a2a_bytes = x.ep->a2a_bytes;
        me.a2a_calls = x.ep->a2a_calls;
    }
    /* Gathering the per-rank figures is collective: only when every rank got here. */
    if (rc == MT_OK || all_know) {
        struct mt_err ge = {0};
        void *all = NULL;
        size_t *counts = xcalloc((size_t)comm_size(cm), sizeof *counts);
        if (comm_gather(cm, &me, sizeof me, &all, counts, &ge) == MT_OK && all != NULL) {
            out->dev = all;
            out->ranks = comm_size(cm);
        } else if (ge.code != MT_OK && rc == MT_OK) {
            *e = ge;
            rc = ge.code;
        }
        free(counts);
    }
    interp_fini(&x);
    return rc;
}
