/* model/cost.h: per-stage time and memory estimates (paper §5.2 "estimators").
 *
 * A stage is a list of ops (model/ops.h; model/ops_build.c lists a block, the embedding and the
 * head): its time and memory are sums over that list, computed once per stage (model/cost.c).
 * The config's framework chooses the pricing: the paper's presets (Megatron-DeepSpeed 2021,
 * ops_legacy) keep the closed forms below to the bit, each term now a sum over the list;
 * every other model prices each op by the device model (model/price.h: GEMMs and attention by
 * FLOPs, causal flash attention by the pairs its kernel runs, memory-bound ops by their bytes,
 * collectives by alpha-beta) and sums them. model/cost_ops.h prices a single op.
 * Memory is the same sum for both: each op's kept bytes (the figures below), and for the other
 * frameworks the head's input and the final norm's input (2sbh/r each) that the 2021 estimate
 * left out; a checkpoint and a p2p message there are sequence-split with SP (2sbh/t).
 *
 * The closed forms (the 2021 estimate), for a micro-batch of b samples, for a micro-batch of b samples, s tokens, hidden h, heads a, FFN width f,
 * vocabulary V, tensor parallelism t (mixed precision: 2-byte activations). Grouped-query
 * attention (Ainslie et al. 2023) with g K/V heads narrows K and V to k = g h/a: the 8bsh^2 of
 * QKV + projection below becomes 4bsh^2 + 4bshk, their 4h^2 parameters 2h^2 + 2hk (GPT's biases
 * 9h + f: 7h + 2k + f), the kept 8sbh of Q, K, V and the projection input 4sbh + 4sbk, W's qkv
 * gradients 6sbh: 2sbh + 4sbk; with g = a every figure is the multi-head one:
 *   forward FLOPs per layer  GPT:   8bsh^2 + 4bs^2h + 4bshf      (QKV+proj, scores, MLP)
 *                            LLaMA: 8bsh^2 + 4bs^2h + 6bshf      (SwiGLU has 3 matrices)
 *   + LM head 2bshV on the last stage; backward = 2 x forward; recompute = forward
 *   (Narayanan et al., SC'21, "Efficient large-scale LM training", eq. 2). All / t.
 *   time = FLOPs / (peak_flops x efficiency x T / (T + T_half)), T = b x s tokens of the
 *   micro-batch: small matmuls underfill the device, so efficiency saturates with the
 *   micro-batch (cluster.efficiency_half_tokens = T_half; 0 keeps it constant). This is what
 *   makes the paper's larger micro-batches (lmbs, §6) pay off.
 *   activation bytes per layer  GPT:   sbh(10/r + (8 + 4f/h)/t) + A
 *                               LLaMA: sbh(8/r + (8 + 8f/h)/t) + A
 *   (Korthikanti et al., "Reducing activation recomputation", Table 2: 34sbh + 5as^2b at
 *   f = 4h, t = 1; LLaMA: no dropout masks, SwiGLU keeps gate, up, silu and product),
 *   r = t with sequence parallelism (Table 2's "sequence parallel" row: every term / t), else 1;
 *   A, the attention's own keep: eager (the paper's stack) 5as^2b/t, LLaMA 2as^2b/t (scores
 *   after softmax and dropout, mask; Table 2); flash (the default) 4asb/t, the fp32 log-sum-exp
 *   of each row the backward needs (Dao et al., FlashAttention, §3.1 and Alg. 2: O and the
 *   statistics l, m are kept, not S or P; Q, K, V and O are counted in the sbh terms already);
 *   + logits 4sbV/t (fp32) on the last stage. Checkpoint = the stage input, 2sbh bytes.
 *   Flash's backward recomputes S = QK^T from the kept Q, K: + 2bs^2h/t FLOPs per layer over
 *   2 x forward (FlashAttention Alg. 4; P V is not recomputed, its gradient needs only P).
 *   TP communication per layer (Megatron-LM, Shoeybi et al. §3; Korthikanti §4.2.2): 2 all-
 *   reduces of the layer's activations (2sbh bytes) in the forward and 2 in the backward (with
 *   SP all-gathers + reduce-scatters, the same bytes on a ring): each 2(t-1)/t x 2sbh / bw,
 *   bw = cluster.tp_gbps inside a node, the slower of it and allreduce_gbps when the group
 *   spans nodes (tp > gpus_per_node). Added to the forward, the recompute and the backward.
 *   Static bytes = config_bytes_per_param (model/config.h: 18 = bf16 weights 2 + fp32 grads
 *   4 + fp32 master 4 + Adam m, v 8, Megatron-LM's count; 6 + 12/dp with the distributed
 *   optimizer; the paper's presets 16 = fp16 weights + fp16 grads + fp32 master, m, v,
 *   Rajbhandari et al., ZeRO, §3.1) per parameter / t. Params per layer GPT: 4h^2+2hf + 9h+f,
 *   LLaMA 4h^2+3hf+2h;
 *   embedding Vh (+ sh positions for GPT) on the first stage, head Vh + norm on the last.
 *   Split backward (zero-bubble schemes; Qi et al., arXiv 2401.10241, §2 and Table 1): W, the
 *   weight gradients, costs the forward's weight GEMMs again, GPT 8bsh^2 + 4bshf (LLaMA
 *   8bsh^2 + 6bshf), + 2bshV for the LM head; B, the input gradient, is the rest of the
 *   backward. After B a stage keeps for its W the inputs of its weight GEMMs and their output
 *   gradients, w_keep per layer (2-byte values):
 *     GPT:   inputs 2sbh (ln1) + 2sbh/t (attention out) + 2sbh (ln2) + 2sbf/t (gelu out),
 *            gradients 6sbh/t (qkv) + 2sbh (proj) + 2sbf/t (fc1) + 2sbh (fc2)
 *            = 32sbh at f = 4h, t = 1: the paper's M_W beside M_B = 34sbh + 5as^2b;
 *     LLaMA: the same with SwiGLU's gate and up gradients, 4sbf/t in place of 2sbf/t;
 *   + the head's input 2sbh and logit gradients 2sbV/t on the last stage. B frees the rest of
 *   the activations, W frees w_keep.
 *   p2p: 2sbh bytes / bandwidth + latency. Allreduce (ring): 2(n-1)/n x 2 bytes/param / bw.
 *   Optimizer step: 32 bytes/param of HBM traffic / hbm bandwidth.
 *   Offload (OF) and reload (RL) of a forward's activations: act bytes / cluster.host_gbps
 *   each way, on the device's copy engines (one device-to-host and one host-to-device copy
 *   at a time, beside compute and p2p). host_gbps is the effective PCIe bandwidth per
 *   direction: A100 PCIe Gen4 x16, 32 GB/s raw, ~25 GB/s measured by cudaMemcpyAsync from
 *   pinned memory (NVIDIA A100 datasheet; CUDA samples bandwidthTest reports 24-26 GB/s on
 *   DGX A100); H100 SXM and H200 PCIe Gen5 x16, 64 GB/s raw, ~50 GB/s (NVIDIA H100 and H200
 *   datasheets; bandwidthTest ~50-55 GB/s on HGX H100). Set cluster.host_gbps (--host-gbps)
 *   to a measured figure; nodes that share a PCIe switch between two GPUs see about half.
 *
 * Unit-cost mode (docs/design.md): F, B, RC are a device's whole share of the layers (B the whole
 * backward; split, W is the fourth number or B/2, and the input gradient B - W); a chunk
 * of a device holding v stages (W, ZB-W: chunks; ZB-V, DualPipeV: 2) costs F/v, B/v, RC/v
 * (a Chimera part is a whole replica of the share and costs F); p2p, allreduce and
 * optimizer are free; an OF or RL of a chunk keeping act M_θ lasts O x act (O, the fifth
 * number, moves one M_θ each way; default 1); activation
 * memory is in units of M_θ (a device share's activations): a chunk keeps 1/v, its
 * checkpoint and w_keep the analytic fractions ckpt/act and w_keep/act of that. Static
 * memory is 0. */
