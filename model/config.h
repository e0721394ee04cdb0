/* model/config.h: what a user asks for — the paper's Listing 1 keys (pipeline_scheme,
 * global_batch_size, num_device, memory_per_device), a model (Table 4) and a cluster.
 * Plain struct: read by every layer. Parsing lives in model/config_json.c. */
#ifndef MT_MODEL_CONFIG_H
#define MT_MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"

struct mt_err;

/* Schemes by the paper's shape letters. SCHEME_AUTO means "ask the tuner". */
enum scheme_id {
    SCHEME_V,     /* 1F1B (DeepSpeed / Megatron-LM order) */
    SCHEME_X,     /* Chimera: two pipelines, up and down, D even */
    SCHEME_W,     /* Megatron-LM interleaved 1F1B, chunks >= 2 */
    SCHEME_GPIPE, /* all forwards, then all backwards */
    SCHEME_AUTO,
    SCHEME_ASYNC,     /* PipeMare: 1F1B with no flush, a stage steps every U backwards */
    SCHEME_PIPEDREAM, /* the same order with weight stashing (PipeDream) */
    /* Split backward (B: input gradient, W: weight gradient; the zero-bubble family) */
    SCHEME_ZBH1,      /* ZB-H1: 1F1B with W deferred, 1F1B's memory (arXiv 2401.10241) */
    SCHEME_ZBH2,      /* ZB-H2: more warm-up forwards, W at the tail, ~2x 1F1B's memory */
    SCHEME_ZBV,       /* ZB-V: two chunks in a V (the authors' zbv.py) */
    SCHEME_ZBW,       /* interleaved zero bubble (torch ScheduleInterleavedZeroBubble) */
    SCHEME_DUALPIPEV, /* DualPipeV (DeepSeek; torch ScheduleDualPipeV) */
    SCHEME_ZBV_TORCH, /* ZB-V as torch's ScheduleZBVZeroBubble orders it */
    SCHEME_VHALF,     /* V-Half: a V at 1/2 of 1F1B's activations (arXiv 2405.15362) */
    SCHEME_VMIN,      /* V-Min: a V at 1/3 of 1F1B's activations (arXiv 2405.15362) */
    SCHEME_DUALPIPE,  /* DualPipe (DeepSeek-V3): both directions, Chimera's placement */
    SCHEME__COUNT
};

enum model_arch { ARCH_GPT3, ARCH_LLAMA2, ARCH_CUSTOM };

/* A block's parts where model families differ (the Hugging Face families, issue 41; the op
 * builders of model/ops_build.c read them through the config_* resolvers below). Each *_DEFAULT
 * is the arch's: GPT gelu, layer norm, biases on every linear layer, tied embeddings; LLaMA
 * SwiGLU, RMSNorm, no biases, untied. */
enum mlp_kind { MLP_DEFAULT, MLP_GELU, MLP_SWIGLU, MLP_GEGLU };     /* GEGLU: Gemma */
enum norm_kind { NORM_DEFAULT, NORM_LAYERNORM, NORM_RMSNORM };
enum bias_kind { BIAS_DEFAULT, BIAS_NONE, BIAS_QKV, BIAS_ALL };     /* BIAS_QKV: Qwen2 */
enum tri_state { TRI_DEFAULT, TRI_NO, TRI_YES };
/* A norm on q and k before the scores: over each head's head_dim, one weight the heads share
 * (Qwen3's q_norm and k_norm, transformers modeling_qwen3.py), or over the whole projection,
 * a x head_dim for q and kv x head_dim for k (OLMo2's, modeling_olmo2.py). */
enum qk_norm_kind { QK_NORM_NONE, QK_NORM_HEAD, QK_NORM_WHOLE };

/* The software stack whose costs a config prices (model/framework.h; issue 37 item 3):
 * FRAMEWORK_DEFAULT is Megatron-DeepSpeed 2021 for the paper's presets (its Table 5 was
 * measured there), Megatron-core with Transformer Engine otherwise. */
enum framework_id { FRAMEWORK_DEFAULT, FRAMEWORK_MEGATRON_DS_2021, FRAMEWORK_MEGATRON_CORE,
                    FRAMEWORK_TORCHTITAN, FRAMEWORK__COUNT };

/* How context-parallel ranks exchange K/V (Megatron-LM --cp-comm-type, Transformer Engine's
 * cp_comm_type; model/ops_build_cp.c): p2p a ring of K/V blocks overlapped with the attention
 * blocks; all_gather K/V gathered before the attention, exposed (Llama 3 §3.3.2); a2a
 * DeepSpeed-Ulysses, the heads scattered by an all-to-all; a2a+p2p both, the all-to-all inside a
 * node and the ring across. */
enum cp_comm_type { CP_COMM_P2P, CP_COMM_ALL_GATHER, CP_COMM_A2A, CP_COMM_A2A_P2P,
                    CP_COMM__COUNT };

