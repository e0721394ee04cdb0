#!/bin/sh
# tests/cli/test_launch.sh: the launchers in and out (issue 40). Each launch file of
# tests/data/launch goes through import-args, export --format of its own framework and
# import-args again and must give the same config, and the flags text of the export must be
# stable (a second export of the re-import is the same text); a launch file given directly
# as CONFIG simulates to the step of its imported JSON; tune --emit writes a launch that reads
# back; what a framework cannot run is refused (exit 1) with the nearest; bad input exits 2
# naming file:line:column.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$src/tests/lib.sh"
data=$src/tests/data/launch

# the config without its "source" (the file it came from)
strip() { grep -v '"source"' "$1"; }

for f in "$data"/megatron_* "$data"/torchtitan_*; do
    b=$(basename "$f")
    # torchtitan's MoE under FSDP shards the experts over its efsdp mesh, which is not
    # modelled yet: refused by name (checked below), so no round trip
    [ "$b" = torchtitan_deepseek_v3_16b.toml ] && continue
    case $b in
    megatron_*) k=megatron; ext=sh ;;
    *) k=torchtitan; ext=toml ;;
    esac
    dev=""
    [ "$b" = torchtitan_llama3_8b.toml ] && dev="--devices 64"
    "$bin" import-args -q $dev "$f" -o "$tmp/$b.1.json" >/dev/null 2>"$tmp/$b.err"
    check "$b: import-args" "[ $? -eq 0 ]"
    "$bin" export "$tmp/$b.1.json" --format $k -o "$tmp/$b.out.$ext" >/dev/null 2>&1
    check "$b: export --format $k" "[ $? -eq 0 ]"
    "$bin" import-args -q $dev "$tmp/$b.out.$ext" -o "$tmp/$b.2.json" >/dev/null 2>&1
    check "$b: import-args of the export" "[ $? -eq 0 ]"
    strip "$tmp/$b.1.json" >"$tmp/a" && strip "$tmp/$b.2.json" >"$tmp/b"
    check "$b: the round trip gives the same config" "cmp -s $tmp/a $tmp/b"
    "$bin" export "$tmp/$b.2.json" --format $k -o "$tmp/$b.again.$ext" >/dev/null 2>&1
    grep -v '^# Written by' "$tmp/$b.out.$ext" >"$tmp/a"
    grep -v '^# Written by' "$tmp/$b.again.$ext" >"$tmp/b"
    check "$b: the export's text is stable" "cmp -s $tmp/a $tmp/b"
    # the file itself as CONFIG: the same plan as its JSON
    "$bin" simulate $dev "$f" --json >"$tmp/s1" 2>/dev/null
    "$bin" simulate $dev "$tmp/$b.1.json" --json >"$tmp/s2" 2>/dev/null
    check "$b: simulate FILE = simulate its JSON" \
        "python3 -c 'import json,sys; a=json.load(open(\"$tmp/s1\")); b=json.load(open(\"$tmp/s2\")); sys.exit(0 if a[\"step_time\"]==b[\"step_time\"] else 1)'"
done

# what each file gives (hand-checked against the files' own numbers)
json "$tmp/megatron_llama3_8b.sh.1.json" "d['num_device']==64 and d['cluster']['tp']==4 and d['cluster']['dp']==4 and d['pipeline_scheme']=='W' and d['chunks']==2 and d['model']['preset']=='Llama-3.1-8B' and d['model']['vocab_size']==128512"
check "llama3 8b script: 8 nodes x 8, TP 4 x PP 4, 2 virtual stages, vocabulary padded" "[ $? -eq 0 ]"
json "$tmp/megatron_gpt3_175b.sh.1.json" "d['num_device']==128 and d['cluster']['tp']==8 and d['cluster']['dp']==1 and d['model']['vocab_size']==51200 and d['global_batch_size']==1536"
check "gpt3 175b script: #SBATCH 16 x 8, TP 8 x PP 16, 50257 padded to 51200" "[ $? -eq 0 ]"
check "gpt3 175b: one warning line, the ramp-up; full uniform 1 is the config's recompute full" \
    "[ \$(grep -c warning $tmp/megatron_gpt3_175b.sh.err) -eq 1 ] && ! grep -q 'recompute-granularity' $tmp/megatron_gpt3_175b.sh.err && grep -q rampup $tmp/megatron_gpt3_175b.sh.err && json $tmp/megatron_gpt3_175b.sh.1.json 'd[\"recompute\"] == \"full\"'"
