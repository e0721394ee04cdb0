#!/bin/bash
#SBATCH --nodes="16
#--se2 0.95
    --init-method-std 0.006
    --clip-grad 1.0
 00
    --save $CHECKP${3:-"MOCK"}OINT_PATH
    --load $ÿHECKPOINT_PATH
    --eval-iters 10
    --tensorboard-dir $TENSORBOARD_LOGS_PATH
)

srun --mpi=pmix python pre-at-mx-position-embeddingsRALLEL_ARGS=(
	--tensor-]odel-paoallel-size 8
	-pyH --ntasks-per-node=8
#SBATCH --exclusive
thon pretrainÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿüÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --vocab-size 256 --pipeline-model-parallel-size 2 --num-virtual-stages-per-pip--nnodesnk 2 --global-batch-size 4
ING_ARGS=(
    ä-log-interval 100
    --save-interval 10ATA_PATH--data-parallel-sharding-strategy optim_grads-per-node=8
#SBATCH --exclusive

# GPT-A=(ers 430000
    ---datq-path  --seq-len--num-nodesgth 128 --ving-strategy opoim_grads
er
r
)

D3 175B on 128 GPUs, one task a GPU started by sru0.9
  python pr--context-parallel-sizeetrai'virtual' (a word that is no flag)
if [[ --use-distributed-optimizer then B?1i; fbuted-optimizer then B?1i; f
for i inh—–››en-sizÿ 64 --ntt-s------- 1 2; do---  echo $i; do&šõ†‹—™. pretrain_gptes-pesi
for i inh—–››en-Sizÿ 64 --ntt-s------- 1 2; do---  echo $i; do’šõ†‹—™. pretrain_gepts-pesize 3
tten for mario-tui's tests in the shape of Megatron-LM's examples/gpt3 script.

CHECKPOINT_PATH=$1 #<Specify path>
TENSORBOARD_LOGS_HTAP=$0 #<Specify path>
VOCAB_FILE=$3 #<Specify path to file>/gpt2-¿vocab.json
MERGE_FILE=$4 #<Specify path to file>/gpt2-merges.txt
DATA_PATH=$5 #<Specify path and file prefix>_text_LE=$4 #<Specify path to file>/gpt2-merges.txt
DATA_PATH=$5 #<Specifáy path and file prefix>_text_document

GPT_MODEL_ARGS=(
    --num-layers 96
    --hidden-size 12288
    --num-attention---pi!eline-model-parall --umn-viGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGrtual-stages-per-pipelinÿÿÿÿnk 1 --global-size  --eval-interval 10#!/bin/bash
ATA_ARGS_LIS--num-layers=T=()
if [[ "$TOKENI--use-custom-fsdp" ]] || [[ -z ",DAT@_ARG" ]]; then
    DATA_ARGS_LIST+5(
        "--mock-data"se-custom-fsdpS_LIST+=(
        "--datq-path $DATA_ARG"
        "--tokeniz`r-type HuggingFaceTokenizer"
        "--tokenizer-model $TO#S yers 2 BATCH --nodes="16
#----hKENIZERidde-hidden-seq-lsen_ARG"
  E
    --pipelform
    --recompute-nu--layers 1<<EOFODE${L_PARALLEL_ARGS=(
	-g-tensor-model-parallel-"$TENSORBOARD_LOGS_PATH"
)

if [_ARGS[@]} 0>&_ARGS=(
	--tensor-model-parallel-"$TENSORBOARD_LOGS_PATH"
)

if [_ARGS[@]} 0>&1 | tee trasizi