/* FP8 training of the linear layers (issue 39 item 4; model/fp8.h, docs/fp8.md), as Megatron-LM's
 * --fp8-recipe names Transformer Engine's recipes: delayed (DelayedScaling: a tensor's scale
 * from the amax history), tensorwise (Float8CurrentScaling: the scale from the tensor's own
 * amax), blockwise (Float8BlockScaling: DeepSeek-V3's 1x128 activation and 128x128 weight
 * blocks), mxfp8 (MXFP8BlockScaling: an E8M0 scale per 32 values, Blackwell only). FP8_NONE:
 * every GEMM in bf16, the default. */
enum fp8_recipe { FP8_NONE, FP8_DELAYED, FP8_TENSORWISE, FP8_BLOCKWISE, FP8_MXFP8,
                  FP8_RECIPE__COUNT };
/* Megatron-LM's --fp8-format: hybrid (E4M3 forward, E5M2 gradients) or e4m3 everywhere. Both
 * are one byte at the same tensor-core rate: carried for the round trip, priced alike. */
enum fp8_format { FP8_FORMAT_HYBRID, FP8_FORMAT_E4M3, FP8_FORMAT__COUNT }; /* hybrid: the default */
/* torchtitan's [parallelism] fsdp_reshard_after_forward (torchtitan/distributed/fsdp.py
 * get_fsdp_reshard_after_forward_policy): "default" = resharded unless pipeline-parallel */
enum fsdp_reshard { FSDP_RESHARD_DEFAULT, FSDP_RESHARD_ALWAYS, FSDP_RESHARD_NEVER,
                    FSDP_RESHARD__COUNT };

/* Limits checked before anything is allocated from input. */
#define CONFIG_MAX_DEVICES 131072 /* Llama 3 trained on 16,384 GPUs; 8x that */
#define CONFIG_MAX_MICROBATCHES 65536
#define CONFIG_MAX_CHUNKS 64
#define CONFIG_MAX_LAYERS 100000
#define CONFIG_MAX_HEAD_DIM (1 << 20) /* model.head_dim, whichever reader gives it */
#define CONFIG_MAX_ITERATIONS 4096
#define CONFIG_LAYOUT_MAX 1024 /* bytes of a pipeline_layout string, with its NUL */
/* The CUDA context (~0.3-0.6 GiB on A100/H100 with CUDA 12's lazy module loading; PyTorch's
 * "CUDA semantics" notes it is outside torch.cuda.memory_allocated), NCCL's communicator
 * buffers (NCCL_BUFFSIZE 4 MiB per channel and peer) and the caching allocator's
 * fragmentation: 1 GiB. */
#define CONFIG_RESERVE_DEFAULT (1024.0 * 1024 * 1024)
#define CONFIG_GPUS_PER_NODE 8 /* the default: DGX/HGX A100, H100 and H200 nodes hold 8 GPUs */

struct model_spec {
    char name[48];
    enum model_arch arch;
    int hidden_size;         /* h */
    int num_layers;          /* L transformer blocks */
    int num_attention_heads; /* a */
    int seq_length;          /* s, tokens per sample */
    int vocab_size;          /* V */
    int ffn_hidden_size;     /* GPT: 4h; LLaMA2: SwiGLU width */
    int num_key_value_heads; /* K/V heads (GQA; 1 = MQA); 0 = a (multi-head attention) */
    bool paper_stack;        /* a preset of the paper's 2021 stack (Table 4 shapes, tiny): eager
                              * attention and 16 bytes a parameter unless the config says */
    /* The family's parts (the enums above; 0 = the arch's default, config_mlp() etc.) */
    enum mlp_kind mlp;
    enum norm_kind norm;
    enum bias_kind bias;
    int head_dim;                /* per head; 0 = hidden_size / num_attention_heads */
    enum tri_state tie_embeddings; /* the LM head shares the embedding's matrix */
    enum qk_norm_kind qk_norm;   /* a norm on q and k (Qwen3, OLMo2, Gemma 3); 0 = none */
    /* Mixture of experts and multi-head latent attention (issue 38; model/moe.h): zero = a
     * dense block with multi-head (or grouped-query) attention */
    struct moe_spec {
        int num_experts;        /* routed experts E (Megatron --num-experts); 0 = dense */
        int router_topk;        /* experts a token goes to (--moe-router-topk) */
        int ffn_hidden_size;    /* one routed expert's width (--moe-ffn-hidden-size) */
        int shared_ffn;         /* all shared experts' width together
                                 * (--moe-shared-expert-intermediate-size); 0 = none */
        int layer_freq;         /* every layer_freq-th block is MoE, counting from the first
                                 * (--moe-layer-freq N; Qwen's decoder_sparse_step); 0 = 1 */
        int first_k_dense;      /* the first k blocks are dense (DeepSeek first_k_dense_replace) */
        int mtp_layers;         /* multi-token prediction depth (DeepSeek-V3
                                 * num_nextn_predict_layers, Megatron --mtp-num-layers) */
        double routing_skew;    /* tokens of the busiest EP rank over the mean; 0 = 1.2 */
        double capacity_factor; /* --moe-expert-capacity-factor; 0 = dropless */
        bool fp8_dispatch;      /* the forward dispatch all-to-all in FP8 (DeepSeek-V3 §3.3) */
        bool router_bias;       /* a per-expert score-correction bias (DeepSeek-V3's
                                 * aux-loss-free balancing: e_score_correction_bias) */
    } moe;
    struct mla_spec {
        int kv_lora_rank;       /* > 0: multi-head latent attention (DeepSeek-V2 §2.1) */
        int q_lora_rank;        /* the queries' low-rank width; 0 = q projected directly */
        int qk_nope_head_dim;   /* per head: the part of q, k without rotary */
        int qk_rope_head_dim;   /* per head: the rotary part (k's shared by the heads) */
        int v_head_dim;         /* per head: v's width */
    } mla;
};

