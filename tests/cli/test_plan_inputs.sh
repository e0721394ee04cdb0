#!/bin/sh
# tests/cli/test_plan_inputs.sh: `mario-tui plan-inputs` end to end (issue 12): the table,
# --json's fields, a config whose seq_length is a distribution or a lengths file, the
# explorer's bucket list, and exit status 2 with a clear message for bad input (an empty or
# non-numeric lengths file, a length beyond the model's positions, a cap no plan meets for the
# longest batch: the message names the length and the bytes over).
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
lengths=$src/data/lengths.txt

"$bin" plan-inputs --lengths "$lengths" --memory 12G >"$tmp/out" 2>&1
check "table exits 0" "[ $? -eq 0 ]"
check "table has 16 buckets of 64 tokens" "[ \$(grep -cE '^[0-9]+-[0-9]+ ' $tmp/out) -eq 16 ]"
check "table gives the expected throughput" "grep -q 'expected throughput over the lengths' $tmp/out"
check "table reports the cache" "grep -q 'plan cache (buckets of 64 tokens' $tmp/out"

"$bin" plan-inputs --lengths "$lengths" --scheme X --memory 16G --bucket 128 --exact --json \
    >"$tmp/j" 2>&1
check "json exits 0" "[ $? -eq 0 ]"
check "json fields: buckets (seq_length, checkpointed_layers per stage, peak_memory, step_time), expected_throughput" \
    "python3 - $tmp/j <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d['buckets']
assert len(b) == 8 and [x['seq_length'] for x in b] == [128 * (i + 1) for i in range(8)]
n = d['layers_per_stage']
for x in b:
    assert len(x['checkpointed_layers']) == len(n) == 8
    assert all(len(l) == k for l, k in zip(x['checkpointed_layers'], x['checkpointed_counts']))
    assert x['peak_memory'] <= d['memory_cap'] * (1 + 1e-9) and x['step_time'] > 0
c, a, s = d['expected_throughput'], d['baselines']['full_checkpointing'], d['baselines']['static_longest']
assert c >= a * (1 - 1e-12) and c >= s * (1 - 1e-12)
assert d['cache']['hits'] + d['cache']['misses'] == 1522 and d['cache']['misses'] == 8
assert d['greedy_vs_exact']['buckets_searched'] >= 1 and d['greedy_vs_exact']['gap_max'] >= 0
PY"

# the config's forms: a distribution, a file relative to the config
cat >"$tmp/dist.json" <<'J'
{"memory_per_device": "12G",
 "model": {"preset": "GPT3-1.6B", "seq_length": {"values": [256, 1024], "weights": [3, 1]}}}
J
"$bin" plan-inputs "$tmp/dist.json" --json >"$tmp/jd" 2>&1
check "distribution config: two buckets weighted 3 and 1" \
    "python3 -c 'import json; d=json.load(open(\"$tmp/jd\")); b=d[\"buckets\"]; assert [x[\"seq_length\"] for x in b]==[256,1024] and [x[\"batches\"] for x in b]==[3,1]'"
printf '100\n900\n' >"$tmp/l.txt"
printf '{"model": {"preset": "GPT3-1.6B", "seq_length": "l.txt"}}\n' >"$tmp/file.json"
"$bin" plan-inputs "$tmp/file.json" --bucket 100 --json >"$tmp/jf" 2>&1
check "lengths-file config: its two lengths" \
    "python3 -c 'import json; d=json.load(open(\"$tmp/jf\")); assert [x[\"seq_length\"] for x in d[\"buckets\"]]==[100,900]'"

# bad input: exit 2, the file and line, the length, the bytes over
: >"$tmp/empty.txt"
"$bin" plan-inputs --lengths "$tmp/empty.txt" >/dev/null 2>"$tmp/err"
check "empty lengths file exits 2" "[ $? -eq 2 ] && grep -q 'empty.txt: no lengths' $tmp/err"
printf '512\n# fine\n5l2\n' >"$tmp/nan.txt"
"$bin" plan-inputs --lengths "$tmp/nan.txt" >/dev/null 2>"$tmp/err"
check "non-numeric length exits 2 with file:line:col" \
    "[ $? -eq 2 ] && grep -q \"nan.txt:3:1: '5l2' is not a length\" $tmp/err"
printf '512\n2048\n' >"$tmp/long.txt"
"$bin" plan-inputs --lengths "$tmp/long.txt" >/dev/null 2>"$tmp/err"
check "a length beyond the model's positions exits 2" \
    "[ $? -eq 2 ] && grep -q 'long.txt:2:1: length 2048 is beyond the model.s largest position (1024' $tmp/err"
"$bin" plan-inputs --lengths "$lengths" --model tiny >/dev/null 2>"$tmp/err"
check "tiny has 64 positions" "[ $? -eq 2 ] && grep -q 'largest position (64' $tmp/err"
"$bin" plan-inputs --lengths "$lengths" --memory 4G >/dev/null 2>"$tmp/err"
check "a cap no plan meets exits 2 naming the length and the bytes over" \
    "[ $? -eq 2 ] && grep -q 'a batch of 1024 tokens' $tmp/err && grep -qE '\\([0-9]+ bytes\\) over the 4.00 GiB cap' $tmp/err"
printf '{"model": {"preset": "GPT3-1.6B", "seq_length": "nan.txt"}}\n' >"$tmp/badfile.json"
"$bin" plan-inputs "$tmp/badfile.json" >/dev/null 2>"$tmp/err"
check "a config naming a bad lengths file exits 2 with both positions" \
    "[ $? -eq 2 ] && grep -q 'badfile.json:1:35: model.seq_length' $tmp/err && grep -q 'nan.txt:3:1' $tmp/err"
"$bin" plan-inputs --unit-costs 1,2,1 >/dev/null 2>"$tmp/err"
check "unit costs are refused" "[ $? -ne 0 ] && grep -q 'unit costs' $tmp/err"
"$bin" plan-inputs --bucket 0 >/dev/null 2>&1
check "--bucket 0 exits 2" "[ $? -eq 2 ]"
"$bin" plan-inputs --help >"$tmp/h" 2>&1
check "--help exits 0" "[ $? -eq 0 ] && grep -q -- '--lengths FILE' $tmp/h"

# the explorer's bucket list: a, then Enter shows the selected bucket's plan
"$bin" explore --memory 12G --lengths "$lengths" --dump-screen --size 120x40 --keys 'a' \
    >"$tmp/s1" 2>&1
check "explorer lists 16 buckets" \
    "grep -q 'input-aware checkpointing: 16 buckets of 64 tokens' $tmp/s1 && grep -q '961-1024' $tmp/s1"
"$bin" explore --memory 12G --lengths "$lengths" --dump-screen --size 120x40 --keys 'ak\n' \
    >"$tmp/s2" 2>&1
check "explorer shows a bucket's plan" "grep -q 'input-aware plan for 897-960 tokens' $tmp/s2"
exit $fail
