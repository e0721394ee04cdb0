/* tests/mpi/exec_ref.c: the executor tests' helper (the scripts tests/mpi/test_*.sh), with
 * four commands, on the tiny model (MT_EXEC_MODEL=tiny-llama: its LLaMA twin).
 *
 *   exec_ref plans SCHEME DEVICES MBS DP OUTDIR
 *       The tiny model's plans for a scheme: base.json (the scheme's baseline), ckpt.json
 *       (Mario's pass 1, apply-checkpoint: every FW -> CFW, RC before each BW) and opt.json
 *       (the whole pass pipeline: passes 1-4 repeated while they help), made with unit costs
 *       (F, B, RC = 1, 2, 1) so that the passes reorder as in the paper's Figure 2; sel.json:
 *       opt.json with selective checkpointing (issue 12), micro-batch mb's CFW and RC of a
 *       stage of n >= 2 layers checkpointing its first 1 + mb mod (n - 1) layers; search.json:
 *       the schedule search's plan (issue 18) under 1.5 M_θ per device, some forwards kept and
 *       some checkpointed, every device's order its own.
 *   exec_ref ref MBS STEPS DATA OUTDIR [PER_REPLICA [CHIMERA_D]]
 *       The single-process sequential reference: the whole tiny model as one stage, written
 *       out here from its preset's numbers (h 64, L 8, heads 4, seq 64, vocab 256, ffn 256,
 *       micro-batch 1) rather than through the config code, runs STEPS steps of MBS
 *       micro-batches one after the other (FW then BW each, micro-batch j of step k reads
 *       batch k*MBS + j, loss scale 1/MBS, AdamW after each step with the executor's
 *       defaults). Writes OUTDIR/loss (one line per step, %.17g) and OUTDIR/grad and
 *       OUTDIR/param after the last step (raw floats, the whole model's flat order, which is
 *       the concatenation of any split's stages in stage order).
 *       With PER_REPLICA, the gradients are summed as a pipeline with replicas sums them:
 *       micro-batch j goes to data-parallel replica j / PER_REPLICA and, with CHIMERA_D, to
 *       Chimera's down (part 0) or up (part 1) pipeline as sim/core/vpipe.c assigns it (the first
 *       half of each group of CHIMERA_D micro-batches goes down); each replica accumulates
 *       its micro-batches in ascending order into its own sum, and the sums are then added
 *       pairwise, ((g0 + g1) + (g2 + g3)), as an allreduce of 2 or 4 ranks by recursive
 *       doubling does (float addition commutes, so the ranks' order within a pair does not
 *       matter). The math is the sequential run's; only the rounding order follows the
 *       executor's, so its gradients can be compared bit for bit.
 *   exec_ref async PLAN STEPS W DECAY DATA OUTDIR
 *       The single-process replay of an asynchronous plan (Async or PipeDream, tiny model,
 *       issue 11): one xformer stage per pipeline stage (the tiny model's 8 layers split
 *       evenly), each running its device's compute instructions and OS in the plan's order,
 *       interleaved by their data dependencies alone (a round-robin that runs whatever is
 *       ready), for STEPS steps (STEPS / K runs of the plan's K iterations). Its own code for
 *       what exec/interp.c must do: the loss scale 1/U, a per-stage AdamW step counter,
 *       gradients zeroed after each OS, micro-batch k*N + m of run r reading batch
 *       (r*K + k)*N + m; PipeDream: a copy of the weights at every forward, copied into the
 *       stage for its RC and BW whenever an update came between; Async: the current weights,
 *       and with DECAY > 0 (T2) a velocity v <- g v + (1 - g)(w_after - w_before) at every OS,
 *       g = DECAY^(1/tau), and RC/BW on w - d v for a delay d >= 1; with W > 0 (T1) the step
 *       size lr * tau^-(1 - min(k/W, 1)) for the update of step k (tau: the stage's largest
 *       delay in the plan). Writes OUTDIR/loss (one line per step) and OUTDIR/param (every
 *       stage's parameters after the last step, in stage order).
 *   exec_ref replay PLAN DATA OUTDIR
 *       The single-process replay of a synchronous plan, split backward included (B, W): one
 *       stage per pipeline stage, every device's compute instructions in the plan's order,
 *       one step; writes OUTDIR/loss and OUTDIR/grad (see cmd_replay).
 *   exec_ref cmp A B TOL
 *       Compares two such float files tensor by tensor (the tiny model's tensor list):
 *       relative difference = max |a - b| / max |b| per tensor. Prints the worst and whether
 *       the files are bit-identical; exits 0 when bit-identical, or when TOL > 0 and every
 *       tensor is within TOL. */
