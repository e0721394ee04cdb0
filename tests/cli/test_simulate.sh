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
exit $fail
