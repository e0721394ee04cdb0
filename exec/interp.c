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
 * the end of the step), so a buffer is never changed while in flight. The dependency rules
 * are sim/vpipe.h's: a validated plan lists every cross-device dependency as a send/receive
 * pair and every local one in program order, so running each list in order with blocking
 * receives obeys them; a buffer that is missing when an instruction needs it is a plan
 * error, reported with the instruction.
 *
 * Messages are matched by tag: the activation entering stage s of micro-batch mb has tag
 * s*N + mb, the gradient leaving it (S + s)*N + mb, on the world communicator. Ranks are
 * replica-major (rank = dp_rank * pp + dev), so a plan's peer device p is rank
 * dp_rank * pp + p.
 *
 * Asynchronous plans (Async = PipeMare, PipeDream; issue 11, sim/scheme_async.c). A plan of
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
 * ver[mb, s] (sim/async.h's staleness; the stage's tau is its largest d in the plan).
 *   Async: every instruction reads the current weights (the activations the forward kept were
 *     made by version ver, the backward multiplies by the current one: PipeMare without T2).
 *   PipeDream: RC and BW read version ver. An OS that replaces a version some micro-batch in
 *     flight read first copies it (buf_alloc: the allocator measures it); an RC/BW with d > 0
 *     swaps that copy in as the stage's parameters (stage_swap_params, no copy) and back; the
 *     BW of the last micro-batch that read a version frees its copy. So the extra bytes are
 *     one weight copy per version kept, the versions sim/async.c counts; they are reported as
 *     peak_stash_bytes and max_stashed. The executor's copies are fp32 (4 bytes a parameter);
 *     the simulator charges 2 (fp16 weights, ASYNC_STASH_BYTES_PER_PARAM): the versions agree,
 *     the bytes differ by that factor.
 *
 * PipeMare's two techniques (Yang et al., "PipeMare: Asynchronous Pipeline Parallel DNN
 * Training", MLSys 2021, arXiv:1910.05124). RECONSTRUCTED, NOT QUOTED: the paper's text could
 * not be retrieved when this was written (only its abstract, reference/related.md, and
 * DESIGN.md's description), so these are our formulas for the techniques as described there,
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
#include "exec/interp.h"

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
#include "model/config.h"
#include "model/cost.h"
#include "sim/plan.h"
#include "sim/scheme.h"
#include "sim/validate.h"
#include "sim/vpipe.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

#define INTERP_MAX_TAG 32767 /* the least MPI_TAG_UB the standard allows */

/* A weight version of a stage read by micro-batches in flight (PipeDream). */
struct interp_version {
    int ver;      /* the stage's update count when its forwards read it */
    int refs;     /* micro-batches in flight that read it */
    float *buf;   /* its stashed copy once an OS replaced it; NULL while it is current */
    size_t bytes; /* what the copy added to the allocator's count */
};

struct interp_part {
    int part, stage;
    int first, n; /* global layers [first, first + n) */
    bool is_first, is_last;
    void *st;                    /* backend stage */
    int t;                       /* optimizer steps taken: the weight version */
    bool zero_pending;           /* an OS ran: zero the gradients before the next backward */
    int tau;                     /* staleness of the stage in the plan (largest delay) */
    float gamma;                 /* T2: the velocity's decay D^(1/tau) */
    float *velocity;             /* T2 (tau >= 1): backend memory, nparams floats */
    struct interp_version *vers; /* PipeDream: versions read by micro-batches in flight */
    int nvers, cap_vers;
    double static_bytes; /* what stage_create took */
};

struct interp_send {
    struct comm_req *req;
    float *buf;  /* backend buffer, freed on completion */
    float *host; /* host staging copy (device backends over MPI), or NULL */
};

struct interp {
    const struct plan *p;
    const struct plan_geom *g;
    const struct backend_ops *b;
    struct comm *cm;
    struct capture *cap;
    const struct interp_opts *o;
    struct dataset *ds;
    int rank, dev, dpr, pp, dp, S, N, B, T, C;
    int K, Nit; /* iterations the plan spans, micro-batches per iteration (K x Nit = N) */
    bool async; /* Async or PipeDream */
    bool stash; /* PipeDream: RC and BW read the forward's weight version */
    size_t nc;  /* floats of one hidden-state tensor: B * T * C */
    int nparts;
    struct interp_part part[CONFIG_MAX_CHUNKS];
    int *part_of_stage;               /* [S]: index into part[], -1 when not held */
    void **act;                       /* [N * S] */
    float **out, **in, **dout, **din; /* [N * S] */
    int *ver;                         /* [N * S]: weight version FW/CFW read */
    struct interp_send *sends;
    int nsends, cap_sends;
    int *tokens, *targets; /* host, B * T */
    float *stage_host;     /* host staging for one message (device backends over MPI) */
    bool staged;
    double *loss_sum;             /* [K]: this rank's losses of each iteration of the current run */
    int step;                     /* the current run of the plan (a synchronous plan's step) */
    double stash_now, stash_peak; /* PipeDream's stashed copies, bytes */
    int stashed, max_stashed;
    double correction_bytes; /* T2's velocities */
    /* What the step measures (struct interp_measure; the header's "Measuring") */
    struct interp_stage_bytes *sb; /* [nparts] */
    double step_peak, run_peak;    /* the allocator's peaks over the step, the run */
    double hidden_bytes;           /* one buffer between instructions */
    int p2p_now, p2p_max;          /* such buffers held now, most this step */
    size_t hook_last;              /* the count the memory hook saw last */
    bool rec_on;                   /* record the allocations of the running forward / recompute */
    double *inc;                   /* their sizes, in order */
    int ninc, cap_inc;
};

void interp_opts_default(struct interp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->steps = 1;
    o->lr = 1e-3f;
    o->beta1 = 0.9f;
    o->beta2 = 0.95f;
    o->eps = 1e-8f;
    o->weight_decay = 0.1f;
    o->seed = 1337;
    o->timeout_s = 8.0;
    const char *k = getenv("MT_FAULT_KILL_RANK"), *h = getenv("MT_FAULT_HANG_RANK");
    const char *st = getenv("MT_FAULT_STOP_RANK"), *s = getenv("MT_FAULT_AT_STEP");
    o->fault_kill_rank = k && *k ? atoi(k) : -1;
    o->fault_hang_rank = h && *h ? atoi(h) : -1;
    o->fault_stop_rank = st && *st ? atoi(st) : -1;
    o->fault_step = s && *s ? atoi(s) : 1;
}

int interp_dims(const struct config *c, struct xformer_dims *d, int *B, int *T, struct mt_err *e)
{
    const struct model_spec *m = &c->model;
    if (m->arch == ARCH_LLAMA2)
        return err_set(e, MT_EUNSUPPORTED,
                       "model %s: the executor implements the GPT block (LayerNorm, GELU MLP), "
                       "not LLaMA's (RMSNorm, SwiGLU, RoPE)",
                       m->name);
    if (c->cluster.tp != 1)
        return err_set(e, MT_EUNSUPPORTED,
                       "cluster.tp %d: the executor runs pipeline and data parallelism only",
                       c->cluster.tp);
    if (m->vocab_size < DATASET_VOCAB)
        return err_set(e, MT_EINVAL,
                       "model.vocab_size %d: the executor trains on byte-level tokens and needs "
                       "at least %d",
                       m->vocab_size, DATASET_VOCAB);
    /* the position table: the largest length the config allows (model/seqlen.h) */
    *d = (struct xformer_dims){.vocab = m->vocab_size,
                               .max_seq = c->seqlen.max_positions > 0 ? c->seqlen.max_positions
                                                                      : m->seq_length,
                               .channels = m->hidden_size,
                               .heads = m->num_attention_heads,
                               .ffn = m->ffn_hidden_size,
                               .layers = m->num_layers};
    *B = c->micro_batch_size;
    *T = m->seq_length;
    if (xformer_dims_check(d, e) != MT_OK)
        return err_wrap(e, "model %s", m->name);
    return MT_OK;
}

/* Whether a device's stage has more than one replica across the job. */
static bool interp_replicated(const struct plan *p)
{
    return plan_geom(p)->scheme == SCHEME_X || plan_config(p)->cluster.dp > 1;
}

int interp_check(const struct plan *p, int ranks, struct mt_err *e)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    struct plan_geom want;
    TRY(scheme_geom(c, &want, e));
    if (want.scheme != g->scheme || want.devices != g->devices || want.parts != g->parts ||
        want.stages != g->stages || want.mbs != g->mbs)
        return err_set(e, MT_EINVAL,
                       "the plan (%s, %d devices, %d parts, %d stages, %d micro-batches) does not "
                       "fit its config (%s, %d, %d, %d, %d)",
                       config_scheme_name(g->scheme), g->devices, g->parts, g->stages, g->mbs,
                       config_scheme_name(want.scheme), want.devices, want.parts, want.stages,
                       want.mbs);
    struct xformer_dims d;
    int B, T;
    TRY(interp_dims(c, &d, &B, &T, e));
    TRY(validate_plan(p, e));
    if (2L * g->stages * g->mbs > INTERP_MAX_TAG)
        return err_set(e, MT_EINVAL,
                       "%d stages x %d micro-batches: over the %d message tags MPI guarantees",
                       g->stages, g->mbs, INTERP_MAX_TAG);
    bool replicated = interp_replicated(p);
    bool async = config_scheme_async(g->scheme);
    int K = interp_plan_iterations(p), Nit = g->mbs / K;
    int U = async && c->update_interval > 0 ? c->update_interval : 1;
    for (int dv = 0; dv < g->devices; dv++) {
        int os[CONFIG_MAX_CHUNKS] = {0}, ar[CONFIG_MAX_CHUNKS] = {0};
        int since[CONFIG_MAX_CHUNKS] = {0}; /* backwards since the part's last OS */
        for (int i = 0; i < plan_len(p, dv); i++) {
            const struct instr *in = plan_at(p, dv, i);
            char what[32];
            plan_instr_label(p, in, what, sizeof what);
            if (in->op == OP_B || in->op == OP_W)
                return err_set(e, MT_EUNSUPPORTED,
                               "device %d, instruction %d (%s): the executor has no split "
                               "backward (B/W)",
                               dv, i, what);
            if (!async && in->step != 0)
                return err_set(e, MT_EUNSUPPORTED,
                               "device %d, instruction %d (%s): instructions of step %d in a "
                               "synchronous plan (%s flushes every iteration)",
                               dv, i, what, in->step, config_scheme_name(g->scheme));
            if (async && in->mb >= 0 && in->step != in->mb / Nit)
                return err_set(e, MT_EINVAL,
                               "device %d, instruction %d (%s): step %d, but micro-batch %d "
                               "belongs to iteration %d of %d micro-batches",
                               dv, i, what, in->step, in->mb, in->mb / Nit, Nit);
            if (in->op == OP_BW)
                since[in->part]++;
            if (in->op == OP_OS) {
                /* an update's gradient is the mean of U backwards (the loss scale) */
                if (async && since[in->part] != U)
                    return err_set(e, MT_EINFEASIBLE,
                                   "device %d, instruction %d (%s): the update covers %d "
                                   "backwards; the executor needs exactly U = %d (its gradient "
                                   "is their mean): make the plan's %d micro-batches (iterations "
                                   "x micro-batches) a multiple of --update-interval",
                                   dv, i, what, since[in->part], U, g->mbs);
                since[in->part] = 0;
                os[in->part]++;
            }
            if (in->op == OP_AR)
                ar[in->part]++;
        }
        for (int part = 0; part < g->parts; part++) {
            if (async ? os[part] < 1 || since[part] != 0 : os[part] != 1)
                return err_set(e, MT_EINFEASIBLE,
                               "device %d part %d: %d optimizer steps (OS) in the plan%s, the "
                               "executor needs %s",
                               dv, part, os[part],
                               since[part] ? " and backwards after the last" : "",
                               async ? "one after every U backwards" : "exactly one");
            int want_ar = replicated ? (async ? os[part] : 1) : 0;
            if (ar[part] != want_ar)
                return err_set(e, MT_EINFEASIBLE,
                               "device %d part %d: %d allreduces (AR); the stage has %s replica, "
                               "so the executor needs %d",
                               dv, part, ar[part], replicated ? "more than one" : "one", want_ar);
        }
    }
    int need = g->devices * c->cluster.dp;
    if (ranks != need)
        return err_set(e, MT_EINVAL,
                       "the plan needs %d MPI ranks (pp %d x dp %d), the job has %d; run with "
                       "--np %d",
                       need, g->devices, c->cluster.dp, ranks, need);
    return MT_OK;
}

