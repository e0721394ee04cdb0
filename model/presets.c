/* model/presets.c: model presets from the paper's Table 4 (hidden size, layers, heads,
 * sequence length as printed there; vocabularies and FFN widths of the model families) and
 * device presets from the vendors' datasheets (dense bf16 peak, memory, HBM bandwidth). */
#include <config.h>
#include "model/presets.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "model/config.h"
#include "model/framework.h"
#include "util/err.h"

/* One record per preset: its shape and where the shape comes from. paper_stack (the spec's
 * last field): the paper measured eager attention and 16 bytes a parameter, so its shapes keep
 * them by default (its figures stay as printed); tiny is the executor's own model, eager with
 * 16 bytes (fp32 weights, gradients, m, v). */
struct model_preset {
    struct model_spec spec;
    const char *source;
};

#define PAPER_TABLE_4 "paper Table 4"
/* The shape fields in model_spec's order; the family's parts (mlp, norm, ...) stay the arch's. */
#define SHAPE(nm, ar, h, l, a, s, v, f, kv, paper)                                              \
    {.name = nm, .arch = ar, .hidden_size = h, .num_layers = l, .num_attention_heads = a,      \
     .seq_length = s, .vocab_size = v, .ffn_hidden_size = f, .num_key_value_heads = kv,         \
     .paper_stack = paper}
/* The same fields inside a spec of more (a MoE preset's .moe, .mla) */
#define SHAPE_FIELDS(nm, ar, h, l, a, s, v, f, kv, paper)                                       \
    .name = nm, .arch = ar, .hidden_size = h, .num_layers = l, .num_attention_heads = a,       \
    .seq_length = s, .vocab_size = v, .ffn_hidden_size = f, .num_key_value_heads = kv,          \
    .paper_stack = paper
#define LLAMA31_S " (s = 8192, the pre-training context)"