/* Attention kernels. CONFIG_ATTN_DEFAULT: the model's (eager for a paper_stack model, else
 * flash), resolved by config_attention(), so an explicit key or flag wins in any order. */
enum attention_kind { ATTN_DEFAULT, ATTN_FLASH, ATTN_EAGER };

/* Activation recomputation inside each transformer block (model/ops_recompute.c; the whole
 * stage's checkpointing is Mario's, the plan's CFW instructions): none; Megatron-LM's
 * --recompute-granularity selective (the core attention); torchtitan's per-op selective AC
 * (selective_ac_option "op"); full (every block's forward again in its backward, Megatron-LM's
 * --recompute-granularity full --recompute-method uniform --recompute-num-layers 1, torchtitan's
 * mode "full"). */
enum recompute_mode { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_OP, RECOMPUTE_FULL,
                      RECOMPUTE__COUNT };
int config_recompute_parse(const char *s, enum recompute_mode *out, struct mt_err *e);
const char *config_recompute_name(enum recompute_mode r);
/* What the model and framework allow of c->recompute (model/ops_recompute.c) */
int config_validate_recompute(const struct config *c, struct mt_err *e);

struct device_spec {
    char name[32];
    double peak_flops;   /* dense fp16/bf16 FLOP/s */
    double efficiency;   /* achievable fraction of peak (MFU of a block) at large micro-batches */
    double mem_bytes;    /* device memory */
    double hbm_gbps;     /* memory bandwidth, GB/s (optimizer step) */
    /* Framework and kernel-launch overhead of the software stack on this device (model/cost.h,
     * "Overheads"): per compute instruction, and per transformer block per forward pass. */
    double op_overhead_us;
    double layer_overhead_us;
    double nvlink_gbps;  /* GPU-to-GPU bandwidth inside a node, GB/s per direction: the default
                          * of cluster.tp_gbps (model/presets.c says where each comes from) */
    double host_gbps;    /* GPU-to-host (PCIe) bandwidth, GB/s per direction, effective: the
                          * default of cluster.host_gbps (offload's OF/RL, model/cost.h) */
    /* The op-level device model's figures (model/price.h; issue 37 items 2 and 5). The fields
     * above are what the paper's aggregate path reads; model/presets.c names each figure's
     * datasheet or measurement. */
    double fp8_peak_flops;     /* dense FP8 FLOP/s; 0 = the device has no FP8 tensor cores */
    double gemm_eff;           /* the largest fraction of the bf16 peak a GEMM reaches (measured
                                * maximum achievable matmul FLOPS); the curve's ceiling */
    double gemm_eff_fp8;       /* the same for FP8 GEMMs */
    double gemm_mn_half;       /* an output dimension (m or n) at which a GEMM reaches half
                                * the ceiling on that dimension alone (tile quantization) */
    double gemm_k_half;        /* the same for the reduction dimension k (mainloop vs the
                                * tile's prologue and epilogue) */
    int sms;                   /* streaming multiprocessors (compute units): a GEMM's tiles
                                * fill them in waves */
    double attn_eff_fw;        /* fraction of the bf16 peak a flash-attention forward reaches at
                                * long sequences */
    double attn_eff_bw;        /* the same for its backward */
    double attn_fa2_eff_fw;    /* FlashAttention-2's forward share (PyTorch SDPA's flash backend,
                                * what torchtitan runs) where it is below the device's best
                                * kernel; 0 = attn_eff_fw */
    double attn_fa2_eff_bw;    /* the same for its backward; 0 = attn_eff_bw */
    double hbm_eff;            /* fraction of hbm_gbps a memory-bound kernel reaches */
    double nvlink_busbw_gbps;  /* NCCL all-reduce bus bandwidth inside an NVLink domain, GB/s
                                * (nccl-tests busbw, large messages) */
    double nvlink_lat_us;      /* one step of a collective inside the domain, us */
    double net_gbps;           /* the network each GPU has to other nodes, GB/s per direction
                                * (400 Gb/s NDR = 50) */
    double net_lat_us;         /* one step of a collective over the network, us */
    int gpus_per_node;         /* GPUs one NVLink domain joins: 8 on HGX/DGX, 72 on GB200 NVL72;
                                * the default of cluster.gpus_per_node */
    bool mxfp8;                /* Blackwell's FP8 tensor cores (sm_100): MXFP8 block scales in
                                * the MMA, and any operand layout (no transposed FP8 copies;
                                * model/fp8.h) */
};