json "$tmp/torchtitan_llama3_70b_pp.toml.1.json" "d['num_device']==64 and d['chunks']==4 and d['pipeline_scheme']=='W' and d['cluster']['dp']==2 and d.get('sequence_parallel')==True and 'distributed_optimizer' not in d"
check "70b toml: layers_per_stage 5 -> 4 chunks, DDP 2" "[ $? -eq 0 ]"
json "$tmp/torchtitan_llama3_8b.toml.1.json" "d['cluster']['dp']==64 and d['cluster']['zero_stage']==3"
check "8b toml: -1 filled by --devices 64" "[ $? -eq 0 ]"

# stdin, and errors
"$bin" import-args -q - <"$data/megatron_cmdline.txt" >"$tmp/stdin.json" 2>/dev/null
check "import-args - reads stdin" "[ $? -eq 0 ] && json $tmp/stdin.json \"d['num_device']==8\""
"$bin" import-args "$data/torchtitan_llama3_8b.toml" >/dev/null 2>"$tmp/err"
check "-1 without --devices exits 2 naming line:column" "[ $? -eq 2 ] && grep -q 'toml:42:1: parallelism.data_parallel_shard_degree' $tmp/err"
printf 'torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n  --num-attention-heads 32 --seq-length 4096 --vocab-size 32000 \\\n  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16\n' >"$tmp/few.sh"
"$bin" import-args "$tmp/few.sh" >/dev/null 2>"$tmp/err"
check "8 GPUs for TP 8 x PP 16 is said (exit 2)" "[ $? -eq 2 ] && grep -q 'starts 8 GPUs' $tmp/err"
# mixtures of experts and MLA (issue 38): read into model.moe / model.mla and the expert
# degrees; the DeepSeek-V3 script is the preset (its parameter counts), Qwen3-30B-A3B's too
json "$tmp/megatron_deepseek_v3.sh.1.json" "d['num_device']==2048 and d['model']['preset']=='DeepSeek-V3' and d['cluster']['ep']==64 and d['cluster']['etp']==1"
check "deepseek-v3 script: the preset (its 3 dense layers, MTP, MLA), EP 64, ETP 1" "[ $? -eq 0 ]"
"$bin" models --json "$tmp/megatron_deepseek_v3.sh.1.json" >"$tmp/ds.models" 2>/dev/null
json "$tmp/ds.models" "d['models'][0]['parameters']==671026419200 and d['models'][0]['active_parameters']==37552297472"
check "deepseek-v3 script: 671,026,419,200 parameters, 37,552,297,472 active (the preset's)" "[ $? -eq 0 ]"
json "$tmp/megatron_qwen3_30b_a3b.sh.1.json" "d['model']['preset']=='Qwen3-30B-A3B' and d['cluster']['ep']==4 and d['cluster']['etp']==1 and d['cluster']['tp']==2"
check "qwen3-30b-a3b script: the preset (vocabulary padded for tp 2), EP 4, ETP 1" "[ $? -eq 0 ]"
"$bin" import-args -q "$data/torchtitan_deepseek_v3_16b.toml" >/dev/null 2>"$tmp/err"
check "deepseek_v3 16B toml (FSDP 8, EP 8): refused naming the experts' FSDP mesh, exit 2" \
    "[ $? -eq 2 ] && grep -q 'efsdp mesh) is not modelled yet' $tmp/err"
# the same job with plain data parallelism reads to DeepSeek-V2-Lite's shape and EP 8
sed -e 's/^data_parallel_replicate_degree = 1/data_parallel_replicate_degree = 8/' \
    -e 's/^data_parallel_shard_degree = 8/data_parallel_shard_degree = 1/' \
    "$data/torchtitan_deepseek_v3_16b.toml" >"$tmp/ds16_ddp.toml"
"$bin" import-args -q "$tmp/ds16_ddp.toml" -o "$tmp/ds16.json" >/dev/null 2>&1
json "$tmp/ds16.json" "d['model']['preset']=='DeepSeek-V2-Lite' and d['cluster']['ep']==8 and d['cluster']['etp']==1"
check "deepseek_v3 16B toml with DDP 8: DeepSeek-V2-Lite's shape, EP 8" "[ $? -eq 0 ]"
"$bin" export "$tmp/ds16.json" --format torchtitan -o "$tmp/ds16.out.toml" >/dev/null 2>&1 &&
    "$bin" import-args -q "$tmp/ds16.out.toml" -o "$tmp/ds16.2.json" >/dev/null 2>&1