static const struct model_preset model_table[] = {
    {SHAPE("GPT3-1.6B", ARCH_GPT3, 1024, 128, 16, 1024, 50257, 4096, 0, true), PAPER_TABLE_4},
    {SHAPE("GPT3-13B", ARCH_GPT3, 3000, 128, 40, 1024, 50257, 12000, 0, true), PAPER_TABLE_4},
    {SHAPE("LLaMA2-3B", ARCH_LLAMA2, 2048, 64, 16, 1024, 32000, 5504, 0, true), PAPER_TABLE_4},
    {SHAPE("LLaMA2-13B", ARCH_LLAMA2, 4096, 64, 32, 1024, 32000, 11008, 0, true), PAPER_TABLE_4},
    /* Small enough that the CPU executor trains it in seconds: byte-level vocabulary. */
    {SHAPE("tiny", ARCH_GPT3, 64, 8, 4, 64, 256, 256, 0, true),
     "mario-tui: the CPU executor's test model"},
    {SHAPE("tiny-llama", ARCH_LLAMA2, 64, 8, 4, 64, 256, 176, 2, true),
     "mario-tui: the CPU executor's LLaMA-block test model (GQA 4 heads on 2 K/V heads)"},
    /* tiny-llama's block with every MLP a mixture of 4 SwiGLU experts of width 96, top-2 */
    {.spec = {SHAPE_FIELDS("tiny-moe", ARCH_LLAMA2, 64, 4, 4, 64, 256, 96, 2, false),
              .moe = {.num_experts = 4, .router_topk = 2, .ffn_hidden_size = 96}},
     "mario-tui: the CPU executor's MoE test model (4 experts, top-2, ep up to 4)"},
    /* Real models, from their published configs; their training sequence length as s.
     * Llama's RoPE has no parameters, so it adds nothing. */
    {SHAPE("GPT-3-13B", ARCH_GPT3, 5120, 40, 40, 2048, 50257, 20480, 0, false),
     "Brown et al. 2020, Table 2.1 (d_model printed 5140; 40 heads x d_head 128 = 5120, "
     "Megatron-LM's GPT-3 13B)"},
    {SHAPE("GPT-3-175B", ARCH_GPT3, 12288, 96, 96, 2048, 50257, 49152, 0, false),
     "Brown et al. 2020, Table 2.1"},
    /* NVIDIA NeMo's GPT-3 shapes (nemo/collections/llm/gpt/model/base.py GPTConfig5B and
     * GPTConfig20B: GELU, layer norm, biases, learned positions, tied embeddings, s = 2048),
     * the models of NeMo's performance summaries; the GPT-2 BPE vocabulary */
    {SHAPE("NeMo-GPT3-5B", ARCH_GPT3, 4096, 24, 32, 2048, 50257, 16384, 0, false),
     "NVIDIA NeMo GPTConfig5B (nemo/collections/llm/gpt/model/base.py)"},
    {SHAPE("NeMo-GPT3-20B", ARCH_GPT3, 6144, 44, 48, 2048, 50257, 24576, 0, false),
     "NVIDIA NeMo GPTConfig20B (nemo/collections/llm/gpt/model/base.py)"},
    {SHAPE("LLaMA-2-7B", ARCH_LLAMA2, 4096, 32, 32, 4096, 32000, 11008, 32, false),
     "meta-llama/Llama-2-7b-hf config.json"},
    {SHAPE("LLaMA-2-13B", ARCH_LLAMA2, 5120, 40, 40, 4096, 32000, 13824, 40, false),
     "meta-llama/Llama-2-13b-hf config.json"},
    {SHAPE("LLaMA-2-70B", ARCH_LLAMA2, 8192, 80, 64, 4096, 32000, 28672, 8, false),
     "meta-llama/Llama-2-70b-hf config.json"},
    {SHAPE("Llama-3.1-8B", ARCH_LLAMA2, 4096, 32, 32, 8192, 128256, 14336, 8, false),
     "meta-llama/Llama-3.1-8B config.json" LLAMA31_S},
    {SHAPE("Llama-3.1-70B", ARCH_LLAMA2, 8192, 80, 64, 8192, 128256, 28672, 8, false),
     "meta-llama/Llama-3.1-70B config.json" LLAMA31_S},
    {SHAPE("Llama-3.1-405B", ARCH_LLAMA2, 16384, 126, 128, 8192, 128256, 53248, 8, false),
     "meta-llama/Llama-3.1-405B config.json" LLAMA31_S},
    /* Mixtures of experts (model/moe.h), from their config.json; s = 4096 (DeepSeek-V3 and
     * Qwen3 pre-train at 4K before extending the context; Mixtral's training length is not
     * published: 4096 likewise). Totals checked in tests/unit/test_moe.c. */
    {.spec = {SHAPE_FIELDS("DeepSeek-V3", ARCH_LLAMA2, 7168, 61, 128, 4096, 129280, 18432, 0,
                           false),
              .moe = {.num_experts = 256, .router_topk = 8, .ffn_hidden_size = 2048,
                      .shared_ffn = 2048, .first_k_dense = 3, .mtp_layers = 1,
                      .router_bias = true},
              .mla = {.kv_lora_rank = 512, .q_lora_rank = 1536, .qk_nope_head_dim = 128,
                      .qk_rope_head_dim = 64, .v_head_dim = 128}},
     "deepseek-ai/DeepSeek-V3 config.json (n_routed_experts 256, n_shared_experts 1, "
     "first_k_dense_replace 3, num_nextn_predict_layers 1); 671B main model + the MTP module"},
    {.spec = {SHAPE_FIELDS("DeepSeek-V2-Lite", ARCH_LLAMA2, 2048, 27, 16, 4096, 102400, 10944, 0,
                           false),
              .moe = {.num_experts = 64, .router_topk = 6, .ffn_hidden_size = 1408,
                      .shared_ffn = 2 * 1408, .first_k_dense = 1},
              .mla = {.kv_lora_rank = 512, .q_lora_rank = 0, .qk_nope_head_dim = 128,
                      .qk_rope_head_dim = 64, .v_head_dim = 128}},
     "deepseek-ai/DeepSeek-V2-Lite config.json (q_lora_rank null, n_shared_experts 2)"},
    {.spec = {SHAPE_FIELDS("Qwen3-30B-A3B", ARCH_LLAMA2, 2048, 48, 32, 4096, 151936, 6144, 4,
                           false),
              .head_dim = 128, .qk_norm = true,
              .moe = {.num_experts = 128, .router_topk = 8, .ffn_hidden_size = 768}},
     "Qwen/Qwen3-30B-A3B config.json (decoder_sparse_step 1, mlp_only_layers [])"},
    {.spec = {SHAPE_FIELDS("Qwen3-235B-A22B", ARCH_LLAMA2, 4096, 94, 64, 4096, 151936, 12288, 4,
                           false),
              .head_dim = 128, .qk_norm = true,
              .moe = {.num_experts = 128, .router_topk = 8, .ffn_hidden_size = 1536}},
     "Qwen/Qwen3-235B-A22B config.json (decoder_sparse_step 1, mlp_only_layers [])"},
    {.spec = {SHAPE_FIELDS("Mixtral-8x7B", ARCH_LLAMA2, 4096, 32, 32, 4096, 32000, 14336, 8,
                           false),
              .moe = {.num_experts = 8, .router_topk = 2, .ffn_hidden_size = 14336}},
     "mistralai/Mixtral-8x7B-v0.1 config.json (num_local_experts 8, num_experts_per_tok 2)"},
    {.spec = {SHAPE_FIELDS("Mixtral-8x22B", ARCH_LLAMA2, 6144, 56, 48, 4096, 32768, 16384, 8,
                           false),
              .moe = {.num_experts = 8, .router_topk = 2, .ffn_hidden_size = 16384}},
     "mistralai/Mixtral-8x22B-v0.1 config.json (num_local_experts 8, num_experts_per_tok 2)"},
};