#ifndef MT_MODEL_COST_H
#define MT_MODEL_COST_H

#include <stdbool.h>

struct config;
struct mt_err;

struct stage_cost {
    int first_layer, num_layers; /* transformer blocks [first, first + num) */
    bool has_embed, has_head;
    double params;               /* parameter count (per tp rank) */
    double fw, bw, rc;           /* time of one micro-batch: us (t in unit mode) */
    double b, w;                 /* split backward: input gradient, weight gradient; b + w = bw */
    double act;                  /* bytes (M_θ units) a full forward keeps, one mb */
    double ckpt;                 /* bytes (units) a checkpointed forward keeps */
    double layer_act;            /* bytes (units) one transformer block keeps, one mb: what
                                  * checkpointing one more layer saves (selective, sim/) */
    double sel_ckpt;             /* bytes (units) a CFW of 0 < k < n layers keeps besides
                                  * act - k layer_act (sim/core/memory.h mem_ckpt_keep). Analytic:
                                  * ckpt, the input of the k layers (act leaves it out, every
                                  * layer counts its own input); the executor's act already holds
                                  * its stage input, so there it is the input of layer k less the
                                  * embedding output the first stage recomputes */
    double w_keep;               /* bytes (units) a B leaves for its W: the weight GEMMs' inputs
                                  * and output gradients (split backward) */
    double static_bytes;         /* weights + grads + optimizer state (0 in unit mode) */
    /* Transients: what an instruction holds while it runs, beyond what it leaves kept
     * (measured by a calibration, model/profile.h; 0 analytic). They raise the peak, not the
     * memory curve. */
    double fw_work_bytes;  /* FW: over what it keeps at its end (its output buffer) */
    double cfw_peak_bytes; /* CFW: the most it holds over what the device held before it (it
                            * runs the whole stage, then keeps only the input) */
    double bw_work_bytes;  /* BW, B, W: over what the device held before it (gradients) */
    double msg_bytes;            /* one activation or gradient message into or out of the
                                  * stage: the buffer a send holds until it completes, a
                                  * receive until its consumer ends (0 in unit mode) */
    double p2p;                  /* send of this stage's output or input gradient */
    double ar;                   /* allreduce of this stage's gradients over `group` replicas */
    double os;                   /* optimizer step of this stage */
    double copy;                 /* offload (OF) or reload (RL) of act over the host link */
    /* The expert all-to-alls (model/ops_build_moe.c: dispatch and combine) inside fw (and rc)
     * and inside b (so bw): their time, and the bytes that leave the rank, one micro-batch.
     * The simulator runs them on the device's communication lane, hidden behind the other
     * micro-batch's compute where the plan pairs a forward and a backward (sim/core/overlap.h);
     * 0 for a dense model and at ep = 1. Unit costs: the sixth number A of F,B,RC,W,O,A. */
    double fw_a2a, b_a2a;
    double fw_a2a_bytes, b_a2a_bytes;
};