#include <config.h>

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dataset.h"
#include "exec/xformer.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "util/err.h"
#include "util/xalloc.h"

/* The models it runs, written out from their presets' numbers (model/presets.c) rather than
 * through the config code: tiny (the GPT block) and, with MT_EXEC_MODEL=tiny-llama, the LLaMA
 * block (h 64, L 8, 4 heads on 2 K/V heads, SwiGLU 176, seq 64, vocab 256). "The tiny model"
 * below is whichever one is chosen. */
static const struct xformer_dims tiny_gpt = {
    .vocab = 256, .max_seq = 64, .channels = 64, .heads = 4, .ffn = 256, .layers = 8};
static const struct xformer_dims tiny_llama = {.vocab = 256,
                                               .max_seq = 64,
                                               .channels = 64,
                                               .heads = 4,
                                               .ffn = 176,
                                               .layers = 8,
                                               .block = XFORMER_BLOCK_LLAMA,
                                               .kv_heads = 2};
static struct xformer_dims tiny;
static const char *tiny_name = "tiny";
enum { TINY_B = 1, TINY_T = 64 };

static int fail(const struct mt_err *e, const char *what)
{
    fprintf(stderr, "exec_ref: %s: %s\n", what, e->msg);
    return 1;
}

static int save(const struct plan *p, const char *dir, const char *name)
{
    char path[4096];
    struct mt_err e = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (plan_save(p, path, &e) != MT_OK)
        return fail(&e, path);
    return 0;
}

static int cmd_plans(char **argv)
{
    struct config c;
    struct mt_err e = {0};
    config_default(&c);
    if (presets_model(tiny_name, &c.model, &e) != MT_OK ||
        config_scheme_parse(argv[0], &c.scheme, &e) != MT_OK)
        return fail(&e, "config");
    int devices = atoi(argv[1]), mbs = atoi(argv[2]), dp = atoi(argv[3]);
    c.num_device = devices * dp;
    c.cluster.dp = dp;
    c.num_microbatches = mbs;
    c.micro_batch_size = 1;
    c.chunks = 2;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    snprintf(c.source, sizeof c.source, "exec_ref plans");
    struct plan *base = NULL, *ckpt = NULL;
    if (scheme_build(&c, &base, &e) != MT_OK)
        return fail(&e, "scheme_build");
    struct pass_changes ch;
    pass_changes_init(&ch);
    if (pass_run(PASS_CHECKPOINT, base, &ckpt, &ch, &e) != MT_OK)
        return fail(&e, "apply-checkpoint");
    pass_changes_fini(&ch);
    struct pass_pipeline pl;
    if (pass_pipeline_run(base, &pl, &e) != MT_OK)
        return fail(&e, "pass pipeline");
    const struct plan *opt = pass_pipeline_final(&pl)->plan;
    struct cost_model cost;
    if (scheme_costs(&c, &cost, &e) != MT_OK)
        return fail(&e, "costs");
    struct plan *sel = plan_new(plan_config(opt), plan_geom(opt));
    for (int d = 0; d < plan_devices(opt); d++)
        for (int i = 0; i < plan_len(opt, d); i++) {
            struct instr in = *plan_at(opt, d, i);
            int n = cost.stage[in.stage].num_layers;
            if ((in.op == OP_CFW || in.op == OP_RC) && n >= 2)
                in.ckpt_layers = 1 + in.mb % (n - 1);
            plan_append(sel, d, in);
        }
    cost_model_fini(&cost);
    struct search_opts so;
    search_opts_default(&so, &c);
    so.cap = 1.5;
    if (pass_pipeline_search(&pl, &so, &e) != MT_OK)
        return fail(&e, "search");
    int rc = save(base, argv[4], "base.json") || save(ckpt, argv[4], "ckpt.json") ||
             save(opt, argv[4], "opt.json") || save(sel, argv[4], "sel.json") ||
             save(pass_pipeline_final(&pl)->plan, argv[4], "search.json");
    plan_free(sel);
    pass_pipeline_fini(&pl);
    plan_free(base);
    plan_free(ckpt);
    return rc;
}