int interp_plan_iterations(const struct plan *p)
{
    const struct plan_geom *g = plan_geom(p);
    if (!config_scheme_async(g->scheme))
        return 1;
    int N = config_microbatches(plan_config(p));
    return N > 0 && g->mbs % N == 0 ? g->mbs / N : 1;
}

int interp_check_opts(const struct plan *p, const struct interp_opts *o, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int K = interp_plan_iterations(p);
    const char *scheme = config_scheme_name(g->scheme);
    if (o->steps < 1 || o->steps % K != 0)
        return err_set(e, MT_EINVAL,
                       "--steps %d: the %s plan spans %d iterations and runs whole; give a "
                       "multiple of %d",
                       o->steps, scheme, K, K);
    bool async = config_scheme_async(g->scheme);
    if (o->lr_warmup < 0 || (o->lr_warmup > 0 && !async))
        return err_set(e, MT_EINVAL,
                       "--lr-reschedule: PipeMare's learning-rate rescheduling is for "
                       "asynchronous schemes (Async, PipeDream); %s has no stale weights",
                       scheme);
    if (o->correction_decay != 0 && g->scheme != SCHEME_ASYNC)
        return err_set(e, MT_EINVAL,
                       "--discrepancy-correction: PipeMare's discrepancy correction is for "
                       "Async; %s",
                       g->scheme == SCHEME_PIPEDREAM
                           ? "PipeDream's backward already reads the weights its forward read"
                           : "a synchronous scheme has no stale weights");
    if (o->stream != NULL && async)
        return err_set(e, MT_EINVAL,
                       "variable-length batches (--lengths) run synchronous schemes; %s spans "
                       "iterations",
                       scheme);
    if (o->correction_decay < 0 || o->correction_decay >= 1)
        return err_set(e, MT_EINVAL, "--discrepancy-correction %g: the decay D is in (0, 1)",
                       o->correction_decay);
    return MT_OK;
}