struct cost_model {
    bool unit;                   /* times in t, memory in M_θ units */
    int num_stages;
    int parts_per_device;        /* v: stages a device holds (X: 2 replicas, W: chunks) */
    struct stage_cost *stage;    /* [num_stages] */
};

/* Builds the per-stage costs for a pipeline of num_stages stages whose devices each hold
 * parts_per_device of them; ar_group is how many replicas of a stage reduce gradients
 * together (dp, times 2 for Chimera). The layers are split as evenly as possible, the
 * remainder going to the middle stages (the ends carry the embedding and head). */
int cost_model_build(const struct config *c, int num_stages, int parts_per_device, int ar_group,
                     struct cost_model *out, struct mt_err *e);
void cost_model_fini(struct cost_model *m);

/* Forward model FLOPs (full squares) of one transformer block for one micro-batch on one TP
 * rank (exposed for tests, tuner, the calibration's shape ratios). */
double cost_layer_fw_flops(const struct config *c);
double cost_layer_act_bytes(const struct config *c);
/* One block's TP communication time of a forward (= of a backward) by the 2021 estimate's
 * ring formula (the header), us: 0 at tp = 1. */
double cost_layer_tp_us(const struct config *c, int seq);
/* FLOPs a flash backward adds over 2 x forward (the scores recomputed); 0 for eager. */
double cost_layer_flash_bw_flops_at(const struct config *c, int seq);
/* The device efficiency a micro-batch of this config reaches (see the header comment). */
double cost_efficiency(const struct config *c);
/* Parameters of one whole block (all TP ranks) */
double cost_layer_params(const struct config *c);
/* Parameters of a stage of n blocks holding the embedding and/or the LM head (per tp rank):
 * the 2021 estimate divides every one by t; the other frameworks count what a rank holds (norms,
 * row-parallel biases and positions whole, a tied head once where one stage holds both ends). */
double cost_stage_params(const struct config *c, int n, bool embed, bool head);
/* The same for the blocks [first, first + n) of a model whose blocks differ (a MoE model's
 * dense and MoE blocks, model/moe.h; the MTP modules with the head); = cost_stage_params for a
 * dense model. */
double cost_stage_params_at(const struct config *c, int first, int n, bool embed, bool head);

/* ---- functions of the sequence length (input-aware checkpointing, docs/design.md; Mimose) ------
 * The per-layer figures above at s tokens per sample instead of model.seq_length (the per-stage
 * costs at s are cost_model_build of the config with model.seq_length = s; the position
 * embedding keeps the model's largest length, seqlen.max_positions). And the bytes one block of
 * the executor's own model keeps for one micro-batch (exec/xformer_cpu.c, fp32, tp = 1): ln1,
 * qkv, atty, res2, ln2, res3 (8bsh floats), two layer-norm means and rstds (4bs), the attention
 * probabilities (abs^2) and the MLP's fch and gelu (2bsf): 4(8bsh + 4bs + abs^2 + 2bsf) bytes,
 * what its counting allocator measures (tests/unit/test_inputs.c). */
