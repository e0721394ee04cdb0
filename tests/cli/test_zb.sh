#!/bin/sh
# tests/cli/test_zb.sh: the zero-bubble family and torch's schedule CSV from the command line
# (issue 17): ZB-H1 with F = B = W = 1 steps 3N + D - 1 (the paper's closed form); every split
# scheme exports a CSV in torch's format that loads back (`simulate PLAN.csv`) to the same step
# time and peaks; a CSV written by hand in torch's spelling loads as the plan it names; bad
# cells name file:line:column; a checkpointed plan is refused as CSV, naming the instruction,
# and so is Chimera's (a stage on two ranks), saying why;
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

# Chimera puts every stage on two ranks: torch's CSV cannot hold it, so export says so and
# writes nothing (it used to write one that `simulate x.csv` then refused)
"$bin" export --scheme X $U -o "$tmp/x.csv" >"$tmp/out" 2>&1
check "Chimera as CSV: refused, nothing written" "[ $? -eq 1 ] && [ ! -e $tmp/x.csv ]"
check "Chimera as CSV: says why" "grep -q 'scheme X: .*every stage on two ranks' $tmp/out"

"$bin" simulate --scheme ZB-H1 --unit-costs 1,2,1,2 >"$tmp/out" 2>&1
check "W >= B: exit 2" "[ $? -eq 2 ]"
check "W >= B: says why" "grep -q 'W must be in \[0, B)' $tmp/out"
# NCCL matches a pair's messages in issue order: ZB-V's plans come out receiving in send
# order; one whose receives were sunk back to their consumers (crossing on device 1) gets
# them moved earlier before any rank starts (whether or not a GPU is here)
"$bin" simulate --model tiny --scheme ZB-V --devices 2 --microbatches 4 --plan-out "$tmp/v.json" >/dev/null 2>&1
python3 - "$tmp/v.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for dev in p["devices"]:
    for i in range(len(dev) - 1, -1, -1):
        x = dev[i]
        if x["op"] not in ("RA", "RG"):
            continue
        want = ("FW", "CFW") if x["op"] == "RA" else ("BW", "B")
        j = next((j for j in range(i + 1, len(dev)) if dev[j]["op"] in want
                  and dev[j]["mb"] == x["mb"] and dev[j]["stage"] == x["stage"]), None)
        if j is not None and j > i + 1:
            dev.insert(j, x)
            del dev[i]
json.dump(p, open(sys.argv[1], "w"))
PY
timeout 120 "$bin" run "$tmp/v.json" --backend nccl --np 2 --steps 1 >"$tmp/out" 2>&1
check "crossed receives: moved into the senders' order for NCCL" "grep -q '1 receive moved earlier into the senders. order' $tmp/out"
exit $fail
