/* exec/xformer_moe.h: a mixture-of-experts MLP for the CPU model (issue 38 item 7), fp32,
 * OpenBLAS: a router, top-k routing, an optional shared expert, experts as SwiGLU MLPs split
 * over the ranks of an expert-parallel (ep) group, tokens moved to their experts and back by
 * all-to-all. The layer maps the normalised hidden state (N, C) of this rank's tokens to the
 * MLP's output (N, C); the caller adds the residual.
 *
 * Forward, per token t (logits = Wr x_t, p = softmax(logits), one row of E):
 *     the k experts of largest p, ties to the lower index (so every rank and the reference
 *     route alike); gates g_j = p_{e_j}, or g_j / sum_i g_i with norm_topk (Mixtral, Qwen3's
 *     norm_topk_prob; DeepSeek-V2 leaves them unnormalised);
 *     y_t = sum_j g_j expert_{e_j}(x_t) + shared(x_t),  expert(x) = W2 (silu(W1 x) * W3 x).
 * Expert e lives on ep rank e / (E / ep) as its local expert e % (E / ep) (Megatron's
 * contiguous split). Dropless: every routed copy is computed (no capacity, no padding).
 * The exchange, forward: dispatch (each rank sends the copies of its tokens to the ranks of
 * their experts, grouped by rank then local expert, in token then slot order), the local
 * experts' GEMMs over the copies they received (grouped by expert, in source-rank order),
 * combine (the outputs go back the way they came). Backward runs the transposes: the
 * combine's gradient all-to-all, the experts' backward, the dispatch's gradient all-to-all,
 * then the router's gradient through the gates. Each exchange first swaps the per-expert
 * counts (an all-to-all of ints), then the rows (an all-to-all-v of floats).
 *
 * The load-balancing loss is optional and OFF by default (aux_coef 0). With aux_coef a > 0 it
 * is Switch Transformer's (Fedus et al. 2021, eq. 4), as Megatron-LM's
 * switch_load_balancing_loss_func (megatron/core/transformer/moe/moe_utils.py) computes it
 * over a rank's tokens: a E sum_e f_e P_e with f_e the share of the N k routed copies sent to
 * expert e (a count: no gradient) and P_e the mean of p_e over the N tokens; its gradient on
 * p_{t,e} is a E f_e / N.
 *
 * Parameters of one rank, one flat buffer (moe_param_count floats) in this order:
 *     router (E, C); shared W13 (2 Fs, C: gate rows then up rows), shared W2 (C, Fs)
 *     [only if shared_ffn > 0]; then each LOCAL expert: W13 (2F, C), W2 (C, F).
 * The router and the shared expert are replicated over the ep group (their gradients are
 * summed over it by the caller, like the attention's); an expert's gradient sums over the
 * copies of every rank's tokens routed to it, so it needs no reduction over ep. */
#ifndef MT_EXEC_XFORMER_MOE_H
#define MT_EXEC_XFORMER_MOE_H

#include <stddef.h>
#include <stdint.h>

struct mt_err;
struct config;

struct moe_dims {
    int channels;   /* C */
    int experts;    /* E routed experts, a multiple of ep */
    int topk;       /* k, 1 <= k <= E */
    int ffn;        /* F: an expert's intermediate width */
    int shared_ffn; /* Fs: the shared expert's intermediate width; 0: none */
    int norm_topk;  /* 1: renormalise the k gates to sum 1 */
    float aux_coef; /* load-balancing loss coefficient; 0: off (the default) */
};

/* The ep group as the layer sees it: two collectives over its `size` ranks. The local group
 * (moe_ep_local) is one rank that copies; exec/moe_comm_mpi.c's is an MPI communicator. The
 * layer adds each exchange's wall time, and each row exchange's count and bytes sent to other
 * ranks, to the counters. */
