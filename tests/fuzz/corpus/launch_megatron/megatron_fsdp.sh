torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 4096 --num-attention-heads 32 \
    --seq-length 128 --vocab-size 32000 --bf16 --global-batch-size 8 \
    --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads
