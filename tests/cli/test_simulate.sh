#!/bin/sh
# tests/cli/test_simulate.sh: `mario-tui simulate` end to end: the table, --json, files it
# writes, --help, and exit statuses for bad input (2) and a config over the memory cap (1).
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" simulate >"$tmp/out" 2>&1
check "default runs" "[ $? -eq 0 ]"
check "default table has 8 devices" "[ \$(grep -cE '^ +[0-7] ' $tmp/out) -eq 8 ]"
check "default names GPT3-1.6B" "grep -q 'GPT3-1.6B' $tmp/out"

"$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 --json >"$tmp/j" 2>&1
check "json exits 0" "[ $? -eq 0 ]"
check "json step_time 21 (Figure 2 baseline)" \
    "python3 -c 'import json,sys; d=json.load(open(\"$tmp/j\")); sys.exit(0 if abs(d[\"step_time\"]-21)<1e-9 and len(d[\"devices\"])==4 and all(k in d[\"devices\"][0] for k in (\"busy\",\"bubble\",\"peak_memory\")) and d[\"throughput\"]>0 else 1)'"

# Megatron's synchronous p2p (--blocking-send): the sends and receives between two computes
# are posted as one batch, so 1F1B's steady state does not deadlock; p2p is free under unit
# costs, so 1F1B's step stays (N + D - 1)(F + B) = 21 t at D = N = 4 (the paper's Figure 2)
"$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 --blocking-send --json >"$tmp/jb" 2>&1
check "blocking 1F1B: 21 t, no deadlock" \
    "python3 -c 'import json,sys; d=json.load(open(\"$tmp/jb\")); sys.exit(0 if abs(d[\"step_time\"]-21)<1e-9 else 1)'"
for s in V X GPipe ZB-H1; do
    for dn in "2 4" "4 8" "8 16" "8 64"; do
        set -- $dn
        "$bin" simulate --scheme $s --devices $1 --microbatches $2 --memory 1T --blocking-send >/dev/null 2>"$tmp/err"
        check "blocking $s D=$1 N=$2 simulates ($(head -c 120 $tmp/err))" "[ $? -eq 0 ]"
    done
done

"$bin" simulate --scheme X --devices 4 --microbatches 8 --plan-out "$tmp/p.json" \
    --trace-out "$tmp/t.json" >/dev/null 2>&1
check "plan and trace written" "[ $? -eq 0 ] && [ -s $tmp/p.json ] && [ -s $tmp/t.json ]"
check "trace is JSON with traceEvents" \
    "python3 -c 'import json; d=json.load(open(\"$tmp/t.json\")); assert len(d[\"traceEvents\"])>0'"
"$bin" simulate "$tmp/p.json" --json >"$tmp/j2" 2>&1
check "a saved plan simulates" "[ $? -eq 0 ] && python3 -c 'import json; assert json.load(open(\"$tmp/j2\"))[\"scheme\"]==\"X\"'"

for ex in "$src"/examples/*.json; do
    "$bin" simulate "$ex" >/dev/null 2>"$tmp/err"
    rc=$?
    check "example $(basename "$ex") runs (rc $rc: $(head -c 200 $tmp/err))" "[ $rc -eq 0 ] || [ $rc -eq 1 ]"
done

"$bin" simulate --help >"$tmp/h" 2>&1
check "--help exits 0" "[ $? -eq 0 ] && grep -q -- '--unit-costs' $tmp/h"
"$bin" simulate --bogus >/dev/null 2>&1
check "unknown flag exits 2" "[ $? -eq 2 ]"
"$bin" simulate --devices 0 >/dev/null 2>"$tmp/err"
check "--devices 0 exits 2" "[ $? -eq 2 ] && grep -q 'devices' $tmp/err"
"$bin" simulate --scheme X --devices 5 >/dev/null 2>"$tmp/err"
check "odd X exits 2 naming the field" "[ $? -eq 2 ] && grep -q 'even' $tmp/err"
"$bin" simulate --devices 16 --model tiny >/dev/null 2>"$tmp/err"
check "more stages than layers exits 2" "[ $? -eq 2 ] && grep -q '16 stages but only 8 layers' $tmp/err"
"$bin" simulate "$tmp/nonexistent.json" >/dev/null 2>"$tmp/err"
check "missing file exits non-zero naming it" "[ $? -ne 0 ] && grep -q nonexistent.json $tmp/err"
printf '{"num_device": 4,\n "pipeline_scheme": }' >"$tmp/bad.json"
"$bin" simulate "$tmp/bad.json" >/dev/null 2>"$tmp/err"
check "malformed JSON exits 2 with file:line:col" "[ $? -eq 2 ] && grep -q 'bad.json:2:' $tmp/err"
"$bin" simulate --model GPT3-13B --devices 4 --memory 10G >/dev/null 2>"$tmp/err"
check "over the cap exits 1 naming the device" "[ $? -eq 1 ] && grep -q 'over the' $tmp/err"
# --scheme A,B,...: a row per scheme on the same config, the best marked (issue 27 item 4).
# Under unit costs 1F1B on 4 devices x 8 micro-batches steps (N + D - 1)(F + B) = 33 t for 8
# samples; each row is what simulate gives for that scheme alone.
u="--unit-costs 1,2,1 --devices 4 --microbatches 8"
"$bin" simulate --scheme V,ZB-V,DualPipeV $u >"$tmp/rows" 2>&1
check "scheme list: exit 0, a row each, the best marked once" \
    "[ $? -eq 0 ] && grep -c '^\(V\|ZB-V\|DualPipeV\) ' $tmp/rows | grep -qx 3 && [ \$(grep -c '  best\$' $tmp/rows) -eq 1 ]"
check "scheme list: V's row is 33 t, 8/33 samples/t, fits" \
    "grep -Eq '^V +33\.0000 +0\.2424 .* yes' $tmp/rows"
"$bin" simulate --scheme V,ZB-V,DualPipeV $u --json >"$tmp/rows.json" 2>&1
"$bin" simulate --scheme ZB-V $u --json >"$tmp/zbv.json" 2>&1
check "scheme list --json: an array, ZB-V's row as simulate --scheme ZB-V gives it" "python3 - $tmp/rows.json $tmp/zbv.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1])); one = json.load(open(sys.argv[2]))
assert [r['scheme'] for r in rows] == ['V', 'ZB-V', 'DualPipeV']
z = rows[1]
assert z['step_time'] == one['step_time'] and abs(z['throughput'] - one['throughput']) < 1e-12
assert abs(rows[0]['step_time'] - 33) < 1e-12 and abs(rows[0]['throughput'] - 8 / 33) < 1e-12
fit = [r for r in rows if r['fits']]
best = [r for r in rows if r['best']]
assert len(best) == 1 and best[0]['throughput'] == max(r['throughput'] for r in fit)
assert all(r['lower_bound'] <= r['step_time'] + 1e-9 for r in rows)
PY"
"$bin" simulate --scheme V,X --devices 3 >"$tmp/rows" 2>&1
check "scheme list: a scheme the config cannot take says why in its row" \
    "[ $? -eq 0 ] && grep -q '^X .*even' $tmp/rows && grep -q '^V .* best\$' $tmp/rows"
"$bin" simulate --scheme V,ZB-V --model GPT3-13B --devices 4 --memory 10G >"$tmp/rows" 2>&1
check "scheme list: none fits exits 1, says so" "[ $? -eq 1 ] && grep -q 'none fits' $tmp/rows"
"$bin" simulate --scheme V,ZB-V --plan-out "$tmp/p.json" >/dev/null 2>"$tmp/err"
check "scheme list with --plan-out exits 2" "[ $? -eq 2 ] && grep -q 'one scheme at a time' $tmp/err"
"$bin" simulate --scheme V,Nope >/dev/null 2>"$tmp/err"
check "scheme list with a bad name exits 2 naming it" "[ $? -eq 2 ] && grep -q Nope $tmp/err"
exit $fail
