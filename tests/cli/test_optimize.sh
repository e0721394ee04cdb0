#!/bin/sh
# tests/cli/test_optimize.sh: `mario-tui optimize` end to end: the paper's Figure 2 in the
# table and in --json (21, 28, 25, 23, 22 for 1F1B, D = 4, N = 4, unit costs 1,2,1), --lmbs,
# --plan-out, --help, and the exit statuses: 2 for bad usage, 1 when the optimized plan is over
# the memory cap.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"

"$bin" optimize $fig2 >"$tmp/out" 2>&1
check "figure 2 table exits 0" "[ $? -eq 0 ]"
for row in "base 21" "ckpt 28" "overlap 25" "redundancy 23" "prepose 22"; do
    set -- $row
    check "table row $1 = $2 t" "grep -qE '^$1 +$2\\.000 ' $tmp/out"
done
check "table names the passes in order" \
    "[ \"\$(awk 'NR>2 && NF>5 && \$2 ~ /^[0-9]/ {print \$1}' $tmp/out | tr '\n' ' ')\" = 'base ckpt overlap redundancy prepose ' ]"

"$bin" optimize $fig2 --json >"$tmp/j" 2>&1
check "json exits 0" "[ $? -eq 0 ]"
check "json passes: names, Figure 2 step times, memory, throughput" "python3 -c '
import json, sys
d = json.load(open(\"$tmp/j\"))
p = d[\"passes\"]
names = [r[\"name\"] for r in p]
assert names == [\"base\", \"ckpt\", \"overlap\", \"redundancy\", \"prepose\"], names
assert [r[\"step_time\"] for r in p] == [21, 28, 25, 23, 22], p
for r in p:
    assert all(k in r for k in (\"step_time\", \"throughput\", \"peak_memory_min\", \"peak_memory_max\"))
    assert 0 < r[\"peak_memory_min\"] <= r[\"peak_memory_max\"]
    assert abs(r[\"throughput\"] - 4 / r[\"step_time\"]) < 1e-12
assert p[0][\"peak_memory_max\"] == 4 and p[0][\"peak_memory_min\"] == 1
assert all(r[\"peak_memory_max\"] < 1.01 for r in p[1:])
assert d[\"time_unit\"] == \"t\" and d[\"memory_unit\"] == \"M_theta\"
'"

"$bin" optimize --devices 4 --microbatches 8 --lmbs --json >"$tmp/l" 2>&1
check "lmbs exits 0" "[ $? -eq 0 ]"
check "lmbs is one more row: twice the micro-batch size, half the micro-batches" "python3 -c '
import json
d = json.load(open(\"$tmp/l\"))
p = d[\"passes\"]
assert [r[\"name\"] for r in p][-2:] == [\"prepose\", \"lmbs\"], p
assert p[-1][\"micro_batch_size\"] == 2 * p[0][\"micro_batch_size\"]
assert p[-1][\"microbatches\"] * 2 == p[0][\"microbatches\"] == 8
assert d[\"lmbs\"][\"made\"] and d[\"lmbs\"][\"fits\"]
assert d[\"time_unit\"] == \"s\" and p[-1][\"step_time\"] > 0
'"
"$bin" optimize $fig2 --lmbs >"$tmp/lu" 2>&1
check "lmbs under unit costs: no row, a note" \
    "[ $? -eq 0 ] && grep -q '^lmbs: needs the analytic costs' $tmp/lu && ! grep -qE '^lmbs +[0-9]' $tmp/lu"

"$bin" optimize $fig2 --plan-out "$tmp/p.json" >/dev/null 2>&1
check "plan-out written" "[ $? -eq 0 ] && [ -s $tmp/p.json ]"
"$bin" simulate "$tmp/p.json" --json >"$tmp/s" 2>&1
check "the saved plan is the optimized one (22 t, checkpointed)" \
    "[ $? -eq 0 ] && python3 -c 'import json; assert json.load(open(\"$tmp/s\"))[\"step_time\"] == 22' && grep -q '\"CFW\"' $tmp/p.json"

for s in X W GPipe; do
    "$bin" optimize --scheme $s --unit-costs 1,2,1 --devices 4 --microbatches 8 --json >"$tmp/x" 2>&1
    check "scheme $s optimizes; passes 2-4 never slower" "[ $? -eq 0 ] && python3 -c '
import json
p = json.load(open(\"$tmp/x\"))[\"passes\"]
t = [r[\"step_time\"] for r in p]
assert all(t[i] <= t[i - 1] + 1e-9 for i in range(2, 5)), t
'"
done

"$bin" optimize --help >"$tmp/h" 2>&1
check "--help exits 0 and lists the flags" \
    "[ $? -eq 0 ] && grep -q -- '--lmbs' $tmp/h && grep -q -- '--plan-out' $tmp/h && grep -q -- '--unit-costs' $tmp/h"
"$bin" optimize --bogus >/dev/null 2>&1
check "unknown flag exits 2" "[ $? -eq 2 ]"
"$bin" optimize a.json b.json >/dev/null 2>&1
check "two configs exit 2" "[ $? -eq 2 ]"
"$bin" optimize --devices 0 >/dev/null 2>"$tmp/err"
check "--devices 0 exits 2" "[ $? -eq 2 ] && grep -q 'devices' $tmp/err"
"$bin" optimize --model GPT3-13B --devices 4 --memory 10G >/dev/null 2>"$tmp/err"
check "optimized plan over the cap exits 1" "[ $? -eq 1 ] && grep -q 'over the' $tmp/err"
exit $fail
