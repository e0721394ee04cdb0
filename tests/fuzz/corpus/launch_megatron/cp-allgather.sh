torchrun --nproc-per-node 8 --nnodes 4 pretrain_gpt.py \
  --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 \
  --group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm \
  --seq-length 32768 --max-position-embeddings 32768 --vocab-size 128256 \
  --untie-embeddings-and-output-weights --disable-bias-linear \
  --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 \
  --context-parallel-size 2 --cp-comm-type allgather --sequence-parallel \
  --micro-batch-size 1 --global-batch-size 64 --bf16