struct cluster_spec {
    struct device_spec device;
    double p2p_gbps;      /* pipeline p2p bandwidth, GB/s */
    double p2p_lat_us;    /* per message */
    double ar_gbps;       /* data-parallel allreduce bus bandwidth, GB/s */
    double dp_efficiency; /* scaling-efficiency coefficient of data parallelism (§5.3) */
    double eff_half_tokens; /* tokens per micro-batch at which a block reaches half its
                             * efficiency (small matmuls underfill the device); 0 = constant */
    int dp;               /* data-parallel degree */
    int tp;               /* tensor-parallel degree: GPUs of one stage; pp = num_device / (dp tp) */
    int gpus_per_node;    /* GPUs one node's NVLink joins (CONFIG_GPUS_PER_NODE); a TP group
                           * wider than a node crosses the inter-node link */
    double tp_gbps;       /* TP collectives' bandwidth inside a node, GB/s (the device's
                           * nvlink_gbps unless given) */
    double host_gbps;     /* a GPU's link to host memory, GB/s per direction: what an offload
                           * (OF) or reload (RL) moves its activations over (the device's
                           * host_gbps unless given) */
    double host_mem_per_node; /* host memory offloaded activations may take on one node, bytes;
                               * 0 = no cap (config_host_cap) */
    enum framework_id framework; /* "framework"; FRAMEWORK_DEFAULT = config_framework()'s rule */
    /* "compute_factor", "kernel_overhead_us": the framework profile's (model/framework.h) unless
     * given (CONFIG_GIVEN_COMPUTE_FACTOR, CONFIG_GIVEN_KERNEL_OVERHEAD): the fraction of the
     * device model's GEMM and attention rates a training step sustains, and the gap a kernel
     * launch leaves */
    double compute_factor;
    double kernel_overhead_us;
    /* What the framework hides behind compute (model/framework.h, framework_overlapped):
     * Megatron-LM's --tp-comm-overlap, --overlap-grad-reduce and --overlap-param-gather, off
     * unless asked */
    bool tp_comm_overlap;     /* "tp_comm_overlap": TP collectives overlap their GEMMs */
    bool overlap_grad_reduce; /* "overlap_grad_reduce": the DP gradient reduce overlaps the
                               * last backwards */
    bool overlap_param_gather; /* "overlap_param_gather": the distributed optimizer's parameter
                                * all-gather overlaps the first forwards */
    /* Context parallelism (issue 39 item 1; docs/long-context.md): the sequence split over cp
     * GPUs, Megatron-LM's --context-parallel-size and --cp-comm-type. A GPU holds s / cp
     * tokens of every activation; the attention exchanges K/V as cp_comm_type says. */
    int cp;                          /* "cp": 1 = none (config_cp) */
    enum cp_comm_type cp_comm_type;  /* "cp_comm_type" */
    /* Expert parallelism (model/moe.h; Megatron's --expert-model-parallel-size and
     * --expert-tensor-parallel-size): the experts' groups fold the GPUs of a pipeline stage
     * as etp x ep x expert dp; 0 = 1 (ep) and tp (etp), as Megatron defaults them */
    int ep;
    int etp;
    /* FP8 (model/fp8.h): Megatron-LM's --fp8-recipe, --fp8-format, --fp8-param-gather */
    enum fp8_recipe fp8_recipe;  /* "fp8_recipe"; FP8_NONE = bf16 */
    enum fp8_format fp8_format;  /* "fp8_format" */
    bool fp8_param_gather;       /* "fp8_param_gather": the compute weights kept in FP8 only,
                                  * all-gathered in FP8 by the distributed optimizer */
    /* ZeRO / FSDP (issue 39 item 3; docs/fsdp.md; model/ops_build_fsdp.c): what is sharded over
     * the data-parallel shard group. zero_stage 0 = plain DP (gradients all-reduced), 1 = the
     * optimizer state (Megatron's distributed optimizer), 2 = + gradients, 3 = + parameters
     * (FSDP); config_zero_stage reads it with distributed_optimizer (one rule). */
    int zero_stage;                    /* "zero_stage" */
    enum fsdp_reshard reshard_after_forward; /* "fsdp_reshard_after_forward" */
    int dp_shard;                      /* "dp_shard": the shard group (torchtitan's
                                        * data_parallel_shard_degree); dp / dp_shard replicas
                                        * of it (HSDP); 0 = all of dp */
};

