#!/bin/sh
# tests/cli/test_costs.sh: `simulate --costs` (issue 37 item 1): a stage's ops in order with
# their figures; the shares and the framework overhead add up to the stage's time; the
# shapes are the per-rank ones worked by hand; bad input is refused with exit 2.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

# Llama-3.1-8B on 8 H100s, tp 2, pp 4: 32 layers, 8 a stage; the first, a middle, the last
"$bin" simulate --model Llama-3.1-8B --device H100-80G --devices 8 --tp 2 --costs --json \
    >"$tmp/c.json" 2>"$tmp/err"
check "--costs --json: exit 0" "[ $? -eq 0 ]"
check "three stages: 0, 2, 3" "json $tmp/c.json '[s[\"stage\"] for s in d] == [0, 2, 3]'"
check "the first stage opens with the embedding" \
    "json $tmp/c.json 'd[0][\"ops\"][0][\"name\"] == \"embed\" and d[0][\"ops\"][0][\"site\"] == \"embed\"'"
check "the last stage ends with the loss" \
    "json $tmp/c.json '[o[\"name\"] for o in d[2][\"ops\"] if o[\"site\"] == \"head\"][-2:] == [\"cross_entropy\", \"tp_reduce_ce\"]'"
# QKV over tp 2: (4096 + 2 x 1024) / 2 = 3072 columns, 8 layers
check "qkv: 8192x3072x4096, x8" \
    "json $tmp/c.json '[(o[\"shape\"], o[\"count\"]) for o in d[1][\"ops\"] if o[\"name\"] == \"qkv\"] == [(\"8192x3072x4096\", 8)]'"
# 2mnk x 8 layers = 2 x 8192 x 3072 x 4096 x 8
check "qkv: forward FLOPs 2mnk x 8" \
    "json $tmp/c.json '[o[\"fw_flops\"] for o in d[1][\"ops\"] if o[\"name\"] == \"qkv\"] == [2 * 8192 * 3072 * 4096 * 8]'"
check "each stage: the ops' time + overheads = fw + bw" \
    "json $tmp/c.json 'all(abs(sum(o[\"fw_us\"] + o[\"b_us\"] + o[\"w_us\"] for o in s[\"ops\"]) + s[\"overhead_us\"] - s[\"fw_us\"] - s[\"bw_us\"]) < 1e-6 * s[\"fw_us\"] for s in d)'"
check "each stage: the shares + the overhead's = 1" \
    "json $tmp/c.json 'all(abs(sum(o[\"share\"] for o in s[\"ops\"]) + s[\"overhead_us\"] / (s[\"fw_us\"] + s[\"bw_us\"]) - 1) < 1e-9 for s in d)'"
check "the layer's kept bytes x 8 = the middle stage's activations" \
    "json $tmp/c.json 'abs(sum(o[\"keep_bytes\"] for o in d[1][\"ops\"]) - d[1][\"act_bytes\"]) < 1'"
# the text table: one stage
"$bin" simulate --model Llama-3.1-8B --device H100-80G --devices 8 --tp 2 --costs-stage 1 \
    >"$tmp/t" 2>&1
check "--costs-stage 1: one stage, its ops listed" \
    "[ \$(grep -c '^stage ' $tmp/t) -eq 1 ] && grep -q ' gate_up ' $tmp/t && grep -q 'framework overheads' $tmp/t"
# the paper's GPT3-13B (eager, the 2021 stack): the softmax and its dropout are ops
"$bin" simulate --model GPT3-13B --devices 32 --costs-stage 0 --json >"$tmp/g.json" 2>&1
check "GPT3-13B: eager softmax and dropout listed after the attention core" \
    "json $tmp/g.json '[o[\"name\"] for o in d[0][\"ops\"]][3:6] == [\"core_attn\", \"attn_softmax\", \"attn_dropout\"]'"
"$bin" simulate --model GPT3-13B --devices 32 --costs-stage 99 >"$tmp/o" 2>&1
check "--costs-stage 99: exit 2 naming the flag" "[ $? -eq 2 ] && grep -q 'costs-stage: 99' $tmp/o"
"$bin" simulate --unit-costs 1,2,1 --costs >"$tmp/o" 2>&1
check "--costs with unit costs: refused, exit 2" "[ $? -eq 2 ] && grep -q 'unit costs' $tmp/o"
[ "$fail" = 0 ] && echo "test_costs: all passed"
exit $fail