double cost_layer_fw_flops_at(const struct config *c, int s);
double cost_layer_act_bytes_at(const struct config *c, int s);
double cost_layer_act_bytes_exec(const struct config *c, int s);
/* Split backward: the FLOPs of one block's W and the bytes its B keeps for W (header). */
double cost_layer_w_flops_at(const struct config *c, int s);
double cost_layer_w_keep_bytes_at(const struct config *c, int s);
/* Every byte figure of a stage of the executor's own model at s tokens per sample, exactly
 * (exec/xformer_cpu.c's blocks, fp32; b = micro_batch_size and h, f, V of c; st->first_layer
 * and num_layers say which stage of c's model.num_layers; N = bs, E = 4Nh on the first stage,
 * H = 4(Nh + 3N + NV) the head on the last, l = cost_layer_act_bytes_exec):
 *   ckpt = 4N (tokens) or 4Nh (hidden input), + 4N (targets) on the last stage;
 *   layer_act = l;  act = ckpt + E + n l + H;  sel_ckpt = 4Nh - E (the kept input of layer k);
 *   cfw_peak_bytes = ckpt + E + l + 4Nh (a second residual stream, n >= 2) + H: the whole-stage
 *   CFW's input and scratch; bw_work_bytes = 4(5Nh + s^2 + Nf); w_keep = 4 xl_w_keep_floats
 *   (per layer the weight GEMMs' inputs and output gradients, 8Nh + 2Nf, and the head's lnf
 *   and dlogits, Nh + NV); fw_work_bytes = 0 (a FW
 *   allocates only what it keeps); static_bytes = 16 per parameter (weights, gradients, AdamW
 *   m and v; the position table has seqlen.max_positions rows, else model.seq_length).
 * What the counting allocator measures (tests/unit/test_inputs.c), p2p buffers aside. */
void cost_stage_bytes_exec(const struct config *c, int s, struct stage_cost *st);

/* ---- model/cost_overhead.c: what the analytic estimate leaves out ("Overheads") -------------
 * Measured runs (the paper's Table 5, Megatron-DeepSpeed on 8 nodes of 4 A100-40G) are 5-62 %
 * slower than FLOPs at a fixed efficiency give, and slowest where instructions are many and
 * small (W at micro-batch 1). Named terms, each a device-preset constant (cluster keys):
 *   op_overhead_us     framework cost of one FW, CFW or BW instruction: the pipeline engine's
 *                      Python, autograd set-up, the synchronisation around its blocking p2p.
 *                      A recompute runs inside its backward's call and does not pay it.
 *   layer_overhead_us  per transformer block and pass over it: its kernel launches and the
 *                      element-wise work the FLOP count leaves out. FW, CFW, RC: 1 pass, BW: 2.
 *   efficiency         (the device's, above) refitted with them.
 * A100-40G/80G: 3360 us, 546 us, 0.551, fitted (scripts/fit_overheads.py) on GPT3-13B's
 * measured Table 5 rows (MAPE 8.0 %) and checked on LLaMA2-13B's (9.5 %; docs/
 * paper-comparison.md, tests/cli/test_paper_table5.sh). The fit is nearly flat along op vs
 * layer overhead: with no layer term it reaches 7.8 % on GPT3-13B but 11.7 % on LLaMA2-13B;
 * the layer term kept has the size of a block's eager kernel launches (~25 x 5-25 us).
 * H100-80G, H200 take the same overheads (the same software stack, unmeasured there).
 * The rest, weighed and left as it was:
 *   p2p: the paper does not name its network; at 12.5 GB/s + 30 us (100 Gb/s) the fit model's
 *     MAPE moves 0.3 points, too little to fix it: 50 GB/s + 10 us stay (cluster.p2p_gbps...).
 *   optimizer step: 32 bytes/param over HBM, ~10 ms of a 4-9 s step here; nothing to fit.
 *   DP all-reduce: already an instruction after the last backward (not overlapped); Table 5
 *     has dp = 1, so it holds no evidence for its constants.
 * Adds to st's fw, rc and bw (analytic, before a calibration replaces what it measured). */
void cost_overhead_apply(const struct config *c, struct stage_cost *st);

#endif
