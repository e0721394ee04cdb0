A= %2e())n‹’ye$3 )e--nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --vocab-size 32000 --bf16 --recompute-granularity selective --recompute-modules core_attn mlp())n‹’’y)tn_gpt.py \
 --tensor-mpt.py \
 --tensor-model-paralle'ÐÒ—–››š‘-s)ize' (a word that is no flag)l-size 2 --pis no flag)l-size 2 --pi<ize 4 \
 --pipgpt.pyrs 24 -$’xe$-hr’xe$Ù#-model-paralle'ÐÒ—–›*›š‘-size' (a word that is no flag)l-size 2 --pi<<EOFe