/* FNV-1a, 64 bits: a fingerprint, not a defence against forgery. */
static uint64_t interp_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t interp_fingerprint(const struct plan *p, const struct interp_opts *o, const char *backend)
{
    char *json = plan_to_json(p);
    uint64_t h = interp_fnv(14695981039346656037ull, json, strlen(json));
    free(json);
    /* the options that change what is computed, each as text so padding plays no part */
    char opts[512];
    int n = snprintf(opts, sizeof opts, "%d %.9g %.9g %.9g %.9g %.9g %llu %d %.17g %s", o->steps,
                     (double)o->lr, (double)o->beta1, (double)o->beta2, (double)o->eps,
                     (double)o->weight_decay, (unsigned long long)o->seed, o->lr_warmup,
                     o->correction_decay, backend ? backend : "");
    return interp_fnv(h, opts, (size_t)n < sizeof opts ? (size_t)n : sizeof opts - 1);
}

int interp_check_nccl(const struct plan *p, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    /* NCCL matches the messages between two ranks in issue order, without tags */
    for (int a = 0; a < g->devices; a++)
        for (int b = 0; b < g->devices; b++) {
            if (a == b)
                continue;
            int i = 0, j = 0;
            for (;;) {
                const struct instr *s = NULL, *r = NULL;
                for (; i < plan_len(p, a); i++) {
                    s = plan_at(p, a, i);
                    if (vpipe_is_send(s->op) && s->peer == b)
                        break;
                }
                for (; j < plan_len(p, b); j++) {
                    r = plan_at(p, b, j);
                    if (vpipe_is_recv(r->op) && r->peer == a)
                        break;
                }
                bool more_s = i < plan_len(p, a), more_r = j < plan_len(p, b);
                if (!more_s && !more_r)
                    break;
                enum op want = OP__COUNT;
                int want_stage = -1;
                if (more_s)
                    vpipe_peer(s->op, s->stage, &want, &want_stage);
                bool same = more_s && more_r && s->mb == r->mb && r->op == want &&
                            r->stage == want_stage;
                if (!same)
                    return err_set(e, MT_EUNSUPPORTED,
                                   "device %d sends to device %d in another order than it "
                                   "receives (instruction %d there, %d here): NCCL matches "
                                   "messages in order; use --backend cuda (MPI, tagged)",
                                   a, b, i, j);
                i++;
                j++;
            }
        }
    return MT_OK;
}

