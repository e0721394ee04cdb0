#!/bin/sh
# tests/cli/test_import.sh: `mario-tui import` end to end (issue 19): a simulated Chimera trace
# and our CPU runs of a Mario-optimized 1F1B plan and ZB-H1 come back as the plans that made
# them (the same instructions on every device); a torch-style trace of 1F1B ("PP:" ranges)
# becomes a V plan that simulate, optimize and export take; PiPPy's measured trace, its ranks'
# clocks apart, imports and replays; inconsistent traces exit 2 naming
# the device, the event and file:line:col. The CPU runs skip without mpirun.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$src/tests/lib.sh"
corpus=$src/tests/fuzz/corpus/import

# same_plan A B: the same instructions, in the same order, on every device
same_plan() {
    python3 -c "import json,sys
a=json.load(open('$1'))['devices']; b=json.load(open('$2'))['devices']
sys.exit(0 if a == b else 1)"
}

"$bin" simulate --scheme X --devices 4 --microbatches 8 --plan-out "$tmp/x.json" \
    --trace-out "$tmp/x-trace.json" >/dev/null
"$bin" import "$tmp/x-trace.json" -o "$tmp/x-imp.json" >"$tmp/out" 2>&1
check "import a simulated X trace ($(head -c 200 $tmp/out))" "[ \$? -eq 0 ]"
check "it is the plan that was simulated" "same_plan $tmp/x.json $tmp/x-imp.json"

"$bin" import "$corpus/pp-1f1b-two-pids.json" --model tiny -o "$tmp/pp.json" --json >"$tmp/j" \
    2>&1
check "import a torch-style 1F1B trace ($(head -c 200 $tmp/j))" "[ \$? -eq 0 ]"
check "placed as V: 2 devices, 2 stages, 2 micro-batches" \
    "json $tmp/j 'd[\"scheme\"] == \"V\" and d[\"devices\"] == 2 and d[\"stages\"] == 2 and d[\"microbatches\"] == 2 and not d[\"ours\"]'"
"$bin" simulate --model tiny --devices 2 --microbatches 2 --plan-out "$tmp/v.json" >/dev/null
check "it is the 1F1B plan" "same_plan $tmp/v.json $tmp/pp.json"
for cmd in "simulate $tmp/pp.json --json" "optimize $tmp/pp.json --json" \
    "export $tmp/pp.json -o $tmp/pp.svg"; do
    # shellcheck disable=SC2086
    "$bin" $cmd >"$tmp/out" 2>&1
    check "$cmd on the imported plan ($(head -c 200 $tmp/out))" "[ \$? -eq 0 ]"
done
check "the picture was drawn" "[ -s $tmp/pp.svg ]"
check "the plan file records where its order came from" \
    "json $tmp/pp.json 'd[\"origin\"] == \"imported from $corpus/pp-1f1b-two-pids.json, step 0\"'"
"$bin" simulate "$tmp/pp.json" --json >"$tmp/j" 2>&1
check "simulate --json says it was imported" "json $tmp/j 'd[\"origin\"].startswith(\"imported from \")'"
"$bin" simulate "$tmp/pp.json" >"$tmp/out" 2>&1
check "simulate's header says it was imported" "grep -q '^order imported from .*pp-1f1b-two-pids.json, step 0' $tmp/out"
"$bin" simulate --model tiny --devices 2 --microbatches 2 --json >"$tmp/j" 2>&1
check "a generated plan has no origin" "json $tmp/j '\"origin\" not in d'"

"$bin" import "$corpus/pp-no-backward.json" -o "$tmp/bad.json" >"$tmp/out" 2>&1
check "a forward with no backward exits 2" "[ \$? -eq 2 ]"
check "... naming the device, the event and where it is ($(cat $tmp/out))" \
    "grep -q 'device 0: event 1 (FW, micro-batch 1, stage 0) at .*pp-no-backward.json:1:[0-9]*: the forward has no backward' $tmp/out"