/* ---- model/config_zero.c: ZeRO / FSDP's keys ------------------------------------------------ */
/* The ZeRO stage a config runs: cluster.zero_stage, at least 1 with distributed_optimizer (the
 * distributed optimizer is ZeRO-1: Rajbhandari et al. 2020, §5.1 P_os; Megatron-LM's
 * distrib_optimizer.md). The one place both keys are read. */
int config_zero_stage(const struct config *c);
/* The shard group's size over dp: cluster.dp_shard, else dp (1 at zero stage 0) */
int config_dp_shard(const struct config *c);
/* Replicas of the shard group: dp / config_dp_shard (HSDP's replicate degree) */
int config_dp_replicate(const struct config *c);
/* Whether a stage-3 (FSDP) layer's parameters are freed after its forward: torchtitan's
 * fsdp_reshard_after_forward, "default" = not under pipeline parallelism (pp > 1) */
bool config_fsdp_reshard_after_forward(const struct config *c);
/* "default" | "always" | "never" (torchtitan's spellings); MT_EINVAL listing them otherwise */
int config_fsdp_reshard_parse(const char *s, enum fsdp_reshard *out, struct mt_err *e);
const char *config_fsdp_reshard_name(enum fsdp_reshard r);
/* The checks of zero_stage, dp_shard and fsdp_reshard_after_forward (config_validate calls it) */
int config_validate_zero(const struct config *c, struct mt_err *e);

/* The values a preset fills in (the device's cap and tp_gbps) unless the config or a flag gave
 * them: an explicit value wins whatever the order (config_set_device). */
enum config_given {
    CONFIG_GIVEN_MEMORY = 1 << 0,  /* memory_per_device, --memory */
    CONFIG_GIVEN_TP_GBPS = 1 << 1, /* cluster.tp_gbps */
    CONFIG_GIVEN_HOST_GBPS = 1 << 2, /* cluster.host_gbps, --host-gbps */
    CONFIG_GIVEN_GPUS_PER_NODE = 1 << 3, /* cluster.gpus_per_node */
    /* cluster.op_overhead_us, cluster.layer_overhead_us: they win over the framework's
     * profile (model/framework.h) */
    CONFIG_GIVEN_OP_OVERHEAD = 1 << 4,
    CONFIG_GIVEN_LAYER_OVERHEAD = 1 << 5,
    /* cluster.compute_factor, cluster.kernel_overhead_us: the same */
    CONFIG_GIVEN_COMPUTE_FACTOR = 1 << 6,
    CONFIG_GIVEN_KERNEL_OVERHEAD = 1 << 7,
};

/* Sequence lengths that vary from batch to batch (docs/design.md "Input-aware checkpointing",
 * Mimose): the config's model.seq_length may be one number, a distribution or a file of
 * per-batch lengths (model/seqlen.h reads them). model.seq_length then holds the longest
 * length, so every fixed-length estimate is the conservative one. */
#define SEQLEN_MAX_VALUES 256
#define SEQLEN_MAX_WEIGHT 1e15 /* a weight times a step time (us) stays finite */

enum seqlen_kind { SEQLEN_FIXED, SEQLEN_DIST, SEQLEN_FILE };

struct seqlen_spec {
    enum seqlen_kind kind;
    int n;                             /* SEQLEN_DIST: values given */
    int values[SEQLEN_MAX_VALUES];     /* tokens, each in [1, the largest length allowed] */
    double weights[SEQLEN_MAX_VALUES]; /* in [0, SEQLEN_MAX_WEIGHT], not all 0 (relative
                                        * frequencies) */
    char path[256];                    /* SEQLEN_FILE: the lengths file, resolved */
    int max_positions;                 /* the largest length the model takes (its
                                        * max_position_embeddings); 0 = model.seq_length */
};

/* Unit-cost mode (docs/design.md): F, B, RC are the costs of one device's whole share of layers;
 * a chunk op of a W plan with v chunks costs F/v; p2p is free; memory is in units of M_θ. */
struct unit_costs {
    bool enabled;
    double f, b, rc; /* forward, whole backward, recompute */
    double w;        /* split backward: W's share of b (B = b - w); 0 = half of b */
    double o;        /* offload: moving one M_θ of activations over the host link, each way
                      * (an OF or RL of a chunk keeping act M_θ lasts o x act); default 1 */
    double a;        /* the expert all-to-alls inside f and inside b's input-gradient part
                      * (each; sim/core/overlap.h hides them in F&B pairs); default 0 */
};

