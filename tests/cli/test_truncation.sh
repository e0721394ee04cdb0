#!/bin/sh
# tests/cli/test_truncation.sh: hostile input, truncation sweep (issue 9; docs/design.md "Conventions": a fuzz corpus per input format). Every
# example config, a plan file per scheme (V, X, W, GPipe) and a simulated Chrome trace, cut
# at every k-th byte, are given to `mario-tui simulate FILE`; when `mario-tui compare` exists,
# the simulated trace, a measured one and a Kineto trace (from tests/fuzz/corpus/) are cut
# the same way and given to it as the measured trace. Each cut must end with exit status 2
# and a message that starts "mario-tui CMD: FILE" - never a crash (a signal, status >= 128,
# or a sanitizer report), never a hang (timeout), never success.
# The other input formats are cut the same way, each where its command reads it (samples
# from tests/fuzz/corpus/ where the repository has no example): a calibration
# (`simulate --calibration`, message "mario-tui simulate: --calibration: FILE"), a mapping
# file (`compare --map`), a chart spec (`chart`), a gzip-compressed trace (`compare`: status 1
# for a stream cut short, 2 for a stream whose JSON is cut) and data/lengths.txt
# (`plan-inputs --lengths`: a lengths file cut between two numbers is still a lengths file,
# so status 0 is allowed there too).
# k is chosen per file for about $CUTS cuts (odd, so that cuts fall on varied bytes); the
# last cut is one byte short of the closing brace (of the end, for files that are not JSON).
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
CUTS=${CUTS:-16}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=0

# A plan per scheme and a trace, made by the binary under test (small, unit costs).
mk() { # name, flags...
    name=$1
    shift
    if ! "$bin" simulate --unit-costs 1,2,1 "$@" --plan-out "$tmp/plan-$name.json" \
        >/dev/null 2>"$tmp/err"; then
        echo "FAIL: cannot make the $name plan: $(cat "$tmp/err")"
        fail=1
    fi
}
mk v --scheme V --devices 4 --microbatches 8
mk x --scheme X --devices 4 --microbatches 8
mk w --scheme W --devices 4 --chunks 2 --microbatches 8
mk gpipe --scheme GPipe --devices 4 --microbatches 8
"$bin" simulate --unit-costs 1,2,1 --scheme X --devices 4 --microbatches 4 \
    --trace-out "$tmp/trace.json" >/dev/null 2>&1 || { echo "FAIL: cannot make a trace"; fail=1; }

# sweep_x ALLOWED PREFIX FILE [CMD ARGS...]: cuts FILE at every k-th byte into $tmp/cut.json
# and runs `mario-tui CMD ARGS... $tmp/cut.json` on each (default: simulate). ALLOWED lists
# the exit statuses accepted ("2", "0 2"); a failure's message must start
# "mario-tui CMD: PREFIX$tmp/cut.json" (PREFIX names the flag, e.g. "--calibration: ").
sweep_x() {
    allowed=$1 prefix=$2 f=$3
    shift 3
    [ $# -gt 0 ] || set -- simulate
    cmd=$1
    base=$(basename "$f")
    # Bytes up to and including the last '}' (a complete document is not a cut).
    end=$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().rstrip()))' "$f")
    k=$((end / CUTS))
    k=$((k | 1))
    bad=0
    for len in $(seq 0 "$k" $((end - 2))) $((end - 1)); do
        head -c "$len" "$f" >"$tmp/cut.json"
        timeout 10 "$bin" "$@" "$tmp/cut.json" >/dev/null 2>"$tmp/err"
        rc=$?
        runs=$((runs + 1))
        why=""
        if [ "$rc" -eq 124 ]; then
            why="hang (killed after 10 s)"
        elif [ "$rc" -ge 128 ]; then
            why="crash (signal $((rc - 128)))"
        elif ! echo " $allowed " | grep -q " $rc "; then
            why="exit status $rc, not $allowed"
        elif grep -q -e 'Sanitizer' -e 'runtime error' "$tmp/err"; then
            why="sanitizer report"
        elif [ "$rc" -ne 0 ] &&
            ! head -n 1 "$tmp/err" | grep -q -F "mario-tui $cmd: $prefix$tmp/cut.json"; then
            why="message does not name the file"
        elif [ "$rc" -ne 0 ] && ! head -n 1 "$tmp/err" | grep -q "^mario-tui $cmd: "; then
            why="message does not start with the command"
        fi
        if [ -n "$why" ]; then
            bad=$((bad + 1))
            [ "$bad" -le 3 ] &&
                echo "FAIL: $base cut to $len bytes: $why: $(head -c 300 "$tmp/err")"
        fi
    done
    [ "$bad" -eq 0 ] || fail=1
    echo "$base ($cmd): $end bytes, cut every $k: $bad bad"
}
# sweep FILE [CMD ARGS...]: the same, exit status 2 and a message naming the file first.
sweep() { sweep_x 2 "" "$@"; }

for f in "$src"/examples/*.json "$tmp"/plan-*.json "$tmp"/trace.json; do
    [ -f "$f" ] && sweep "$f"
done
# Traces as `compare`'s measured run, beside the plan they were made from.
if "$bin" compare --help >/dev/null 2>&1; then
    corpus="$src/tests/fuzz/corpus"
    if "$bin" simulate --unit-costs 1,2,1 --scheme X --devices 4 --microbatches 4 \
        --plan-out "$tmp/x4.json" >/dev/null 2>&1 &&
        "$bin" simulate --model tiny --devices 2 --microbatches 2 --plan-out "$tmp/v2.json" \
            >/dev/null 2>&1; then
        sweep "$tmp/trace.json" compare "$tmp/x4.json"
        sweep "$corpus/chrome/run-v-tiny-2dev-2steps.json" compare "$tmp/v2.json"
        sweep "$corpus/kineto/rank0-object.json" compare "$tmp/v2.json"
    else
        echo "FAIL: cannot make the plans to compare with"
        fail=1
    fi
fi
# The other formats, where their commands read them.
corpus="$src/tests/fuzz/corpus"
sweep_x 2 "--calibration: " "$corpus/calibration/tiny-cpu-no-observations.json" \
    simulate --model tiny --devices 2 --microbatches 2 --calibration
if "$bin" chart --help >/dev/null 2>&1; then
    sweep "$corpus/chart/async-comparison-bars.json" chart -o "$tmp/chart.svg"
    sweep "$corpus/chart/async-loss-lines.json" chart -o "$tmp/chart.svg"
fi
if "$bin" plan-inputs --help >/dev/null 2>&1; then
    # tiny with positions for data/lengths.txt's longest batch (1024 tokens)
    printf '{"model": {"preset": "tiny", "seq_length": 1024}, "num_device": 2,\n %s\n' \
        '"micro_batch_size": 2, "num_microbatches": 4, "global_batch_size": 8}' >"$tmp/tiny.json"
    sweep_x "0 2" "" "$src/data/lengths.txt" plan-inputs "$tmp/tiny.json" --lengths
fi
if "$bin" compare --help >/dev/null 2>&1 && [ -f "$tmp/v2.json" ]; then
    sweep "$corpus/mapping/docs-traces-example.json" compare "$tmp/v2.json" \
        "$corpus/kineto/rank0-object.json" --map
    sweep_x "1 2" "" "$corpus/gzip/run-v-tiny-2dev-2steps.json.gz" compare "$tmp/v2.json"
fi
echo "$runs cut files run"
exit $fail