static int write_floats(const char *dir, const char *name, const float *v, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(v, sizeof *v, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "exec_ref: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

/* Which partial sum micro-batch j of a step joins (exec_ref ref's PER_REPLICA, CHIMERA_D). */
static int ref_group(int j, int per_replica, int chimera_d)
{
    if (per_replica <= 0)
        return 0;
    int replica = j / per_replica, m = j % per_replica;
    if (chimera_d <= 0)
        return replica;
    return 2 * replica + (m % chimera_d < chimera_d / 2 ? 0 : 1);
}

static int cmd_ref(int argc, char **argv)
{
    int M = atoi(argv[0]), steps = atoi(argv[1]);
    const char *dir = argv[3];
    int per_replica = argc > 4 ? atoi(argv[4]) : 0, chimera_d = argc > 5 ? atoi(argv[5]) : 0;
    int groups = 1;
    for (int j = 0; j < M; j++)
        if (ref_group(j, per_replica, chimera_d) + 1 > groups)
            groups = ref_group(j, per_replica, chimera_d) + 1;
    if (groups != 1 && groups != 2 && groups != 4) {
        fprintf(stderr, "exec_ref ref: %d partial sums; the pairwise order is for 1, 2 or 4\n",
                groups);
        return 2;
    }
    struct mt_err e = {0};
    struct dataset *ds = NULL;
    struct xformer_stage *s[4] = {NULL};
    openblas_set_num_threads(1);
    if (dataset_open(argv[2], &ds, &e) != MT_OK)
        return fail(&e, "dataset");
    /* one copy of the model per partial sum, all with the same weights */
    for (int g = 0; g < groups; g++) {
        if (xformer_stage_create(&tiny, 0, tiny.layers, 1337, &s[g], &e) != MT_OK)
            return fail(&e, "stage");
        xformer_stage_set_loss_scale(s[g], (float)(1.0 / M));
    }
    size_t n = xformer_stage_nparams(s[0]);
    int *in = xmalloc(TINY_B * TINY_T * sizeof(int)), *tg = xmalloc(TINY_B * TINY_T * sizeof(int));
    char path[4096];
    snprintf(path, sizeof path, "%s/loss", dir);
    FILE *lf = fopen(path, "w");
    if (lf == NULL) {
        fprintf(stderr, "exec_ref: cannot write %s\n", path);
        return 1;
    }
    for (int k = 0; k < steps; k++) {
        for (int g = 0; g < groups; g++)
            xformer_stage_zero_grad(s[g]);
        double sum = 0.0;
        for (int j = 0; j < M; j++) {
            struct xformer_act *a = NULL;
            float loss = 0.0f;
            struct xformer_stage *st = s[ref_group(j, per_replica, chimera_d)];
            if (dataset_batch(ds, (long)k * M + j, TINY_B, TINY_T, in, tg, &e) != MT_OK ||
                xformer_forward(st, in, NULL, tg, TINY_B, TINY_T, XFORMER_KEEP_FULL, 0, NULL, &loss,
                                &a, &e) != MT_OK ||
                xformer_backward(&a, NULL, NULL, &e) != MT_OK)
                return fail(&e, "step");
            sum += (double)loss;
        }
        /* the allreduce: pairwise, into every copy */
        float *g0 = xformer_stage_grads(s[0]);
        for (size_t i = 0; i < n; i++) {
            float v = g0[i];
            if (groups == 2)
                v = g0[i] + xformer_stage_grads(s[1])[i];
            else if (groups == 4)
                v = (g0[i] + xformer_stage_grads(s[1])[i]) +
                    (xformer_stage_grads(s[2])[i] + xformer_stage_grads(s[3])[i]);
            for (int g = 0; g < groups; g++)
                xformer_stage_grads(s[g])[i] = v;
        }
        for (int g = 0; g < groups; g++)
            if (xformer_stage_adamw_step(s[g], 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, k + 1, &e) != MT_OK)
                return fail(&e, "adamw");
        fprintf(lf, "%.17g\n", sum / M);
    }
    fclose(lf);
    int rc = write_floats(dir, "grad", xformer_stage_grads(s[0]), n) ||
             write_floats(dir, "param", xformer_stage_params(s[0]), n);
    free(in);
    free(tg);
    for (int g = 0; g < groups; g++)
        xformer_stage_free(s[g]);
    dataset_close(ds);
    return rc;
}

static float *read_floats(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    *n = (size_t)len / sizeof(float);
    float *v = xmalloc(*n * sizeof(float) + 1);
    if (fread(v, sizeof(float), *n, f) != *n) {
        free(v);
        v = NULL;
    }
    fclose(f);
    return v;
}

static int cmd_cmp(char **argv)
{
    size_t na = 0, nb = 0;
    float *a = read_floats(argv[0], &na), *b = read_floats(argv[1], &nb);
    double tol = atof(argv[2]);
    struct mt_err e = {0};
    struct xformer_stage *s = NULL;
    if (a == NULL || b == NULL) {
        fprintf(stderr, "exec_ref cmp: cannot read %s\n", a == NULL ? argv[0] : argv[1]);
        return 1;
    }
    if (xformer_stage_create(&tiny, 0, tiny.layers, 1337, &s, &e) != MT_OK)
        return fail(&e, "stage");
    size_t n = xformer_stage_nparams(s);
    if (na != n || nb != n) {
        fprintf(stderr, "exec_ref cmp: %zu and %zu floats, the tiny model has %zu\n", na, nb, n);
        return 1;
    }
    const float *base = xformer_stage_grads(s);
    double worst = 0.0;
    char worst_name[64] = "-";
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        bool per_layer = t >= XFORMER_LN1W && t <= XFORMER_FCPROJB;
        for (int l = per_layer ? 0 : -1; l < (per_layer ? tiny.layers : 0); l++) {
            struct xformer_view v;
            if (xformer_stage_tensor(s, (enum xformer_tensor)t, l, &v, &e) != MT_OK) {
                if (tiny.block == XFORMER_BLOCK_LLAMA)
                    continue; /* the LLaMA block's absent biases and position table */
                return fail(&e, "tensor");
            }
            size_t off = (size_t)(v.grad - base);
            double dmax = 0.0, bmax = 0.0;
            for (size_t i = off; i < off + v.n; i++) {
                dmax = fmax(dmax, fabs((double)a[i] - b[i]));
                bmax = fmax(bmax, fabs((double)b[i]));
            }
            double r = bmax > 0 ? dmax / bmax : dmax;
            if (r > worst) {
                worst = r;
                snprintf(worst_name, sizeof worst_name, "%s[%d]",
                         xformer_tensor_name((enum xformer_tensor)t), l);
            }
        }
    }
    bool exact = memcmp(a, b, n * sizeof(float)) == 0;
    printf("%s: %s, worst relative difference %.3g (%s)\n", argv[0],
           exact ? "bit-identical" : "not bit-identical", worst, worst_name);
    xformer_stage_free(s);
    free(a);
    free(b);
    return exact || (tol > 0 && worst <= tol) ? 0 : 1;
}

/* ---- the replays' driver --------------------------------------------------------------- */

/* Runs every device's list to its end, each device as far as its inputs allow, round after round
 * (the replays: data dependencies alone order the devices). step(ctx, d) runs device d's next
 * instruction: 1 ran, 0 waiting, -1 error; left(ctx, d) says whether d has instructions left.
 * Returns 0, or 1 after saying why (an error, or a plan that deadlocks). */
static int replay_drive(int D, void *ctx, int (*step)(void *ctx, int d, struct mt_err *e),
                        bool (*left)(void *ctx, int d), const char *who)
{
    struct mt_err e = {0};
    for (;;) {
        int ran = 0, waiting = 0;
        for (int d = 0; d < D; d++) {
            while (left(ctx, d)) {
                int k = step(ctx, d, &e);
                if (k < 0)
                    return fail(&e, who);
                if (k == 0)
                    break;
                ran++;
            }
            waiting += left(ctx, d);
        }
        if (waiting == 0)
            return 0;
        if (ran == 0) {
            fprintf(stderr, "exec_ref %s: the plan deadlocks\n", who);
            return 1;
        }
    }
}

/* ---- exec_ref async ---------------------------------------------------------------- */

struct ref_stage {
    struct xformer_stage *s;
    const struct instr *ops; /* its device's list */
    int len, pc;
    int t, tau, since;
    float gamma;
    float *vel;               /* T2 velocity, or NULL */
    int *ver;                 /* [M]: updates before the forward of mb */
    float **copy;             /* [M] PipeDream: the weights the forward of mb read */
    struct xformer_act **act; /* [M] */
};

struct ref_run {
    int D, M, N, K, U, W, run;
    double decay;
    bool pipedream;
    size_t nparams[64];
    struct dataset *ds;
    float **h, **g; /* [M * D]: stage outputs and input gradients in flight */
    double *loss;   /* [STEPS] */
    int *tok, *tgt;
    struct ref_stage st[64];
};

/* RC or BW of micro-batch mb on stage d with the weights the scheme gives it. */
static int ref_on_weights(struct ref_run *r, int d, int mb, bool bw, const float *dout, float *din,
                          struct mt_err *e)
{
    struct ref_stage *rs = &r->st[d];
    size_t n = r->nparams[d];
    float *w = xformer_stage_params(rs->s);
    int delay = rs->t - rs->ver[mb];
    float *saved = NULL;
    if (delay > 0 && (r->pipedream || rs->vel != NULL)) {
        saved = xmalloc(n * sizeof(float));
        memcpy(saved, w, n * sizeof(float));
        if (r->pipedream)
            memcpy(w, rs->copy[mb], n * sizeof(float));
        else
            for (size_t i = 0; i < n; i++)
                w[i] = saved[i] - (float)delay * rs->vel[i];
    }
    int rc = bw ? xformer_backward(&rs->act[mb], dout, din, e) : xformer_recompute(rs->act[mb], e);
    if (saved != NULL) {
        memcpy(w, saved, n * sizeof(float));
        free(saved);
    }
    return rc;
}

/* Runs stage d's next instruction if its inputs are there: 1 ran, 0 waiting, -1 error. */
static int ref_step(struct ref_run *r, int d, struct mt_err *e)
{
    struct ref_stage *rs = &r->st[d];
    const struct instr *in = &rs->ops[rs->pc];
    int mb = in->mb, D = r->D, N = r->N;
    size_t n = r->nparams[d];
    long it = (long)r->run * r->K + (mb >= 0 ? mb / N : 0);
    switch (in->op) {
    case OP_FW:
    case OP_CFW: {
        float **src = d > 0 ? &r->h[mb * D + d - 1] : NULL;
        if (src && *src == NULL)
            return 0;
        if (dataset_batch(r->ds, it * N + mb % N, TINY_B, TINY_T, r->tok, r->tgt, e) != MT_OK)
            return -1;
        float *out =
            d < D - 1 ? xmalloc((size_t)TINY_B * TINY_T * tiny.channels * sizeof(float)) : NULL;
        float loss = 0.0f;
        if (xformer_forward(rs->s, d == 0 ? r->tok : NULL, src ? *src : NULL,
                            d == D - 1 ? r->tgt : NULL, TINY_B, TINY_T,
                            in->op == OP_CFW ? XFORMER_KEEP_CHECKPOINT : XFORMER_KEEP_FULL, 0, out,
                            d == D - 1 ? &loss : NULL, &rs->act[mb], e) != MT_OK)
            return -1;
        if (src) {
            free(*src);
            *src = NULL;
        }
        if (out)
            r->h[mb * D + d] = out;
        else
            r->loss[it] += (double)loss;
        rs->ver[mb] = rs->t;
        if (r->pipedream) {
            rs->copy[mb] = xmalloc(n * sizeof(float));
            memcpy(rs->copy[mb], xformer_stage_params(rs->s), n * sizeof(float));
        }
        break;
    }
    case OP_RC:
        if (ref_on_weights(r, d, mb, false, NULL, NULL, e) != MT_OK)
            return -1;
        break;
    case OP_BW: {
        float **src = d < D - 1 ? &r->g[mb * D + d + 1] : NULL;
        if (src && *src == NULL)
            return 0;
        float *din =
            d > 0 ? xmalloc((size_t)TINY_B * TINY_T * tiny.channels * sizeof(float)) : NULL;
        if (ref_on_weights(r, d, mb, true, src ? *src : NULL, din, e) != MT_OK)
            return -1;
        if (src) {
            free(*src);
            *src = NULL;
        }
        if (din)
            r->g[mb * D + d] = din;
        free(rs->copy[mb]);
        rs->copy[mb] = NULL;
        rs->since++;
        break;
    }
    case OP_OS: {
        if (rs->since != r->U) {
            err_set(e, MT_EINVAL, "stage %d: an update of %d backwards, U = %d", d, rs->since,
                    r->U);
            return -1;
        }
        float lr = 1e-3f;
        if (r->W > 0 && rs->tau > 1) {
            double p = fmin((double)it / r->W, 1.0);
            lr = (float)((double)1e-3f * pow((double)rs->tau, -(1.0 - p)));
        }
        float *w = xformer_stage_params(rs->s), *before = NULL;
        if (rs->vel) {
            before = xmalloc(n * sizeof(float));
            memcpy(before, w, n * sizeof(float));
        }
        if (xformer_stage_adamw_step(rs->s, lr, 0.9f, 0.95f, 1e-8f, 0.1f, ++rs->t, e) != MT_OK)
            return -1;
        if (rs->vel)
            for (size_t i = 0; i < n; i++)
                rs->vel[i] = rs->gamma * rs->vel[i] + (1.0f - rs->gamma) * (w[i] - before[i]);
        free(before);
        xformer_stage_zero_grad(rs->s);
        rs->since = 0;
        break;
    }
    default: break; /* SA / RA / SG / RG / AR: data moves through h and g here */
    }
    rs->pc++;
    return 1;
}

static int ref_step_any(void *ctx, int d, struct mt_err *e) { return ref_step(ctx, d, e); }
static bool ref_left(void *ctx, int d)
{
    const struct ref_run *r = ctx;
    return r->st[d].pc < r->st[d].len;
}

static int cmd_async(char **argv)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    struct ref_run r = {0};
    if (plan_load(argv[0], &p, &e) != MT_OK)
        return fail(&e, argv[0]);
    const struct plan_geom *g = plan_geom(p);
    const struct config *c = plan_config(p);
    int steps = atoi(argv[1]);
    r.W = atoi(argv[2]);
    r.decay = atof(argv[3]);
    r.D = g->devices;
    r.M = g->mbs;
    r.N = config_microbatches(c);
    r.K = r.M / r.N;
    r.U = c->update_interval > 0 ? c->update_interval : 1;
    r.pipedream = g->scheme == SCHEME_PIPEDREAM;
    if (!config_scheme_async(g->scheme) || g->parts != 1 || g->stages != r.D || r.D > 64 ||
        tiny.layers % r.D != 0 || c->cluster.dp != 1 || strcmp(c->model.name, tiny_name) != 0 ||
        steps % r.K != 0) {
        fprintf(stderr, "exec_ref async: wants an Async or PipeDream plan of the tiny model, "
                        "dp 1, stages dividing 8 layers, and STEPS a multiple of its iterations\n");
        return 1;
    }
    openblas_set_num_threads(1);
    if (dataset_open(argv[4], &r.ds, &e) != MT_OK)
        return fail(&e, "dataset");
    int D = r.D, M = r.M;
    r.h = xcalloc((size_t)M * D, sizeof *r.h);
    r.g = xcalloc((size_t)M * D, sizeof *r.g);
    r.loss = xcalloc((size_t)steps, sizeof *r.loss);
    r.tok = xmalloc(TINY_B * TINY_T * sizeof(int));
    r.tgt = xmalloc(TINY_B * TINY_T * sizeof(int));
    for (int d = 0; d < D; d++) {
        struct ref_stage *rs = &r.st[d];
        int per = tiny.layers / D;
        if (xformer_stage_create(&tiny, d * per, per, 1337, &rs->s, &e) != MT_OK)
            return fail(&e, "stage");
        xformer_stage_set_loss_scale(rs->s, (float)(1.0 / r.U));
        r.nparams[d] = xformer_stage_nparams(rs->s);
        rs->ops = plan_instrs(p, d);
        rs->len = plan_len(p, d);
        rs->ver = xcalloc((size_t)M, sizeof *rs->ver);
        rs->copy = xcalloc((size_t)M, sizeof *rs->copy);
        rs->act = xcalloc((size_t)M, sizeof *rs->act);
        /* tau: the stage's largest delay, from its own instruction order */
        int t = 0;
        for (int i = 0; i < rs->len; i++) {
            const struct instr *in = &rs->ops[i];
            if (in->op == OP_FW || in->op == OP_CFW)
                rs->ver[in->mb] = t;
            else if (in->op == OP_BW && t - rs->ver[in->mb] > rs->tau)
                rs->tau = t - rs->ver[in->mb];
            else if (in->op == OP_OS)
                t++;
        }
        if (r.decay > 0 && rs->tau >= 1) {
            rs->gamma = (float)pow(r.decay, 1.0 / rs->tau);
            rs->vel = xcalloc(r.nparams[d], sizeof(float));
        }
    }
    for (r.run = 0; r.run < steps / r.K; r.run++) {
        for (int d = 0; d < D; d++)
            r.st[d].pc = 0;
        if (replay_drive(D, &r, ref_step_any, ref_left, "async") != 0)
            return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/loss", argv[5]);
    FILE *lf = fopen(path, "w");
    if (lf == NULL)
        return 1;
    for (int k = 0; k < steps; k++)
        fprintf(lf, "%.17g\n", r.loss[k] / r.N);
    fclose(lf);
    snprintf(path, sizeof path, "%s/param", argv[5]);
    FILE *pf = fopen(path, "wb");
    if (pf == NULL)
        return 1;
    for (int d = 0; d < D; d++)
        if (fwrite(xformer_stage_params(r.st[d].s), sizeof(float), r.nparams[d], pf) !=
            r.nparams[d])
            return 1;
    if (fclose(pf) != 0)
        return 1;
    for (int d = 0; d < D; d++) {
        struct ref_stage *rs = &r.st[d];
        xformer_stage_free(rs->s);
        free(rs->vel);
        free(rs->ver);
        free(rs->copy);
        free(rs->act);
    }
    free(r.h);
    free(r.g);
    free(r.loss);
    free(r.tok);
    free(r.tgt);
    dataset_close(r.ds);
    plan_free(p);
    return 0;
}

/* ---- exec_ref replay ---------------------------------------------------------------- */

/* The single-process replay of a synchronous plan (issue 17: split backward): one xformer
 * stage per pipeline stage (the tiny model's 8 layers split evenly), each device's compute
 * instructions (FW, CFW, RC, BW, B, W) run in the plan's order, interleaved by their data
 * dependencies alone; one step; the loss scale 1/N. Its own bookkeeping, the executor's model
 * functions. Writes OUTDIR/loss and OUTDIR/grad (every stage's gradients in stage order). */
struct replay {
    int D, S, N;
    struct xformer_stage *st[64];
    const struct instr *ops[64];
    int len[64], pc[64];
    struct xformer_act **act;     /* [N * S] */
    struct xformer_wgrad **wk;    /* [N * S] */
    float **h, **g;               /* [N * S]: stage outputs, input gradients in flight */
    struct dataset *ds;
    int *tok, *tgt;
    double loss;
};

/* Runs device d's next instruction if its inputs are there: 1 ran, 0 waiting, -1 error. */
static int replay_step(struct replay *r, int d, struct mt_err *e)
{
    const struct instr *in = &r->ops[d][r->pc[d]];
    int mb = in->mb, s = in->stage, S = r->S;
    size_t k = (size_t)mb * S + s, NC = (size_t)TINY_B * TINY_T * tiny.channels;
    struct xformer_stage *st = s >= 0 && s < S ? r->st[s] : NULL;
    switch (in->op) {
    case OP_FW:
    case OP_CFW: {
        float **src = s > 0 ? &r->h[k - 1] : NULL;
        if (src && *src == NULL)
            return 0;
        if (dataset_batch(r->ds, mb, TINY_B, TINY_T, r->tok, r->tgt, e) != MT_OK)
            return -1;
        float *out = s < S - 1 ? xmalloc(NC * sizeof(float)) : NULL;
        float loss = 0.0f;
        if (xformer_forward(st, s == 0 ? r->tok : NULL, src ? *src : NULL,
                            s == S - 1 ? r->tgt : NULL, TINY_B, TINY_T,
                            in->op == OP_CFW ? XFORMER_KEEP_CHECKPOINT : XFORMER_KEEP_FULL,
                            in->ckpt_layers, out, s == S - 1 ? &loss : NULL, &r->act[k],
                            e) != MT_OK)
            return -1;
        if (src) {
            free(*src);
            *src = NULL;
        }
        if (out)
            r->h[k] = out;
        else
            r->loss += (double)loss;
        break;
    }
    case OP_RC:
        if (xformer_recompute(r->act[k], e) != MT_OK)
            return -1;
        break;
    case OP_BW:
    case OP_B: {
        float **src = s < S - 1 ? &r->g[k + 1] : NULL;
        if (src && *src == NULL)
            return 0;
        float *din = s > 0 ? xmalloc(NC * sizeof(float)) : NULL;
        int rc = in->op == OP_BW
                     ? xformer_backward(&r->act[k], src ? *src : NULL, din, e)
                     : xformer_backward_input(&r->act[k], src ? *src : NULL, din, &r->wk[k], e);
        if (rc != MT_OK)
            return -1;
        if (src) {
            free(*src);
            *src = NULL;
        }
        if (din)
            r->g[k] = din;
        break;
    }
    case OP_W:
        if (xformer_backward_weight(&r->wk[k], e) != MT_OK)
            return -1;
        break;
    default: break; /* SA / RA / SG / RG / AR / OS: data moves through h and g here */
    }
    r->pc[d]++;
    return 1;
}

static int replay_step_any(void *ctx, int d, struct mt_err *e) { return replay_step(ctx, d, e); }
static bool replay_left(void *ctx, int d)
{
    const struct replay *r = ctx;
    return r->pc[d] < r->len[d];
}

static int cmd_replay(char **argv)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    struct replay r = {0};
    if (plan_load(argv[0], &p, &e) != MT_OK)
        return fail(&e, argv[0]);
    const struct plan_geom *g = plan_geom(p);
    const struct config *c = plan_config(p);
    r.D = g->devices;
    r.S = g->stages;
    r.N = g->mbs;
    if (config_scheme_async(g->scheme) || g->scheme == SCHEME_X || r.S > 64 ||
        tiny.layers % r.S != 0 || c->cluster.dp != 1 || strcmp(c->model.name, tiny_name) != 0) {
        fprintf(stderr, "exec_ref replay: wants a synchronous plan of the tiny model, dp 1, one "
                        "replica of each stage, stages dividing 8 layers\n");
        return 1;
    }
    openblas_set_num_threads(1);
    if (dataset_open(argv[1], &r.ds, &e) != MT_OK)
        return fail(&e, "dataset");
    size_t cells = (size_t)r.N * r.S;
    r.act = xcalloc(cells, sizeof *r.act);
    r.wk = xcalloc(cells, sizeof *r.wk);
    r.h = xcalloc(cells, sizeof *r.h);
    r.g = xcalloc(cells, sizeof *r.g);
    r.tok = xmalloc(TINY_B * TINY_T * sizeof(int));
    r.tgt = xmalloc(TINY_B * TINY_T * sizeof(int));
    int per = tiny.layers / r.S;
    for (int s = 0; s < r.S; s++) {
        if (xformer_stage_create(&tiny, s * per, per, 1337, &r.st[s], &e) != MT_OK)
            return fail(&e, "stage");
        xformer_stage_set_loss_scale(r.st[s], (float)(1.0 / r.N));
        xformer_stage_zero_grad(r.st[s]);
    }
    for (int d = 0; d < r.D; d++) {
        r.ops[d] = plan_instrs(p, d);
        r.len[d] = plan_len(p, d);
    }
    if (replay_drive(r.D, &r, replay_step_any, replay_left, "replay") != 0)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/loss", argv[2]);
    FILE *lf = fopen(path, "w");
    if (lf == NULL)
        return 1;
    fprintf(lf, "%.17g\n", r.loss / r.N);
    fclose(lf);
    snprintf(path, sizeof path, "%s/grad", argv[2]);
    FILE *gf = fopen(path, "wb");
    if (gf == NULL)
        return 1;
    for (int s = 0; s < r.S; s++) {
        size_t n = xformer_stage_nparams(r.st[s]);
        if (fwrite(xformer_stage_grads(r.st[s]), sizeof(float), n, gf) != n)
            return 1;
    }
    if (fclose(gf) != 0)
        return 1;
    for (int s = 0; s < r.S; s++)
        xformer_stage_free(r.st[s]);
    free(r.act);
    free(r.wk);
    free(r.h);
    free(r.g);
    free(r.tok);
    free(r.tgt);
    dataset_close(r.ds);
    plan_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    const char *model = getenv("MT_EXEC_MODEL");
    tiny = tiny_gpt;
    if (model != NULL && strcmp(model, "tiny-llama") == 0) {
        tiny = tiny_llama;
        tiny_name = "tiny-llama";
    } else if (model != NULL && strcmp(model, "tiny") != 0) {
        fprintf(stderr, "exec_ref: MT_EXEC_MODEL=%s: tiny or tiny-llama\n", model);
        return 2;
    }
    if (argc == 7 && strcmp(argv[1], "plans") == 0)
        return cmd_plans(argv + 2);
    if (argc >= 6 && argc <= 8 && strcmp(argv[1], "ref") == 0)
        return cmd_ref(argc - 2, argv + 2);
    if (argc == 5 && strcmp(argv[1], "cmp") == 0)
        return cmd_cmp(argv + 2);
    if (argc == 8 && strcmp(argv[1], "async") == 0)
        return cmd_async(argv + 2);
    if (argc == 5 && strcmp(argv[1], "replay") == 0)
        return cmd_replay(argv + 2);
    fprintf(stderr, "usage: exec_ref plans SCHEME DEVICES MBS DP OUTDIR\n"
                    "       exec_ref ref MBS STEPS DATA OUTDIR [PER_REPLICA [CHIMERA_D]]\n"
                    "       exec_ref cmp A B TOL\n"
                    "       exec_ref async PLAN STEPS W DECAY DATA OUTDIR\n"
                    "       exec_ref replay PLAN DATA OUTDIR\n");
    return 2;
}
