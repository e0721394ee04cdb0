#!/bin/bash
# Qwen3-30B-A3B on 4 nodes of 8 H100s: TP 2 with sequence parallelism, PP 4, EP 4 with the
# experts whole on their ranks (ETP 1). Written for mario-tui's tests in the shape of
# Megatron-LM's Qwen3 MoE recipe (examples/post_training/modelopt/conf/qwen).

torchrun --nproc-per-node 8 --nnodes 4 pretrain_gpt.py \
    --num-layers 48 --hidden-size 2048 --ffn-hidden-size 6144 \
    --num-attention-heads 32 --group-query-attention --num-query-groups 4 --kv-channels 128 \
    --qk-layernorm --swiglu --normalization RMSNorm --disable-bias-linear \
    --untie-embeddings-and-output-weights --seq-length 4096 --max-position-embeddings 40960 \
    --vocab-size 151936 \
    --num-experts 128 --moe-ffn-hidden-size 768 --moe-router-topk 8 \
    --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 \
    --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
    --tensor-model-parallel-size 2 --sequence-parallel --pipeline-model-parallel-size 4 \
    --expert-model-parallel-size 4 --expert-tensor-parallel-size 1 \
    --use-distributed-optimizer --micro-batch-size 1 --global-batch-size 256 --bf16