strip "$tmp/ds16.json" >"$tmp/a" && strip "$tmp/ds16.2.json" >"$tmp/b"
check "... and its torchtitan export reads back to the same config" "cmp -s $tmp/a $tmp/b"
grep -q -- '--moe-layer-freq "(\[0\]\*3+\[1\]\*58)"' "$tmp/megatron_deepseek_v3.sh.out.sh"
check "export writes --moe-layer-freq as Megatron's list" "[ $? -eq 0 ]"
m='python pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 512 --vocab-size 32000 --num-experts 8'
printf '%s --moe-router-topk 2\n' "$m" >"$tmp/moe.sh"
"$bin" import-args -q "$tmp/moe.sh" --devices 8 -o "$tmp/moe.json" >/dev/null 2>"$tmp/err"
check "experts read; Megatron's allgather default and no grouped GEMM said" \
    "[ $? -eq 0 ] && json $tmp/moe.json \"d['model']['moe']['num_experts']==8 and d['model']['moe']['ffn_hidden_size']==2048\" && grep -q 'allgather' $tmp/err && grep -q 'moe-grouped-gemm' $tmp/err"
printf '%s --moe-layer-freq 2\n' "$m" >"$tmp/moe2.sh"
"$bin" import-args "$tmp/moe2.sh" --devices 8 >/dev/null 2>"$tmp/err"
check "--moe-layer-freq 2 (Megatron's i %% 2 == 0) refused by name" "[ $? -eq 2 ] && grep -q 'moe-layer-freq' $tmp/err && grep -q 'every 2-th from layer 0' $tmp/err"
printf '%s --moe-layer-freq "[0,1,0,1,0,1,0,1]"\n' "$m" >"$tmp/moe3.sh"
"$bin" import-args -q "$tmp/moe3.sh" --devices 8 -o "$tmp/moe3.json" >/dev/null 2>&1
check "--moe-layer-freq [0,1,...]: every 2nd, HF's (i + 1) %% 2 == 0" \
    "[ $? -eq 0 ] && json $tmp/moe3.json \"d['model']['moe']['layer_freq']==2 and d['model']['moe'].get('first_k_dense',0)==0\""
printf '%s --moe-layer-freq "[1,0,0,1,1,1,1,1]"\n' "$m" >"$tmp/moe4.sh"
"$bin" import-args "$tmp/moe4.sh" --devices 8 >/dev/null 2>"$tmp/err"
check "a layer pattern the cost model lacks refused by name" "[ $? -eq 2 ] && grep -q 'layer pattern' $tmp/err"
printf 'python pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 512 --vocab-size 32000 --multi-latent-attention --qk-layernorm\n' >"$tmp/mla.sh"
"$bin" import-args -q "$tmp/mla.sh" --devices 8 -o "$tmp/mla.json" >/dev/null 2>&1
check "--multi-latent-attention with Megatron's defaults (kv_lora_rank 32, 128, 64, 128)" \
    "[ $? -eq 0 ] && json $tmp/mla.json \"d['model']['mla']['kv_lora_rank']==32 and d['model']['mla']['qk_nope_head_dim']==128 and d['model']['mla']['qk_rope_head_dim']==64 and d['model']['mla']['v_head_dim']==128\""
printf 'python pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 512 --vocab-size 32000 --moe-router-topk 2 --q-lora-rank 64\n' >"$tmp/nomoe.sh"
"$bin" import-args -q "$tmp/nomoe.sh" --devices 8 -o "$tmp/nomoe.json" >/dev/null 2>"$tmp/err"
check "MoE and MLA flags without --num-experts / --multi-latent-attention: said, dense" \
    "[ $? -eq 0 ] && grep -q 'moe-router-topk without --num-experts' $tmp/err && grep -q 'without --multi-latent-attention' $tmp/err && json $tmp/nomoe.json \"'moe' not in d['model']\""

# out: a plan Megatron-LM cannot run, Mario's passes, tune --emit
cfg="$tmp/megatron_llama3_8b.sh.1.json"
"$bin" export "$cfg" --scheme ZB-H1 --format megatron >/dev/null 2>"$tmp/err"
check "ZB-H1 refused for Megatron-LM with the nearest (exit 1)" "[ $? -eq 1 ] && grep -q 'nearest it runs is V' $tmp/err && grep -q 'simulated step' $tmp/err"
"$bin" export "$cfg" --passes 1 --format megatron -o "$tmp/ck.sh" >/dev/null 2>&1
check "apply-checkpoint: full recompute, a stage's 4 layers a unit" "[ $? -eq 0 ] && grep -q -- '--recompute-granularity full' $tmp/ck.sh && grep -q -- '--recompute-num-layers 4' $tmp/ck.sh"
"$bin" export "$cfg" --passes 4 --format megatron >/dev/null 2>"$tmp/err"
check "Mario's final plan refused with the nearest and both steps" "[ $? -eq 1 ] && grep -q 'prepose' $tmp/err && grep -q 'apply-checkpoint' $tmp/err"
"$bin" export "$tmp/torchtitan_llama3_70b_pp.toml.1.json" --scheme ZB-H1 --format torchtitan -o "$tmp/zb.toml" >/dev/null 2>&1
check "torchtitan ZB-H1: a schedule CSV beside the TOML" "[ $? -eq 0 ] && [ -s $tmp/zb.schedule.csv ] && grep -q 'pipeline_parallel_schedule_csv = \"zb.schedule.csv\"' $tmp/zb.toml"
"$bin" tune "$cfg" -q --top 1 --emit megatron --emit-out "$tmp/best.sh" >/dev/null 2>&1
check "tune --emit writes a launch" "[ $? -eq 0 ] && [ -s $tmp/best.sh ]"
"$bin" import-args -q "$tmp/best.sh" -o "$tmp/best.json" >/dev/null 2>&1
check "tune --emit's launch reads back" "[ $? -eq 0 ]"
"$bin" export --format slurm >/dev/null 2>&1
check "unknown --format exits 2" "[ $? -eq 2 ]"