int interp_costs(const struct plan *p, struct cost_model *out, struct mt_err *e)
{
    const struct config *c = plan_config(p);
    struct xformer_dims d;
    int B, T;
    TRY(interp_dims(c, &d, &B, &T, e));
    TRY(scheme_costs(c, out, e));
    out->unit = false;
    for (int s = 0; s < out->num_stages; s++)
        cost_stage_bytes_exec(c, T, &out->stage[s]);
    return MT_OK;
}

void interp_result_fini(struct interp_result *r)
{
    if (r == NULL)
        return;
    free(r->loss);
    free(r->step_s);
    free(r->dev);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------------------- */
/* setup and teardown                                                                         */
/* ---------------------------------------------------------------------------------------- */

static size_t interp_slot(const struct interp *x, int mb, int stage)
{
    return (size_t)mb * x->S + stage;
}

/* A buffer between instructions (an activation or gradient of B x T x C floats), counted. */
static float *interp_p2p_alloc(struct interp *x)
{
    size_t before = x->b->mem_current();
    float *buf = x->b->buf_alloc(x->nc);
    x->hidden_bytes = (double)(x->b->mem_current() - before);
    if (++x->p2p_now > x->p2p_max)
        x->p2p_max = x->p2p_now;
    return buf;
}

static void interp_free_buf(struct interp *x, float **slot)
{
    if (*slot != NULL) {
        x->b->buf_free(*slot);
        x->p2p_now--;
        *slot = NULL;
    }
}

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
            interp_free_buf(x, &x->out[i]);
            interp_free_buf(x, &x->in[i]);
            interp_free_buf(x, &x->dout[i]);
            interp_free_buf(x, &x->din[i]);
        }
    free(x->act);
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
    free(x->inc);
    free(x->tokens);
    free(x->targets);
    free(x->stage_host);
    dataset_close(x->ds);
}

