#!/bin/sh
# tests/cli/test_fsdp.sh: ZeRO and FSDP from the command line (issue 39 item 3; docs/fsdp.md):
# Llama-3.1-8B (8,030,261,248 parameters: 32 blocks of 218,112,000, the embedding and the head
# 128256 x 4096 each, the final norm 4096) on 8 H100s with FSDP over dp 8: a block's gather
# 2 x 218,112,000 bytes, its fp32 reduce-scatter twice that, the embedding's 2 x 525,336,576;
# static 16 / 8 bytes a parameter (torchtitan); the exposed FSDP time in the stage's; the keys
# through a saved plan; bad values refused with exit 2.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

flags="--model Llama-3.1-8B --device H100-80G --devices 8 --dp 8 --framework torchtitan"
"$bin" simulate $flags --fsdp --costs --json >"$tmp/c.json" 2>"$tmp/err"
check "--fsdp --costs --json: exit 0" "[ $? -eq 0 ]"
check "a block's gather: 2 x 218,112,000 B a layer, 32 layers, on NVLink over 8" \
    "json $tmp/c.json '[(o[\"fw_bytes\"], o[\"count\"], o[\"shape\"]) for o in d[0][\"ops\"] if o[\"name\"] == \"fsdp_gather_fw\" and o[\"site\"] == \"layer\"] == [(32 * 436224000, 32, \"all_gather /8 nvlink (overlapped)\")]'"
check "its reduce-scatter: fp32, 4 x 218,112,000 B" \
    "json $tmp/c.json '[o[\"fw_bytes\"] for o in d[0][\"ops\"] if o[\"name\"] == \"fsdp_reduce_scatter\" and o[\"site\"] == \"layer\"] == [32 * 872448000]'"
check "the embedding's gather: 2 x 525,336,576 B" \
    "json $tmp/c.json '[o[\"fw_bytes\"] for o in d[0][\"ops\"] if o[\"name\"] == \"fsdp_gather_fw\" and o[\"site\"] == \"embed\"] == [1050673152]'"
check "static: 16 / 8 bytes x 8,030,261,248 parameters" \
    "json $tmp/c.json 'd[0][\"static_bytes\"] == 2 * 8030261248'"
check "the exposed FSDP time is part of the stage's, and the gathers at least show the first" \
    "json $tmp/c.json 'd[0][\"fsdp_exposed_fw_us\"] > 0 and d[0][\"fsdp_exposed_bw_us\"] > 0 and abs(sum(o[\"fw_us\"] + o[\"b_us\"] + o[\"w_us\"] for o in d[0][\"ops\"]) + d[0][\"overhead_us\"] + d[0][\"fsdp_exposed_fw_us\"] + d[0][\"fsdp_exposed_bw_us\"] - d[0][\"fw_us\"] - d[0][\"bw_us\"]) < 1e-3'"
"$bin" simulate $flags --zero-stage 1 --costs --json >"$tmp/z1.json" 2>/dev/null
check "ZeRO-1: no per-layer collective, no exposed FSDP time" \
    "json $tmp/z1.json 'not [o for o in d[0][\"ops\"] if o[\"name\"].startswith(\"fsdp\")] and \"fsdp_exposed_fw_us\" not in d[0]'"
check "ZeRO-1 = --distributed-optimizer: the same static bytes" \
    "[ \"\$($bin simulate $flags --zero-stage 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"devices\"][0][\"static_memory\"])')\" = \"\$($bin simulate $flags --distributed-optimizer --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"devices\"][0][\"static_memory\"])')\" ]"

# the keys through a saved plan (HSDP: shard 4 of the 8, reshard never)
"$bin" simulate $flags --fsdp --dp-shard 4 --fsdp-reshard-after-forward never --plan-out "$tmp/p.json" >"$tmp/a.txt" 2>&1
check "plan written" "[ -s $tmp/p.json ]"
check "the plan keeps zero_stage, dp_shard, fsdp_reshard_after_forward" \
    "json $tmp/p.json 'd[\"config\"][\"cluster\"][\"zero_stage\"] == 3 and d[\"config\"][\"cluster\"][\"dp_shard\"] == 4 and d[\"config\"][\"cluster\"][\"fsdp_reshard_after_forward\"] == \"never\"'"
"$bin" simulate "$tmp/p.json" >"$tmp/b.txt" 2>&1
check "reloaded, the same step" "[ \"\$(grep 'step time' $tmp/a.txt)\" = \"\$(grep 'step time' $tmp/b.txt)\" ]"

"$bin" simulate $flags --zero-stage 4 >/dev/null 2>"$tmp/e1"
check "--zero-stage 4: exit 2 naming the flag" "[ $? -eq 2 ] && grep -q -- '--zero-stage' $tmp/e1"
"$bin" simulate $flags --fsdp --fsdp-reshard-after-forward sometimes >/dev/null 2>"$tmp/e2"
check "--fsdp-reshard-after-forward sometimes: exit 2 listing the policies" \
    "[ $? -eq 2 ] && grep -q 'default always never' $tmp/e2"
"$bin" simulate $flags --fsdp --dp-shard 3 >/dev/null 2>"$tmp/e3"
check "--dp-shard 3 of dp 8: exit 2" "[ $? -eq 2 ] && grep -q 'dp_shard: 3 does not divide dp 8' $tmp/e3"
exit $fail