/* The devices. Each figure names its datasheet; "measured" figures name their measurement,
 * "estimate" ones say what they rest on (a calibration, `mario-tui profile`, replaces them).
 *
 * The paper's aggregate path (FRAMEWORK_MEGATRON_DS_2021, model/cost.c) reads peak_flops,
 * efficiency, mem_bytes, hbm_gbps, the two overheads, nvlink_gbps and host_gbps; the A100s'
 * efficiency and the overheads are the fit of Table 5 (model/framework.h), which every device
 * carries for that path (the same software stack, unmeasured elsewhere); the others' efficiency
 * is a guess of 0.45. The op-level path (model/price.h) reads the fields after host_gbps:
 *   gemm_eff, gemm_eff_fp8: maximum achievable matmul FLOPS over theory, measured by Stas
 *     Bekman's mamf-finder.py (ml-engineering, compute/accelerator/README.md, "Maximum
 *     Achievable Matmul FLOPS comparison table", 2025): A100 SXM 271.2/312 (BF16), H100 SXM
 *     794.5/989 ("H200 is the same"; FP8 1402.6/1979), H200 FP8 1453.4/1979, B200 1745/2250
 *     (FP8 3432.5/4500), GB200 1822/2500 (FP8 3615.6/5000), MI300X 668.4/1300 (TunableOp on;
 *     no FP8 row: taken as its BF16 figure). The H800 is the H100's die: its figures.
 *   gemm_mn_half, gemm_k_half, sms: half a 128-wide tile on NVIDIA (cuBLAS/CUTLASS's 128 x 128
 *     and 128 x 256 tiles), half a 256-wide one on MI300X (hipBLASLt's 256 x 256 macro tiles);
 *     k at one mainloop of 128; SMs from the architecture whitepapers (A100 108, H100 SXM 132,
 *     B200 and GB200 148 over the two dies), the MI300X's 304 compute units.
 *   attn_eff_fw, attn_eff_bw: FlashAttention-2 on A100 (Dao 2023: forward 50-73 % of peak,
 *     backward lower): 0.65 and 0.50; FlashAttention-3 on H100 (Shah et al. 2024: forward up to
 *     75 % in BF16 at long sequences, backward 1.5-1.75x FA2's): 0.65 and 0.50, the same for
 *     H200 and H800; B200 and GB200 estimate 0.60 and 0.45 (cuDNN/FA4 below Hopper's share);
 *     MI300X estimate 0.35 and 0.25 (composable-kernel FA, about half Hopper's share).
 *   hbm_eff: estimate from stream-copy benchmarks (BabelStream-type copies reach ~85-90 % of
 *     the HBM datasheet rate on A100/H100): 0.85 on NVIDIA, 0.80 on MI300X.
 *   nvlink_busbw_gbps: nccl-tests all_reduce_perf busbw at large sizes on 8 GPUs: measured
 *     ~230-240 on DGX A100 (NCCL's own model caps Ampere at 235, src/graph/tuning.cc), ~360-370
 *     on DGX H100 (and H200, the same NVLink 4 and NVSwitch); H800 160 (DeepSeek-V3 technical
 *     report, section 3.2.2: NVLink 160 GB/s against IB 50 GB/s); B200, GB200 and MI300X
 *     estimate 80 % of NVLink 5's 900 GB/s per direction (H100's 365/450) and 75 % of the
 *     MI300X's 7 x 64 GB/s Infinity Fabric mesh.
 *   nvlink_lat_us, net_lat_us: NCCL's per-step latencies of its ring LL protocol (tuning.cc's
 *     hwLat: ~0.6 us an NVLink step, 2.7 us a network step).
 *   net_gbps: one NIC a GPU: DGX A100 8 x 200 Gb/s HDR (25 GB/s), DGX H100/H200 8 x 400 Gb/s
 *     NDR ConnectX-7 (50), H800 the same (DeepSeek-V3 report: 400 Gb/s IB a GPU), DGX B200 8 x
 *     400 Gb/s ConnectX-7, GB200 NVL72 one 400 Gb/s ConnectX-7 a GPU (DGX GB200 datasheet),
 *     MI300X platforms 8 x 400 Gb/s (e.g. Azure ND MI300X v5).
 *   gpus_per_node: the NVLink domain: 8 on HGX/DGX and the MI300X platform, 72 on GB200 NVL72.
 *   mxfp8: Blackwell (B200, GB200, sm_100): MXFP8 block-scaled MMA and FP8 GEMMs in any layout
 *     (Transformer Engine mxfp8.rst: "Blackwell GPUs (SM 10.0+)"); Hopper's FP8 GEMMs are TN
 *     only, the A100 has no FP8, the MI300X no MX formats (CDNA 4 adds them).
 * nvlink_gbps (the raw NVLink per direction): A100 NVLink 3, 12 links x 25 GB/s = 300 (600
 * total, A100 datasheet); H100 SXM and H200 NVLink 4, 18 x 25 = 450 (900 total); H800 NVLink
 * 400 GB/s total, 200 per direction (H800 product brief); B200, GB200 NVLink 5, 1.8 TB/s
 * total, 900 per direction; MI300X 7 Infinity Fabric links of 128 GB/s both ways, 448 per
 * direction (AMD Instinct MI300X datasheet). host_gbps, the GPU's link to host memory per
 * direction, effective (model/cost.h "Offload"): PCIe Gen4 x16 for the A100s (~25 of 32 GB/s),
 * Gen5 x16 for H100, H200, H800, B200, MI300X (~50 of 64); GB200's Grace over NVLink-C2C (900
 * GB/s total, 450 a direction; estimate 80 %, 360). */