struct config {
    char source[256];          /* file it came from, "(built-in default)" or "(flags)" */
    enum scheme_id scheme;
    int global_batch_size;     /* samples per iteration across dp replicas */
    int micro_batch_size;      /* samples per micro-batch */
    int num_device;            /* GPUs: D = pp x dp x tp */
    int num_microbatches;      /* N per pipeline; 0 = derive global / (mbs * dp) */
    int chunks;                /* v for W (parts per device); ignored by others */
    double memory_per_device;  /* cap in bytes; 0 = the device's memory */
    bool blocking_send;        /* rendezvous p2p: a send waits for its receive */
    bool overlap_moe_a2a;      /* Megatron's --overlap-moe-expert-parallel-comm: interleaved
                                * 1F1B's steady-state forward and backward run as a pair whose
                                * expert all-to-alls hide behind each other's compute */
    int iterations;            /* K iterations one plan spans (async schemes; else 1) */
    int update_interval;       /* U backwards per optimizer step of a stage (async; else 1) */
    struct unit_costs unit;
    struct model_spec model;
    struct cluster_spec cluster;
    struct seqlen_spec seqlen; /* model.seq_length's distribution (SEQLEN_FIXED: the one) */
    struct profile profile;    /* a calibration (--calibration; "calibration" in the file):
                                * measured costs in place of the analytic ones where enabled */
    unsigned given;            /* enum config_given: values set explicitly */
    /* The training stack (model/cost.h): what a GPU keeps and computes */
    enum attention_kind attention; /* "attention"; ATTN_DEFAULT = the model's */
    bool sequence_parallel;        /* "sequence_parallel": activations split over tp too */
    bool distributed_optimizer;    /* "distributed_optimizer": fp32 state sharded over dp */
    double bytes_per_param;        /* "bytes_per_param"; 0 = config_bytes_per_param's rule */
    double reserve;                /* "reserve", bytes per GPU kept for the CUDA context and the
                                    * caching allocator; < 0 = config_reserve's default */
    /* Megatron-LM's flags that move the figures (issue 37 item 4; TRI_DEFAULT / 0 = the
     * framework's, resolved below) */
    enum tri_state ce_fusion;      /* "cross_entropy_loss_fusion" */
    enum recompute_mode recompute; /* "recompute": activation recomputation inside a block
                                    * (model/ops_recompute.c) */
    enum tri_state grad_reduce_fp32; /* "accumulate_allreduce_grads_in_fp32" */
    int vocab_divisible_by;        /* "make_vocab_size_divisible_by"; 0 = the framework's */
    /* The layers' split over the stages (model/stage_split.h): at most one rule; none = the
     * even split. Megatron-LM's flags: */
    char pipeline_layout[CONFIG_LAYOUT_MAX];     /* "pipeline_layout": the string of
                                                  * --pipeline-model-parallel-layout; "" = none */
    int decoder_first_pipeline_num_layers;       /* layers of the first pipeline rank; 0 = unset */
    int decoder_last_pipeline_num_layers;        /* of the last; 0 = unset */
    bool account_for_embedding_in_pipeline_split; /* the embedding counts as a layer */
    bool account_for_loss_in_pipeline_split;      /* the loss (LM head) counts as a layer */
    /* torchtitan's [parallelism] pipeline_parallel_first/last_stage_less_layers: the ends'
     * weights in layers, given when stage_less_layers (then each defaults to 1, as there) */
    bool stage_less_layers;
    int first_stage_less_layers, last_stage_less_layers;
};

/* ---- model/config_parallel.c: context parallelism's keys -------------------------------- */
/* cluster.cp, at least 1 */
int config_cp(const struct config *c);
/* "p2p" | "all_gather" | "a2a" | "a2a+p2p" (Megatron's spellings, case-insensitive); MT_EINVAL
 * listing them otherwise. */
int config_cp_comm_parse(const char *s, enum cp_comm_type *out, struct mt_err *e);
const char *config_cp_comm_name(enum cp_comm_type t);
/* "p2p all_gather a2a a2a+p2p", for --help and messages */
const char *config_cp_comm_names_line(void);
/* The all-to-all group of the attention under cp: cp for a2a; for a2a+p2p the CP ranks that
 * share a node (gpus_per_node / tp of them, Megatron's --hierarchical-context-parallel-sizes
 * with the inner level on NVLink), the largest divisor of cp and of this rank's K/V heads not
 * above that; 1 for p2p and all_gather. The ring is cp / this. */
int config_cp_a2a_size(const struct config *c);
/* The checks of cp and cp_comm_type and their combinations (config_validate calls it). */
int config_validate_cp(const struct config *c, struct mt_err *e);

/* K/V heads: num_key_value_heads, or a when 0. */
int config_kv_heads(const struct model_spec *m);
/* The family's parts with the arch's defaults resolved (enum mlp_kind ...): never *_DEFAULT. */
enum mlp_kind config_mlp(const struct model_spec *m);
enum norm_kind config_norm(const struct model_spec *m);
enum bias_kind config_bias(const struct model_spec *m);
int config_head_dim(const struct model_spec *m);
bool config_tied_embeddings(const struct model_spec *m);
/* The framework a config is priced as: cluster.framework, else Megatron-DeepSpeed 2021 for a
 * paper_stack model and Megatron-core otherwise. Never FRAMEWORK_DEFAULT. */
