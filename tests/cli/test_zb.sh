#!/bin/sh
# tests/cli/test_zb.sh: the zero-bubble family and torch's schedule CSV from the command line
# (issue 17): ZB-H1 with F = B = W = 1 steps 3N + D - 1 (the paper's closed form); every split
# scheme exports a CSV in torch's format that loads back (`simulate PLAN.csv`) to the same step
# time and peaks; a CSV written by hand in torch's spelling loads as the plan it names; bad
# cells name file:line:column; a checkpointed plan is refused as CSV, naming the instruction;
# W must be under B in --unit-costs.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
U="--unit-costs 1,2,1,1 --devices 4 --microbatches 8"

"$bin" simulate --scheme ZB-H1 $U --json >"$tmp/h1" 2>&1
check "ZB-H1 D=4 N=8 F=B=W=1: step 3N + D - 1 = 27" "json $tmp/h1 'd[\"step_time\"] == 27'"

for s in ZB-H1 ZB-H2 ZB-V ZB-W DualPipeV; do
    "$bin" export --scheme $s $U -o "$tmp/$s.csv" >/dev/null 2>&1
    check "$s: export -o plan.csv" "[ -s $tmp/$s.csv ]"
    "$bin" simulate --scheme $s $U --json >"$tmp/$s.a" 2>&1
    "$bin" simulate "$tmp/$s.csv" --unit-costs 1,2,1,1 --json >"$tmp/$s.b" 2>&1
    check "$s: the CSV simulates to the same step and peaks" \
        "python3 -c 'import json,sys; a=json.load(open(\"$tmp/$s.a\")); b=json.load(open(\"$tmp/$s.b\")); sys.exit(0 if a[\"step_time\"]==b[\"step_time\"] and [x[\"peak_memory\"] for x in a[\"devices\"]]==[x[\"peak_memory\"] for x in b[\"devices\"]] else 1)'"
done

# A 2-rank 1F1B with split backward, by hand, as torch writes it (empty cells are idle slots).
printf '0F0,0F1,,0I0,0W0,0I1,0W1\n,1F0,1I0,1F1,1I1,1W0,1W1\n' >"$tmp/hand.csv"
"$bin" simulate "$tmp/hand.csv" --unit-costs 1,2,1,1 --json >"$tmp/hand" 2>&1
check "hand-written CSV: ZB-H1 placement, 2 ranks, 2 micro-batches" \
    "json $tmp/hand 'd[\"scheme\"] == \"ZB-H1\" and d[\"pp\"] == 2 and d[\"microbatches\"] == 2'"

printf '0F0,0F1\n1F0,1Q1\n' >"$tmp/bad.csv"
"$bin" simulate "$tmp/bad.csv" >"$tmp/out" 2>&1
check "bad cell: exit 2 (bad input)" "[ $? -eq 2 ]"
check "bad cell: file:line:column named" "grep -q 'bad.csv:2:5: .1Q1. is not a torch action' $tmp/out"

"$bin" optimize --scheme ZB-V $U --plan-out "$tmp/ck.csv" >"$tmp/out" 2>&1
check "checkpointed plan as CSV: refused" "[ $? -ne 0 ] && [ ! -e $tmp/ck.csv ]"
check "checkpointed plan as CSV: names the CFW" "grep -q 'CFW0.*no spelling for checkpointing' $tmp/out"

"$bin" simulate --scheme ZB-H1 --unit-costs 1,2,1,2 >"$tmp/out" 2>&1
check "W >= B: exit 2" "[ $? -eq 2 ]"
check "W >= B: says why" "grep -q 'W must be in \[0, B)' $tmp/out"
exit $fail