/* Each stage's staleness in the plan (the largest delay of a backward, in updates), as
 * sim/async.c counts it, from this device's own list: T1 and T2 need it. Then T2's velocity
 * (zeros) for every stage that has stale backwards. Uses x->ver as scratch. */
static int interp_setup_async(struct interp *x, struct mt_err *e)
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
    for (int part = 0; part < x->g->parts; part++) {
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
    x->out = xcalloc(n, sizeof *x->out);
    x->in = xcalloc(n, sizeof *x->in);
    x->dout = xcalloc(n, sizeof *x->dout);
    x->din = xcalloc(n, sizeof *x->din);
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

static int interp_send(struct interp *x, float **slot, int peer, int tag, struct mt_err *e)
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

static int interp_recv(struct interp *x, float **slot, int peer, int tag, const char *what,
                       struct mt_err *e)
{
    *slot = interp_p2p_alloc(x);
    float *wire = x->staged ? x->stage_host : *slot;
    TRY(comm_recv(x->cm, wire, x->nc, peer, tag, what, e));
    if (x->staged)
        TRY(x->b->buf_from_host(*slot, wire, x->nc, e));
    return MT_OK;
}

/* Completes finished sends and frees their buffers; with `wait`, all of them. */
static int interp_reap(struct interp *x, bool wait, struct mt_err *e)
{
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

/* The step (iteration) micro-batch mb of the current run belongs to. */
static long interp_iteration(const struct interp *x, int mb)
{
    return (long)x->step * x->K + mb / x->Nit;
}

static long interp_batch(const struct interp *x, int mb)
{
    return (interp_iteration(x, mb) * x->dp + x->dpr) * x->Nit + mb % x->Nit;
}

/* ---- weight versions (asynchronous plans; the header's "Weight versions") ---- */

static struct interp_version *interp_version_find(struct interp_part *ip, int ver)
{
    for (int i = 0; i < ip->nvers; i++)
        if (ip->vers[i].ver == ver)
            return &ip->vers[i];
    return NULL;
}

/* A forward read the current version: PipeDream takes a reference on it. */
static void interp_version_read(struct interp *x, struct interp_part *ip)
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
static void interp_version_release(struct interp *x, struct interp_part *ip, int ver)
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
static int interp_on_weights(struct interp *x, struct interp_part *ip, int delay, int ver,
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
static int interp_update(struct interp *x, struct interp_part *ip, const struct instr *in,
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
};

static int interp_run_backward(struct interp *x, void *arg, struct mt_err *e)
{
    struct interp_bw *a = arg;
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
    struct interp_bw a = {&x->act[k], src ? *src : NULL, ip->is_first ? NULL : x->din[k]};
    double before = interp_measure_begin(x);
    x->rec_on = false;
    int rc = interp_on_weights(x, ip, ip->t - x->ver[k], x->ver[k], interp_run_backward, &a, e);
    if (rc != MT_OK)
        return interp_fail(x, in, pos, e, rc, e->msg);
    struct interp_stage_bytes *sb = &x->sb[ip - x->part];
    sb->bw_work_bytes = fmax(sb->bw_work_bytes, (double)x->b->mem_peak() - before);
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
    int rc = MT_OK;
    switch (in->op) {
    case OP_FW:
    case OP_CFW: return interp_forward(x, in, pos, ip, e);
    case OP_RC: {
        size_t k = interp_slot(x, mb, s);
        void *a = x->act[k];
        if (a == NULL)
            return interp_fail(x, in, pos, e, MT_EINFEASIBLE, "no checkpoint to recompute from");
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
    case OP_BW: return interp_backward(x, in, pos, ip, e);
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

static void interp_fault(const struct interp *x, int pos, int len)
{
    if (x->step + 1 != x->o->fault_step || pos != len / 2)
        return;
    if (x->rank == x->o->fault_kill_rank) {
        fprintf(stderr, "mario-tui run: rank %d: MT_FAULT_KILL_RANK: raising SIGKILL in step %d\n",
                x->rank, x->step + 1);
        raise(SIGKILL);
    }
    if (x->rank == x->o->fault_hang_rank) {
        fprintf(stderr, "mario-tui run: rank %d: MT_FAULT_HANG_RANK: hanging in step %d\n", x->rank,
                x->step + 1);
        for (;;)
            pause();
    }
    if (x->rank == x->o->fault_stop_rank) {
        fprintf(stderr, "mario-tui run: rank %d: MT_FAULT_STOP_RANK: raising SIGSTOP in step %d\n",
                x->rank, x->step + 1);
        raise(SIGSTOP);
    }
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
            interp_fault(&x, i, len);
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
            if (rc == MT_OK && x.nsends > 0)
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
