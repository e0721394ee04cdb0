#!/bin/sh
# tests/cli/test_fp8.sh: FP8 from the command line (issue 39 item 4; docs/fp8.md). --fp8 and its
# flags are listed by --help; FP8 on a device without it (A100: fp8_peak_flops 0) and MXFP8 on
# Hopper exit 2 naming the device; a plan saved with --plan-out carries the recipe and
# simulates to the same step; a Megatron-LM launch in FP8 goes through import-args, export
# --format megatron and import-args again to the same config; FP8 is faster than bf16 on an
# H100 and moves no FLOP.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/lib.sh"

"$bin" simulate --help >"$tmp/help" 2>&1
check "--help lists --fp8 RECIPE" "grep -q -- '--fp8 RECIPE' $tmp/help"
check "--help lists --fp8-format and --fp8-param-gather" \
    "grep -q -- '--fp8-format F' $tmp/help && grep -q -- '--fp8-param-gather' $tmp/help"

"$bin" simulate --model LLaMA-2-7B --device A100-80G --fp8 delayed >/dev/null 2>"$tmp/err"
check "A100 + FP8: exit 2" "[ $? -eq 2 ]"
check "A100 + FP8: the device named" "grep -q 'delayed needs FP8 tensor cores; the device A100-80G has none' $tmp/err"
"$bin" simulate --model LLaMA-2-7B --device H100-80G --fp8 mxfp8 >/dev/null 2>"$tmp/err"
check "H100 + MXFP8: exit 2" "[ $? -eq 2 ]"
check "H100 + MXFP8: why" "grep -q 'mxfp8 needs Blackwell' $tmp/err && grep -q H100-80G $tmp/err"
"$bin" simulate --model LLaMA-2-7B --device H100-80G --fp8 fp4 >/dev/null 2>"$tmp/err"
check "an unknown recipe: exit 2 naming the flag" "[ $? -eq 2 ] && grep -q -- '--fp8: unknown FP8 recipe' $tmp/err"

# the plan carries the recipe and reads back to the same step
flags="--model Llama-3.1-8B --device H100-80G --devices 8 --dp 8 --distributed-optimizer"
"$bin" simulate $flags --fp8 blockwise --fp8-format e4m3 --fp8-param-gather \
    --plan-out "$tmp/plan.json" --json >"$tmp/a.json" 2>/dev/null
json "$tmp/plan.json" "d['config']['cluster']['fp8_recipe']=='blockwise' and d['config']['cluster']['fp8_format']=='e4m3' and d['config']['cluster']['fp8_param_gather']==True"
check "the plan JSON carries the FP8 keys" "[ $? -eq 0 ]"
"$bin" simulate "$tmp/plan.json" --json >"$tmp/b.json" 2>/dev/null
check "the saved plan simulates to the same step" \
    "python3 -c \"import json; a=json.load(open('$tmp/a.json')); b=json.load(open('$tmp/b.json')); exit(a['step_time']!=b['step_time'])\""
"$bin" simulate $flags --json >"$tmp/bf16.json" 2>/dev/null
check "FP8 is faster than bf16 on an H100" \
    "python3 -c \"import json; a=json.load(open('$tmp/a.json')); b=json.load(open('$tmp/bf16.json')); exit(not a['step_time'] < b['step_time'])\""

# a Megatron-LM launch in FP8: read, written back, read again
cat >"$tmp/fp8.sh" <<'SH'
torchrun --nproc-per-node 8 --nnodes 8 pretrain_gpt.py \
  --num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 --num-attention-heads 64 \
  --group-query-attention --num-query-groups 8 --seq-length 8192 \
  --max-position-embeddings 8192 --vocab-size 128256 --swiglu --normalization RMSNorm \
  --disable-bias-linear --untie-embeddings-and-output-weights --bf16 \
  --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather \
  --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 --sequence-parallel \
  --use-distributed-optimizer --micro-batch-size 1 --global-batch-size 128
SH
"$bin" import-args -q "$tmp/fp8.sh" -o "$tmp/1.json" >/dev/null 2>&1
check "import-args of an FP8 launch" "[ $? -eq 0 ]"
json "$tmp/1.json" "d['cluster']['fp8_recipe']=='tensorwise' and d['cluster']['fp8_param_gather']==True and d['cluster']['device']=='H100-80G'"
check "the FP8 flags read" "[ $? -eq 0 ]"
"$bin" export "$tmp/1.json" --format megatron -o "$tmp/out.sh" >/dev/null 2>&1
check "export --format megatron writes the FP8 flags" \
    "grep -q -- '--fp8-recipe tensorwise' $tmp/out.sh && grep -q -- '--fp8-param-gather' $tmp/out.sh"
"$bin" import-args -q "$tmp/out.sh" -o "$tmp/2.json" >/dev/null 2>&1
grep -v '"source"' "$tmp/1.json" >"$tmp/a" && grep -v '"source"' "$tmp/2.json" >"$tmp/b"
check "the round trip gives the same config" "cmp -s $tmp/a $tmp/b"
exit $fail
