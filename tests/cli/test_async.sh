#!/bin/sh
# tests/cli/test_async.sh: the asynchronous schemes from the command line (issue 11):
# `simulate --json` carries utilization and per-stage staleness, the table names them, plans
# round-trip, Mario's passes run on an async plan, and bad input exits 2 with the field named:
# --iterations 0, --update-interval 0, several iterations of a synchronous scheme, an async
# scheme given to the tuner, iterations 0 in a config file. `simulate` of an Async config
# computes its figures without building the plan (sim_run_direct); with --plan-out it builds
# and simulates the plan: both print the same JSON, byte for byte.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" simulate --scheme Async --unit-costs 1,2,1 --devices 4 --microbatches 4 --iterations 3 \
    --json >"$tmp/j" 2>&1
check "Async --json exits 0" "[ $? -eq 0 ]"
check "Async: staleness [3,2,1,0], makespan 45t, utilization 12/15, steady state 1" \
    "python3 -c 'import json,sys; d=json.load(open(\"$tmp/j\")); u=d[\"utilization\"]; sys.exit(0 if d[\"staleness\"]==[3,2,1,0] and abs(d[\"step_time\"]-45)<1e-9 and abs(u[\"makespan\"]-0.8)<1e-12 and abs(u[\"steady_state\"]-1)<1e-12 and d[\"iterations\"]==3 else 1)'"

"$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 --json >"$tmp/v" 2>&1
check "V --json: staleness zeros, utilization 12/21" \
    "python3 -c 'import json,sys; d=json.load(open(\"$tmp/v\")); sys.exit(0 if d[\"staleness\"]==[0,0,0,0] and abs(d[\"utilization\"][\"makespan\"]-12/21)<1e-12 else 1)'"

"$bin" simulate --scheme PipeDream --devices 4 --microbatches 8 --iterations 2 >"$tmp/t" 2>&1
check "PipeDream table shows staleness and stashed versions" \
    "[ $? -eq 0 ] && grep -q 'staleness' $tmp/t && grep -q 'stashed weight versions' $tmp/t"

"$bin" simulate --scheme Async --devices 4 --microbatches 4 --iterations 2 --update-interval 2 \
    --plan-out "$tmp/p.json" >/dev/null 2>&1
check "async plan saved" "[ $? -eq 0 ] && [ -s $tmp/p.json ]"
"$bin" simulate "$tmp/p.json" --json >"$tmp/j2" 2>&1
check "saved async plan simulates with its iterations" \
    "[ $? -eq 0 ] && python3 -c 'import json; d=json.load(open(\"$tmp/j2\")); assert d[\"scheme\"]==\"Async\" and d[\"iterations\"]==2 and d[\"update_interval\"]==2'"

"$bin" optimize --scheme Async --unit-costs 1,2,1 --devices 4 --microbatches 4 --iterations 2 \
    --json >"$tmp/o" 2>&1
check "optimize runs Mario's passes on an async plan" "[ $? -eq 0 ]"

"$bin" simulate --scheme Async --iterations 0 >/dev/null 2>"$tmp/err"
check "--iterations 0 exits 2 naming the flag" "[ $? -eq 2 ] && grep -q -- '--iterations' $tmp/err"
"$bin" simulate --scheme Async --update-interval 0 >/dev/null 2>"$tmp/err"
check "--update-interval 0 exits 2 naming the flag" \
    "[ $? -eq 2 ] && grep -q -- '--update-interval' $tmp/err"
"$bin" simulate --scheme V --iterations 2 >/dev/null 2>"$tmp/err"
check "V with 2 iterations exits 2" "[ $? -eq 2 ] && grep -q 'asynchronous scheme' $tmp/err"
"$bin" tune --scheme Async >/dev/null 2>"$tmp/err"
check "tune --scheme Async exits 2" "[ $? -eq 2 ] && grep -q 'synchronous schemes only' $tmp/err"
"$bin" tune --iterations 3 >/dev/null 2>"$tmp/err"
check "tune --iterations 3 exits 2" "[ $? -eq 2 ] && grep -q 'iterations' $tmp/err"
printf '{"pipeline_scheme": "Async",\n  "iterations": 0}\n' >"$tmp/bad.json"
"$bin" simulate "$tmp/bad.json" >/dev/null 2>"$tmp/err"
check "iterations 0 in a file exits 2 with file:line" \
    "[ $? -eq 2 ] && grep -q 'bad.json:2:' $tmp/err && grep -q 'iterations' $tmp/err"

# The explorer: iteration starts marked on every lane, staleness beside the memory bars,
# utilization on the pass bar; the scheme key reaches Async from the default.
"$bin" explore --scheme Async --unit-costs 1,2,1 --devices 4 --microbatches 4 --iterations 3 \
    --dump-screen --size 120x24 >"$tmp/s" 2>&1
check "explore Async exits 0" "[ $? -eq 0 ]"
check "explore Async: K and U in the title" "grep -q 'Async K 3 U 1' $tmp/s"
check "explore Async: staleness beside the bars" \
    "grep -q 'τ3\$' $tmp/s && grep -q 'τ0\$' $tmp/s && grep -q 'τ staleness' $tmp/s"
check "explore Async: two iteration marks per lane" \
    "[ \$(grep '^dev 0' $tmp/s | grep -o '┃' | wc -l) -eq 2 ]"
check "explore Async: utilization on the pass bar" "grep -q 'util 80% steady 100%' $tmp/s"
"$bin" explore --dump-screen --size 120x24 --keys 'ssss' >"$tmp/s2" 2>&1
check "explore: s cycles to Async with 3 iterations" "grep -q 'Async K 3 U 1' $tmp/s2"
"$bin" explore --dump-screen --size 120x24 --keys 'I' >"$tmp/s3" 2>&1
check "explore: I on a synchronous plan explains itself" \
    "grep -q 'only the asynchronous schemes' $tmp/s3"
for args in "--devices 8 --microbatches 16 --iterations 3" \
    "--devices 4 --microbatches 5 --iterations 2 --update-interval 2" \
    "--devices 8 --microbatches 3" "--devices 6 --microbatches 9 --iterations 2 --memory 20GB"; do
    "$bin" simulate --scheme Async $args --json >"$tmp/direct" 2>&1
    rc1=$?
    "$bin" simulate --scheme Async $args --json --plan-out "$tmp/dp.json" >"$tmp/built" 2>&1
    rc2=$?
    check "Async $args: the direct figures equal the built plan's (exit $rc1, $rc2)" \
        "[ $rc1 -eq $rc2 ] && cmp -s $tmp/direct $tmp/built"
done
exit $fail
