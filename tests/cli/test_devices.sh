#!/bin/sh
# tests/cli/test_devices.sh: devices people have (issue 37 item 5) and the framework profile
# (item 3) from the command line: a simulate at Llama 3's 16,384 GPUs (tp 8, pp 16, dp 128) and
# at 131,072, the limit; the tuner's grid at 16,384; `models` lists every device preset with
# its datasheet figures; --framework and cluster.framework, bad names refused naming the flag
# or key (exit 2).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" simulate --json --model Llama-3.1-405B --device H100-80G --devices 16384 --tp 8 --dp 128 \
    --microbatches 32 --scheme W --chunks 2 >"$tmp/a.json" 2>"$tmp/err"
rc=$?
check "16,384 H100s, tp 8 dp 128: simulated (exit 0 or 1, over the cap)" "[ $rc -le 1 ] && [ -s $tmp/a.json ]"
check "16,384 = 16 stages x dp 128 x tp 8" "json $tmp/a.json 'd[\"pp\"] == 16 and d[\"dp\"] == 128'"
"$bin" simulate --json --model Llama-3.1-405B --devices 131072 --tp 8 --dp 1024 --microbatches 16 \
    >"$tmp/b.json" 2>"$tmp/err"
check "131,072 GPUs: simulated" "[ \$? -le 1 ] && json $tmp/b.json 'd[\"dp\"] == 1024'"
"$bin" simulate --devices 131073 >"$tmp/o" 2>&1
check "131,073 GPUs: refused naming --devices (exit 2)" "[ \$? -eq 2 ] && grep -q -- '--devices' $tmp/o"
"$bin" tune --json --threads 1 --model Llama-3.1-405B --device H100-80G --devices 16384 --tp 8 \
    --scheme V --global-batch 2048 >"$tmp/t.json" 2>"$tmp/err"
check "the tuner's grid at 16,384 GPUs (tp 8): runs and ranks" \
    "[ \$? -le 1 ] && json $tmp/t.json 'len(d[\"candidates\"]) > 0'"

"$bin" models >"$tmp/m" 2>&1
for dev in A100-40G A100-80G H100-80G H100-96G-500W H200 H800 B200 GB200 MI300X; do
    check "models lists $dev" "grep -q '^$dev ' $tmp/m"
done
# the datasheets' figures: B200 2,250 dense BF16 TFLOP/s and 4,500 FP8; GB200's 72-GPU domain
check "B200: 2250 BF16, 4500 FP8 TFLOP/s, 180 GB at 8000 GB/s" \
    "grep -Eq '^B200 +2250 +4500 +180 GB +8000 ' $tmp/m"
check "GB200: an NVLink domain of 72" "grep -Eq '^GB200 .* 72 +0\\.[0-9]+\$' $tmp/m"
"$bin" models --json >"$tmp/m.json" 2>&1
check "models --json: 9 devices, MI300X 1307.4 TFLOP/s BF16 and 192 GB" \
    "json $tmp/m.json 'len(d[\"devices\"]) == 9 and [x for x in d[\"devices\"] if x[\"name\"] == \"MI300X\"][0][\"bf16_peak_flops\"] == 1307.4e12'"

# GB200 takes its 72-GPU NVLink domain: tp 72 is one node
"$bin" simulate --json --model Llama-3.1-405B --device GB200 --devices 1152 --tp 72 \
    --microbatches 16 >"$tmp/g.json" 2>"$tmp/err"
check "GB200, tp 72: accepted (one NVLink domain)" "[ \$? -le 1 ] && json $tmp/g.json 'd[\"pp\"] == 16'"

"$bin" simulate --framework deepspeed >"$tmp/o" 2>&1
check "--framework deepspeed: exit 2 naming the flag and the names" \
    "[ \$? -eq 2 ] && grep -q -- '--framework' $tmp/o && grep -q 'torchtitan' $tmp/o"
printf '{"cluster": {"framework": "nemo"}}' >"$tmp/bad.json"
"$bin" simulate "$tmp/bad.json" >"$tmp/o" 2>&1
check "cluster.framework nemo: exit 2 naming the key" \
    "[ \$? -eq 2 ] && grep -q 'cluster.framework' $tmp/o"
"$bin" simulate --model Llama-3.1-8B --framework torchtitan --overlap-grad-reduce \
    --plan-out "$tmp/p.json" >/dev/null 2>&1
check "the framework and overlap flags are written to the plan's config" \
    "json $tmp/p.json 'd[\"config\"][\"cluster\"][\"framework\"] == \"torchtitan\" and d[\"config\"][\"cluster\"][\"overlap_grad_reduce\"]'"
exit $fail