enum framework_id config_framework(const struct config *c);
/* Megatron-LM's --cross-entropy-loss-fusion: the config's, else on for Megatron-core (NeMo's
 * recipes set it; the fused kernel keeps no fp32 logits), off for the 2021 stack and
 * torchtitan (its loss casts the logits to fp32). */
bool config_ce_fusion(const struct config *c);
/* Megatron-LM's --accumulate-allreduce-grads-in-fp32 (fp32 gradients reduced, 4 bytes a
 * parameter, else 2): the config's, else on except for the 2021 stack (fp16 gradients):
 * Megatron forces it for bf16 unless --grad-reduce-in-bf16, torchtitan's FSDP reduces in fp32. */
bool config_grad_reduce_fp32(const struct config *c);
/* Megatron-LM's --make-vocab-size-divisible-by: the config's, else 128 (Megatron's default),
 * 1 (no padding) for the 2021 stack's presets; the vocabulary is padded to a multiple of it
 * x tp (model/ops.h ops_vocab_size). */
int config_vocab_divisible_by(const struct config *c);
/* The built-in default: GPT3-1.6B on 8 x A100-40G, V, global batch 128, mbs 1. */
void config_default(struct config *c);
/* The FFN width a model of hidden size h has unless given: 4h (GPT), SwiGLU's
 * 256 * ceil((8h/3) / 256) (LLaMA2). -1 when it does not fit an int. */
int config_ffn_default(enum model_arch arch, int h, int *out);
/* Pipeline depth pp = num_device / (tp x cp x dp): Megatron-LM's world size is
 * tp x cp x pp x dp (parallel_state.initialize_model_parallel). */
int config_pp(const struct config *c);
/* The GPUs for pipeline depth pp at the config's dp, tp and cp: num_device = pp x dp x tp x cp
 * (the one place that says how a depth becomes GPUs). */
void config_set_pp(struct config *c, int pp);
/* The attention a config runs: its "attention", else the model's default (eager for the
 * paper's presets, flash otherwise). */
enum attention_kind config_attention(const struct config *c);
/* "flash" | "eager" (case-insensitive); MT_EINVAL otherwise. */
int config_attention_parse(const char *s, enum attention_kind *out, struct mt_err *e);
const char *config_attention_name(enum attention_kind a);
/* Static bytes per parameter (weights, gradients, optimizer state): "bytes_per_param" if set;
 * else r + 12 / (dp if distributed_optimizer else 1), r = 6 (bf16 weights 2 + fp32 gradients
 * 4, Megatron-LM's mixed precision) or 4 for the paper's presets (fp16 weights and gradients,
 * ZeRO §3.1's count), 12 = fp32 master weights and Adam's m and v. */
double config_bytes_per_param(const struct config *c);
/* The same for parameters whose gradients are reduced over a group of dp replicas (the routed
 * experts' expert dp, model/moe.h). */
double config_bytes_per_param_over(const struct config *c, int dp);
/* Bytes per GPU that no plan may use: "reserve" if set; else CONFIG_RESERVE_DEFAULT, 0 for the
 * paper's presets (the paper's caps and fit verdicts are its simulator's, with none) and under
 * unit costs (memory in M_θ). */
double config_reserve(const struct config *c);
/* The cap every plan is checked against: memory_per_device less the reserve; 0 = no cap (unit
 * costs without one). sim/ reads the cap here and nowhere else. */
double config_mem_cap(const struct config *c);
/* A cap under a MiB and below one transformer layer's activations is a unit slip ("--memory
 * 40" for 40G):
 * MT_EINVAL "<what>: 40 B is below one layer's activations (12.5 MiB): did you mean 40G?".
 * A cap of 0 (no cap) and unit costs (M_θ) pass. */
int config_check_cap(const struct config *c, const char *what, struct mt_err *e);
/* The parallel degrees as every header prints them: "pp 8 x dp 1 x tp 8 x cp 2 (p2p) (ep 8)"
 * (tp, cp with its K/V exchange, ep when over 1; pp is the plan's, which may differ from
 * config_pp for a loaded plan): one text, so every screen says the same. */
void config_degrees_text(const struct config *c, int pp, char *buf, size_t n);
/* The cap as every screen prints it: the cap tested (config_mem_cap), and where a reserve
 * comes off what was given, both beside it: "79.00 GiB (80.00 GiB - 1.00 GiB reserve)";
 * "1.05 M_θ" under unit costs; "none" without a cap. */
