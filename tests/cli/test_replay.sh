#!/bin/sh
# tests/cli/test_replay.sh: `compare` replays our own short CPU runs (issue 19): 1F1B, Chimera
# and ZB-H1 on 2 ranks, 1F1B on 4 ranks (two a core), a few steps each. The replay (every
# instruction and every message as measured) must be the run to within 0.5 %: the simulator
# then waits for exactly what the executor waited for, so a miss is a dependency, an order or a
# clock the two disagree on. The replay with one p2p latency is reported, not asserted (a busy
# machine's late waits move it). A simulated trace replays to its own step time. Skips (77)
# without mpirun.
set -u
bin=${MT_BIN:-./mario-tui}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

# a simulation's trace stands for a run: its replay is its step time (no executor needed)
"$bin" simulate --scheme W --devices 4 --microbatches 8 --plan-out "$tmp/w.json" \
    --trace-out "$tmp/w-trace.json" >/dev/null
"$bin" compare "$tmp/w.json" "$tmp/w-trace.json" --json >"$tmp/j" 2>"$tmp/err"
check "compare a W plan with its own trace ($(head -c 200 $tmp/err))" "[ \$? -eq 0 ]"
check "its replay is its step time" \
    "json $tmp/j 'abs(d[\"replay\"][\"step_time\"] - d[\"step_time_measured_us\"]) < 1e-6 * d[\"step_time_measured_us\"] and len(d[\"replay\"][\"per_device\"]) == 4'"
"$bin" compare "$tmp/w.json" "$tmp/w-trace.json" >"$tmp/txt" 2>&1
check "the text report has the replayed row" "grep -q '^replayed with the measured durations: ' $tmp/txt"

# --cores, like --calibration, changes the costs of a plan file, not its instructions
"$bin" optimize --devices 4 --microbatches 8 --plan-out "$tmp/opt.json" >/dev/null
"$bin" simulate "$tmp/opt.json" --cores 2 --plan-out "$tmp/opt2.json" >/dev/null 2>&1
check "a plan file keeps its instructions under --cores" \
    "python3 -c 'import json,sys; a=json.load(open(\"$tmp/opt.json\")); b=json.load(open(\"$tmp/opt2.json\")); sys.exit(0 if a[\"devices\"] == b[\"devices\"] else 1)'"

command -v mpirun >/dev/null 2>&1 || skip "no mpirun"
run_case() { # NAME RANKS PLAN FLAGS...
    name=$1
    shift
    "$bin" simulate --model tiny "$@" --plan-out "$tmp/$name.json" >/dev/null 2>"$tmp/err" ||
        { check "$name: plan ($(head -c 200 $tmp/err))" false; return; }
    "$bin" run "$tmp/$name.json" --steps 5 --trace-out "$tmp/$name-run.json" >/dev/null \
        2>"$tmp/err"
    check "$name: the run ($(tail -c 300 $tmp/err))" "[ \$? -eq 0 ]"
    "$bin" compare "$tmp/$name.json" "$tmp/$name-run.json" --json >"$tmp/$name-j" 2>"$tmp/err"
    check "$name: compare ($(head -c 200 $tmp/err))" "[ \$? -eq 0 ]"
    check "$name: the replay is the run (within 0.5 %)" \
        "json $tmp/$name-j 'abs(d[\"replay\"][\"step_time_error_pct\"]) < 0.5'"
    check "$name: a p2p latency was measured" \
        "json $tmp/$name-j 'd[\"replay\"][\"one_latency\"][\"p2p_latency_us\"] > 0 and d[\"replay\"][\"one_latency\"][\"p2p_latency_samples\"] > 0'"
    python3 -c "import json; r=json.load(open('$tmp/$name-j'))['replay']; o=r['one_latency']; print('$name: replay %+.3f %%, with one latency %+.2f %% (p2p latency %.1f us)' % (r['step_time_error_pct'], o['step_time_error_pct'], o['p2p_latency_us']))"
}
run_case v2 --devices 2 --microbatches 4
run_case x2 --scheme X --devices 2 --microbatches 4
run_case zbh1 --scheme ZB-H1 --devices 2 --microbatches 4
run_case v4 --devices 4 --microbatches 4

[ $fail -eq 0 ] && echo "test_replay: all passed"
exit $fail