# recompute in: the config's policy where one is the launch's settings (model/launch.c)
base='python pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 512 --vocab-size 32000 --swiglu --normalization RMSNorm --position-embedding-type rope --pipeline-model-parallel-size 2'
for args in "--recompute-granularity selective:selective" \
            "--recompute-activations:selective" \
            "--recompute-granularity full --recompute-method uniform --recompute-num-layers 2:full" \
            "--recompute-granularity full --recompute-method block --recompute-num-layers 4:full"; do
    printf '%s %s\n' "$base" "${args%:*}" >"$tmp/rc.sh"
    "$bin" import-args -q "$tmp/rc.sh" --devices 2 -o "$tmp/rc.json" >/dev/null 2>"$tmp/err"
    check "${args%:*}: recompute ${args##*:}" "[ \$? -eq 0 ] && json $tmp/rc.json 'd[\"recompute\"] == \"${args##*:}\"' && ! grep -q 'recompute' $tmp/err"
done
printf '%s --recompute-granularity full --recompute-method block --recompute-num-layers 1\n' "$base" >"$tmp/rc.sh"
"$bin" import-args -q "$tmp/rc.sh" --devices 2 -o "$tmp/rc.json" >/dev/null 2>"$tmp/err"
check "block 1 of a rank's 4 layers: said, config none" \
    "[ \$? -eq 0 ] && grep -q 'the first 1 of a rank.s 4 layers' $tmp/err && json $tmp/rc.json '\"recompute\" not in d'"
printf '%s --recompute-granularity selective --recompute-modules mlp\n' "$base" >"$tmp/rc.sh"
"$bin" import-args -q "$tmp/rc.sh" --devices 2 -o "$tmp/rc.json" >/dev/null 2>"$tmp/err"
check "selective of mlp: said, config none" \
    "[ \$? -eq 0 ] && grep -q 'recompute-modules mlp' $tmp/err && json $tmp/rc.json '\"recompute\" not in d'"
# out and back: the config's recompute written as the framework's flags
printf '{"model": "Llama-3.1-8B", "num_device": 8, "recompute": "full"}' >"$tmp/rcf.json"
"$bin" export "$tmp/rcf.json" --format megatron -o "$tmp/rcf.sh" >/dev/null 2>&1
"$bin" import-args -q "$tmp/rcf.sh" -o "$tmp/rcf2.json" >/dev/null 2>&1
check "recompute full: --recompute-granularity full uniform 1, read back full" \
    "grep -q -- '--recompute-num-layers 1' $tmp/rcf.sh && json $tmp/rcf2.json 'd[\"recompute\"] == \"full\"'"
printf '{"model": "Llama-3.1-8B", "num_device": 8, "recompute": "op", "cluster": {"framework": "torchtitan"}}' >"$tmp/rco.json"
"$bin" export "$tmp/rco.json" --format torchtitan -o "$tmp/rco.toml" >/dev/null 2>&1
"$bin" import-args -q "$tmp/rco.toml" -o "$tmp/rco2.json" >/dev/null 2>&1
check "recompute op: selective_ac_option \"op\", read back op" \
    "grep -q 'selective_ac_option = \"op\"' $tmp/rco.toml && json $tmp/rco2.json 'd[\"recompute\"] == \"op\"'"
"$bin" export "$tmp/rco.json" --format megatron -o "$tmp/rco.sh" >/dev/null 2>&1
check "recompute op to Megatron-LM: said in the script, no flag" \
    "grep -q 'no Megatron-LM flag' $tmp/rco.sh && ! grep -q -- '--recompute-granularity' $tmp/rco.sh"
exit $fail