"$bin" import "$corpus/pp-backwards-in-time.json" -o "$tmp/bad.json" >"$tmp/out" 2>&1
check "a dependency backwards in time exits 2" "[ \$? -eq 2 ]"
check "... and says so ($(cat $tmp/out))" "grep -q 'device 1: event 2 .*runs backwards in time' $tmp/out"
# PiPPy's measured form (tests/data: a bare array of B/E pairs, pids "RANK(host/pid)"): its
# rank 2 starts its forwards 72 us before rank 1's end, of 1 s ops; the clocks are put
# together (rank 2's 372 us), and the plan replays the trace's step time exactly
pippy=$src/tests/data/pippy-4stage-skewed.json
"$bin" import "$pippy" --model tiny -o "$tmp/pippy.json" --json >"$tmp/j" 2>&1
check "import PiPPy's 4-stage trace ($(head -c 300 $tmp/j))" "[ \$? -eq 0 ]"
check "4 devices, 4 stages, 2 micro-batches, 16 instructions, rank 2 shifted 372 us" \
    "json $tmp/j 'd[\"devices\"] == 4 and d[\"stages\"] == 4 and d[\"microbatches\"] == 2 and d[\"instructions\"] == 16 and abs(d[\"clock_shift_us\"] - 372) < 1e-6 and d[\"inversion_us\"] == 0'"
"$bin" simulate --model tiny --scheme GPipe --devices 4 --microbatches 2 \
    --plan-out "$tmp/gpipe4.json" >/dev/null
check "it is the fill-drain order PiPPy ran" "same_plan $tmp/gpipe4.json $tmp/pippy.json"
"$bin" compare "$tmp/pippy.json" "$pippy" --json >"$tmp/j" 2>&1
check "compare replays it ($(head -c 300 $tmp/j))" "[ \$? -eq 0 ]"
check "replayed with the measured durations: the measured 15.0018 s" \
    "json $tmp/j 'abs(d[\"step_time_measured_us\"] - 15001800) < 1 and abs(d[\"replay\"][\"step_time\"] - 15001800) < 1'"
"$bin" import "$corpus/ours-truncated.json" -o "$tmp/bad.json" >"$tmp/out" 2>&1
check "a truncated trace exits 2 ($(cat $tmp/out))" "[ \$? -eq 2 ] && grep -q 'truncated' $tmp/out"
"$bin" import "$corpus/pp-1f1b-two-pids.json" >"$tmp/out" 2>&1
check "-o is required" "[ \$? -eq 2 ]"

command -v mpirun >/dev/null 2>&1 || skip "no mpirun"
"$bin" optimize --model tiny --devices 2 --microbatches 4 --plan-out "$tmp/opt.json" >/dev/null
"$bin" run "$tmp/opt.json" --steps 3 --trace-out "$tmp/opt-run.json" >/dev/null 2>"$tmp/err"
check "a run of Mario's 1F1B ($(tail -c 300 $tmp/err))" "[ \$? -eq 0 ]"
"$bin" import "$tmp/opt-run.json" -o "$tmp/opt-imp.json" --json >"$tmp/j" 2>&1
check "import it ($(head -c 300 $tmp/j))" "[ \$? -eq 0 ]"
check "the plan that ran, instruction for instruction" "same_plan $tmp/opt.json $tmp/opt-imp.json"
check "with the config the run carried" "json $tmp/j 'd[\"ours\"] and d[\"config_from_trace\"]'"
"$bin" simulate --model tiny --scheme ZB-H1 --devices 2 --microbatches 4 \
    --plan-out "$tmp/zb.json" >/dev/null
"$bin" run "$tmp/zb.json" --steps 2 --trace-out "$tmp/zb-run.json" >/dev/null 2>"$tmp/err"
check "a run of ZB-H1 ($(tail -c 300 $tmp/err))" "[ \$? -eq 0 ]"
"$bin" import "$tmp/zb-run.json" -o "$tmp/zb-imp.json" >"$tmp/out" 2>&1
check "import it ($(head -c 300 $tmp/out))" "[ \$? -eq 0 ] && same_plan $tmp/zb.json $tmp/zb-imp.json"

[ $fail -eq 0 ] && echo "test_import: all passed"
exit $fail