#define HOST_GBPS_PCIE4 25.0
#define HOST_GBPS_PCIE5 50.0
#define GIB (1024.0 * 1024 * 1024)
#define DS2021 .op_overhead_us = FRAMEWORK_DS2021_OP_US, .layer_overhead_us = FRAMEWORK_DS2021_LAYER_US
#define NCCL_LAT .nvlink_lat_us = 0.6, .net_lat_us = 2.7
/* NVIDIA tiles and a mainloop (gemm_mn_half, gemm_k_half) */
#define NV_TILES .gemm_mn_half = 64, .gemm_k_half = 128
/* FlashAttention-2 on Hopper (attn_fa2_eff_fw, attn_fa2_eff_bw) */
#define HOPPER_FA2 .attn_fa2_eff_fw = 0.35, .attn_fa2_eff_bw = 0.30
static const struct device_spec device_table[] = {
    /* NVIDIA A100 Tensor Core GPU datasheet (SXM): 312 TFLOPS BF16 dense, no FP8, 40 GB
     * HBM2 1,555 GB/s, 80 GB HBM2e 2,039 GB/s */
    {.name = "A100-40G", .peak_flops = 312e12, .efficiency = FRAMEWORK_DS2021_EFFICIENCY,
     .mem_bytes = 40 * GIB, .hbm_gbps = 1555, DS2021, .nvlink_gbps = 300,
     .host_gbps = HOST_GBPS_PCIE4, .fp8_peak_flops = 0, .gemm_eff = 0.869, .gemm_eff_fp8 = 0,
     NV_TILES, .sms = 108, .attn_eff_fw = 0.65, .attn_eff_bw = 0.50, .hbm_eff = 0.85,
     .nvlink_busbw_gbps = 235, NCCL_LAT, .net_gbps = 25, .gpus_per_node = 8},
    {.name = "A100-80G", .peak_flops = 312e12, .efficiency = FRAMEWORK_DS2021_EFFICIENCY,
     .mem_bytes = 80 * GIB, .hbm_gbps = 2039, DS2021, .nvlink_gbps = 300,
     .host_gbps = HOST_GBPS_PCIE4, .fp8_peak_flops = 0, .gemm_eff = 0.869, .gemm_eff_fp8 = 0,
     NV_TILES, .sms = 108, .attn_eff_fw = 0.65, .attn_eff_bw = 0.50, .hbm_eff = 0.85,
     .nvlink_busbw_gbps = 235, NCCL_LAT, .net_gbps = 25, .gpus_per_node = 8},
    /* NVIDIA H100 Tensor Core GPU datasheet (SXM): 989 TFLOPS BF16 dense (1,979 sparse), 1,979
     * FP8 dense, 80 GB HBM3 3.35 TB/s */
    {.name = "H100-80G", .peak_flops = 989e12, .efficiency = 0.45, .mem_bytes = 80 * GIB,
     .hbm_gbps = 3350, DS2021, .nvlink_gbps = 450, .host_gbps = HOST_GBPS_PCIE5,
     .fp8_peak_flops = 1979e12, .gemm_eff = 0.803, .gemm_eff_fp8 = 0.709, NV_TILES, .sms = 132,
     .attn_eff_fw = 0.65, .attn_eff_bw = 0.50, .hbm_eff = 0.85, .nvlink_busbw_gbps = 365,
     HOPPER_FA2,
     NCCL_LAT, .net_gbps = 50, .gpus_per_node = 8},
    /* The H100 of Meta's Grand Teton hosts as torchtitan's 2024-12 benchmark describes it
     * (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, "Hardware"): SXM, 96 GB
     * HBM2e at 2.4 TB/s, the default 500 W power limit (not the 700 W TDP), 8 a host over
     * NVLink, 400 Gb/s RDMA a GPU; "the actual peak TFLOPs number is between SXM and NVL, and
     * we don't know its exact value": the midpoint of the H100 SXM's 989 and the H100 NVL's
     * 835.5 dense BF16 (H100 datasheet: NVL 1,671 sparse), 912.25, FP8 twice that. The rest is the
     * H100 SXM's. */
    {.name = "H100-96G-500W", .peak_flops = 912.25e12, .efficiency = 0.45, .mem_bytes = 96e9,
     .hbm_gbps = 2400, DS2021, .nvlink_gbps = 450, .host_gbps = HOST_GBPS_PCIE5,
     .fp8_peak_flops = 1824.5e12, .gemm_eff = 0.803, .gemm_eff_fp8 = 0.709, NV_TILES, .sms = 132,
     .attn_eff_fw = 0.65, .attn_eff_bw = 0.50, .hbm_eff = 0.85, .nvlink_busbw_gbps = 365,
     HOPPER_FA2, NCCL_LAT, .net_gbps = 50, .gpus_per_node = 8},
    /* NVIDIA H200 datasheet (SXM): the H100's compute, 141 GB HBM3e 4.8 TB/s */
    {.name = "H200", .peak_flops = 989e12, .efficiency = 0.45, .mem_bytes = 141e9,
     .hbm_gbps = 4800, DS2021, .nvlink_gbps = 450, .host_gbps = HOST_GBPS_PCIE5,
     .fp8_peak_flops = 1979e12, .gemm_eff = 0.803, .gemm_eff_fp8 = 0.734, NV_TILES, .sms = 132,
     .attn_eff_fw = 0.65, .attn_eff_bw = 0.50, .hbm_eff = 0.85, .nvlink_busbw_gbps = 365,
     HOPPER_FA2,
     NCCL_LAT, .net_gbps = 50, .gpus_per_node = 8},
    /* NVIDIA H800 SXM5 (product brief): the H100 SXM's BF16 and FP8 and 80 GB HBM3 3.35 TB/s,
     * NVLink cut to 400 GB/s total */
    {.name = "H800", .peak_flops = 989e12, .efficiency = 0.45, .mem_bytes = 80 * GIB,
     .hbm_gbps = 3350, DS2021, .nvlink_gbps = 200, .host_gbps = HOST_GBPS_PCIE5,
     .fp8_peak_flops = 1979e12, .gemm_eff = 0.803, .gemm_eff_fp8 = 0.709, NV_TILES, .sms = 132,
     .attn_eff_fw = 0.65, .attn_eff_bw = 0.50, .hbm_eff = 0.85, .nvlink_busbw_gbps = 160,
     HOPPER_FA2,
     NCCL_LAT, .net_gbps = 50, .gpus_per_node = 8},
    /* NVIDIA HGX B200 datasheet (per GPU): 2.25 PFLOPS BF16 dense (4.5 sparse), 4.5 FP8 dense,
     * 180 GB HBM3e 8 TB/s, NVLink 5 1.8 TB/s */
    {.name = "B200", .peak_flops = 2250e12, .efficiency = 0.45, .mem_bytes = 180e9,
     .hbm_gbps = 8000, DS2021, .nvlink_gbps = 900, .host_gbps = HOST_GBPS_PCIE5,
     .fp8_peak_flops = 4500e12, .gemm_eff = 0.776, .gemm_eff_fp8 = 0.763, NV_TILES, .sms = 148,
     .attn_eff_fw = 0.60, .attn_eff_bw = 0.45, .hbm_eff = 0.85, .nvlink_busbw_gbps = 720,
     NCCL_LAT, .net_gbps = 50, .gpus_per_node = 8, .mxfp8 = true},
    /* NVIDIA GB200 NVL72 datasheet (per GPU of 72): 2.5 PFLOPS BF16 dense (360 PF sparse a
     * rack), 5 FP8 dense (720 PF sparse a rack), 186 GB HBM3e (13.4 TB a rack) 8 TB/s (576
     * TB/s a rack), NVLink 5 1.8 TB/s in one 72-GPU domain */
    {.name = "GB200", .peak_flops = 2500e12, .efficiency = 0.45, .mem_bytes = 186e9,
     .hbm_gbps = 8000, DS2021, .nvlink_gbps = 900, .host_gbps = 360,
     .fp8_peak_flops = 5000e12, .gemm_eff = 0.729, .gemm_eff_fp8 = 0.723, NV_TILES, .sms = 148,
     .attn_eff_fw = 0.60, .attn_eff_bw = 0.45, .hbm_eff = 0.85, .nvlink_busbw_gbps = 720,
     NCCL_LAT, .net_gbps = 50, .gpus_per_node = 72, .mxfp8 = true},
    /* AMD Instinct MI300X datasheet: 1,307.4 TFLOPS BF16 dense (2,614.9 sparse), 2,614.9 FP8
     * dense, 192 GB HBM3 5.3 TB/s, 7 Infinity Fabric links of 128 GB/s (896 GB/s total) */
    {.name = "MI300X", .peak_flops = 1307.4e12, .efficiency = 0.45, .mem_bytes = 192e9,
     .hbm_gbps = 5300, DS2021, .nvlink_gbps = 448, .host_gbps = HOST_GBPS_PCIE5,
     .fp8_peak_flops = 2614.9e12, .gemm_eff = 0.514, .gemm_eff_fp8 = 0.514, .gemm_mn_half = 128,
     .gemm_k_half = 128, .sms = 304, .attn_eff_fw = 0.35, .attn_eff_bw = 0.25, .hbm_eff = 0.80,
     .nvlink_busbw_gbps = 336, NCCL_LAT, .net_gbps = 50, .gpus_per_node = 8},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))