void config_cap_text(const struct config *c, char *buf, size_t n);
/* The host memory one GPU's offloaded activations may take: cluster.host_memory_per_node
 * shared by the node's gpus_per_node GPUs (under unit costs the figure itself, M_θ per
 * device); 0 = no cap. sim/ reads the host cap here and nowhere else. */
double config_host_cap(const struct config *c);
/* The device becomes d; the cap (memory_per_device) and cluster.tp_gbps follow it unless they
 * were given (c->given). */
void config_set_device(struct config *c, const struct device_spec *d);
/* N per pipeline: num_microbatches if set, else global / (mbs * dp). */
int config_microbatches(const struct config *c);
/* Samples per iteration: N x mbs x dp when num_microbatches is set (it overrides the global
 * batch), else global_batch_size. */
int config_global_batch(const struct config *c);
/* Checks every value and the combinations (stages vs layers, X needs even pp, N >= 1 ...).
 * Messages name the field: "model.num_layers: 12 stages but only 8 layers". MT_EINVAL. */
int config_validate(const struct config *c, struct mt_err *e);

/* A config's view of its scheme's record (model/scheme_registry.h, which holds the rest):
 * the name files and screens use ("?" out of range); */
const char *config_scheme_name(enum scheme_id s);
/* no flush between iterations, an OS per stage every U backwards (Async, PipeDream); */
bool config_scheme_async(enum scheme_id s);
/* the backward split into B and W (the zero-bubble family); */
bool config_scheme_split(enum scheme_id s);
/* the config's `chunks` is the stages per device (W, ZB-W); */
bool config_scheme_uses_chunks(enum scheme_id s);
/* the stages a device holds (Chimera's two parts are replicas of one stage); */
int config_stages_per_device(const struct config *c);
/* the scheme a name or alias means (case-insensitive). MT_EINVAL listing the names. */
int config_scheme_parse(const char *s, enum scheme_id *out, struct mt_err *e);
const char *config_arch_name(enum model_arch a);

/* ---- model/config_json.c: the JSON config file -------------------------------------------
 * Keys: the paper's Listing 1 at the top (pipeline_scheme, global_batch_size, micro_batch_size,
 * num_device, num_microbatches, chunks, memory_per_device, blocking_send, unit_costs; for the
 * asynchronous schemes iterations and update_interval), a `model`
 * (preset name, object, or Hugging Face config.json) and a `cluster` object. Unknown keys are
 * errors. Messages read "file:line:col: json.path: what is wrong" (MT_EPARSE for syntax,
 * MT_EINVAL for values, MT_EIO for files); util/json.h reads the text. */
struct cJSON;
struct json_doc;
struct json_value;

#define CONFIG_JSON_MAX_BYTES (16 << 20) /* larger config files are refused */

/* config_default(), then the file's keys, then config_validate(). *out is written only on
 * success. */
int config_load_file(const char *path, struct config *out, struct mt_err *e);
/* The same from memory (need not be NUL-terminated); name is used in messages. */
int config_load_string(const char *text, size_t len, const char *name, struct config *out,
                       struct mt_err *e);
/* The same from the object obj of a document being read (a plan file's "config"): paths
 * and positions are the document's ("plan.json:3:5: config.cluster.dp: ..."). */
int config_from_json(struct json_doc *d, const struct json_value *obj, struct config *out);
/* "F,B,RC" (e.g. "1,2,1") into *out with enabled = true; F, B > 0, RC >= 0. */
int config_unit_costs_parse(const char *s, struct unit_costs *out, struct mt_err *e);

/* ---- model/config_hf_json.c: a Hugging Face config.json as the model -------------------- */
/* Whether obj looks like one (model_type, n_embd, or hidden_size with num_hidden_layers). */
bool config_hf_detect(const struct cJSON *obj);
/* Reads obj's model into c->model (shape, family parts, the training seq_length) and its
 * max_position_embeddings into c->seqlen.max_positions; model_path is the config's path of its
 * model ("model", "config.model"): when obj is not there, obj is the whole config file. Refuses
 * (MT_EINVAL, naming the key) what it cannot model: an unknown model_type, experts, latent
 * attention, sliding windows, quantized or multimodal configs; warns on stderr, one line, of
 * keys it does not know (the file's header lists those it reads and those it accepts). */
int config_hf_read(struct json_doc *d, const struct json_value *obj, const char *model_path,
                   struct config *c);

/* ---- model/config_write_json.c: writing ---------------------------------------------------- */
/* Every field as a JSON object (caller cJSON_Delete()s; NULL if cJSON cannot allocate).
 * Numbers that cJSON would print rounded are raw items (exact text); config_from_json()
 * reads them, and printing keeps them exact. */
struct cJSON *config_to_cjson(const struct config *c);
/* Pretty JSON (2-space indent, trailing newline) that loads back to an equal config; caller
 * free()s. NULL if cJSON cannot allocate. */
char *config_to_json(const struct config *c);

#endif