struct moe_ep {
    int size, rank;
    /* send[r * per + i] goes to rank r as recv[me * per + i] there */
    int (*alltoall_int)(struct moe_ep *g, const int *send, int *recv, int per, struct mt_err *e);
    /* rows of `width` floats: scount[r] rows from send + sdispl[r] rows to rank r; rcount[r]
     * rows from rank r into recv + rdispl[r] rows */
    int (*alltoallv)(struct moe_ep *g, const float *send, const int *scount, const int *sdispl,
                     float *recv, const int *rcount, const int *rdispl, int width,
                     struct mt_err *e);
    void *impl;
    /* called after each row exchange with its seconds and bytes sent to others (a trace's
     * event); NULL: none */
    void (*on_exchange)(void *ctx, double seconds, double bytes);
    void *exchange_ctx;
    double a2a_s;     /* seconds spent in the two collectives */
    long a2a_calls;   /* row exchanges (four a layer and micro-batch: two forward, two back) */
    double a2a_bytes; /* bytes of rows sent to other ranks */
};

/* One rank, no communication: the rows are copied. */
void moe_ep_local(struct moe_ep *g);
/* exec/moe_comm_mpi.c: the group of the world ranks that pass the same color, ordered by key
 * (MPI_Comm_split; collective over MPI_COMM_WORLD, MPI initialised). The exchanges are
 * MPI_Ialltoall / MPI_Ialltoallv polled with a deadline: after timeout_s a wait fails with
 * MT_ETIMEOUT instead of hanging on a dead peer. */
int moe_ep_mpi_open(struct moe_ep *g, int color, int key, double timeout_s, struct mt_err *e);
void moe_ep_mpi_close(struct moe_ep *g);

/* Checks d (every width >= 1 but shared_ffn >= 0, 1 <= topk <= experts, aux_coef >= 0) and
 * that ep divides the experts. MT_EINVAL naming the field. */
int moe_dims_check(const struct moe_dims *d, int ep, struct mt_err *e);
/* Floats of one rank's parameters (the router, the shared expert, E / ep experts). */
size_t moe_param_count(const struct moe_dims *d, int ep);
/* Offsets inside that buffer. */
size_t moe_router_off(void);
size_t moe_shared_off(const struct moe_dims *d);              /* shared W13, then W2 */
size_t moe_expert_off(const struct moe_dims *d, int local_e); /* its W13, then W2 */
/* Fills one rank's parameters: each value a function of (seed, layer, global expert or
 * tensor, element) only, N(0, 0.02) with the W2s scaled by 1/sqrt(2 layers) (GPT-2's
 * residual-projection rule), so every ep split holds the slices of the ep-1 weights. */
void moe_init_params(const struct moe_dims *d, int ep, int ep_rank, uint64_t seed, int layer,
                     int layers, float *params);

struct moe_act; /* what backward needs of one forward (memcount blocks) */

/* Forward of this rank's N tokens x (N, C): out (N, C) receives the layer's output; *aux the
 * load-balancing loss (0 when off). Collective over g. *out_act receives the handle. */
int moe_forward(const struct moe_dims *d, struct moe_ep *g, const float *params, const float *x,
                int N, float *out, float *aux, struct moe_act **out_act, struct mt_err *e);
/* Backward: dout (N, C) the gradient of out; aux_scale the gradient of the aux loss (the
 * loss scale; ignored when the aux loss is off). Adds into grads (moe_param_count floats)
 * and writes dx (N, C). Collective over g. Frees the handle and sets *act NULL. */
int moe_backward(const struct moe_dims *d, struct moe_ep *g, const float *params, float *grads,
                 struct moe_act **act, const float *dout, float aux_scale, float *dx,
                 struct mt_err *e);
void moe_act_free(struct moe_act *a);
/* Bytes the handle holds (what a full forward keeps for backward), as memcount counts them. */
size_t moe_act_bytes(const struct moe_act *a);
/* The same in closed form when each rank receives as many copies as it sends (N k: balanced
 * routing, and always at ep 1), for the simulator's memory (exec/interp_check.c). */
size_t moe_act_bytes_balanced(const struct moe_dims *d, int ep, int N);
/* The routing of the forward: expert index and gate of token t's slot j. */
int moe_act_expert(const struct moe_act *a, int t, int j);
float moe_act_gate(const struct moe_act *a, int t, int j);

/* exec/moe_sim.c: the simulation's side, for a run to lay beside what it measured: the
 * priced time (us) of the four all-to-alls of one MoE block and micro-batch of c
 * (model/ops_build_moe.c's ep ops: dispatch, combine and their backward mirrors, in the cost
 * model's dtype), and in *bytes what leaves the rank ((ep-1)/ep of each buffer). */
double moe_block_a2a_us(const struct config *c, double *bytes);

#endif