int presets_model(const char *name, struct model_spec *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        if (strcasecmp(model_table[i].spec.name, name) == 0) {
            *out = model_table[i].spec;
            return MT_OK;
        }
    return err_set(e, MT_EINVAL, "unknown model '%s' (presets: see mario-tui models)", name);
}

const char *presets_model_source(const char *name)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        if (strcmp(model_table[i].spec.name, name) == 0)
            return model_table[i].source;
    return NULL;
}

const char *presets_model_display(const struct model_spec *m, char *buf, size_t n)
{
    const char *src = presets_model_source(m->name);
    struct model_spec p;
    bool paper = src != NULL && strcmp(src, PAPER_TABLE_4) == 0 &&
                 presets_model(m->name, &p, NULL) == MT_OK && p.hidden_size == m->hidden_size &&
                 p.num_layers == m->num_layers && p.num_attention_heads == m->num_attention_heads;
    snprintf(buf, n, "%s%s", m->name, paper ? " (paper Table 4)" : "");
    return buf;
}

int presets_device(const char *name, struct device_spec *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(device_table); i++)
        if (strcasecmp(device_table[i].name, name) == 0) {
            *out = device_table[i];
            return MT_OK;
        }
    char list[256];
    size_t n = 0;
    const char *const *names = presets_device_names();
    for (int i = 0; names[i] != NULL && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", names[i]);
    /* "H100" for H100-80G or H100-96G-500W: the presets the name begins */
    char hit[128] = "";
    int hits = 0;
    size_t len = strlen(name), used = 0;
    for (size_t i = 0; i < COUNT(device_table) && len > 0; i++)
        if (strncasecmp(device_table[i].name, name, len) == 0 && used < sizeof hit)
            used += (size_t)snprintf(hit + used, sizeof hit - used, "%s%s", hits++ ? " or " : "",
                                     device_table[i].name);
    if (hits >= 1 && hits <= 3)
        return err_set(e, MT_EINVAL, "unknown device '%s': did you mean %s? (presets: %s)", name,
                       hit, list);
    return err_set(e, MT_EINVAL, "unknown device '%s' (presets: %s)", name, list);
}

/* The names, in model_table's order, taken from it once. */
static const char *model_names[COUNT(model_table) + 1];
static pthread_once_t model_names_once = PTHREAD_ONCE_INIT;

static void presets_names_fill(void)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        model_names[i] = model_table[i].spec.name;
}

const char *const *presets_model_names(void)
{
    pthread_once(&model_names_once, presets_names_fill);
    return model_names;
}

/* The device names, in device_table's order, taken from it once. */
static const char *device_names[COUNT(device_table) + 1];
static pthread_once_t device_names_once = PTHREAD_ONCE_INIT;

static void presets_device_names_fill(void)
{
    for (size_t i = 0; i < COUNT(device_table); i++)
        device_names[i] = device_table[i].name;
}

const char *const *presets_device_names(void)
{
    pthread_once(&device_names_once, presets_device_names_fill);
    return device_names;
}
