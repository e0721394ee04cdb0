#!/bin/sh
# tests/cli/test_error_names_file.sh: every command's error names the input file it is about
# (issue 9, docs/design.md "messages name the place"). Each command that exists (simulate,
# optimize, tune, export, explore, run, plan-inputs, profile, compare, import, chart) is given hostile
# inputs in each place it reads a file (CONFIG or PLAN, --plan, --calibration, --lengths,
# compare's simulation, measured trace and --map, chart's spec) - a missing file, a directory,
# an empty file, binary garbage, malformed JSON, a bad value, a cut plan, a plan whose
# geometry disagrees with its config, a plan that deadlocks - and must exit non-zero (2 for a
# file it could read but not accept or one that is not there, 1 or 2 for a plan that cannot
# run), never crash or hang, and print a message that names the file.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=0

# Inputs: NAME and the exit statuses allowed.
mkdir "$tmp/a-directory.json"
: >"$tmp/empty.json"
head -c 1024 /dev/urandom >"$tmp/garbage.json"
printf '{"num_device": 4,\n "pipeline_scheme": }\n' >"$tmp/malformed.json"
printf '{"num_device": 8,\n "cluster": {"dp": 3}}\n' >"$tmp/bad-value.json"
if "$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 --plan-out "$tmp/plan.json" \
    >/dev/null 2>&1; then
    head -c 1000 "$tmp/plan.json" >"$tmp/cut-plan.json"
    "$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 --trace-out "$tmp/trace.json" \
        >/dev/null 2>&1
    python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
p = json.load(open(d + "/plan.json"))
g = json.loads(json.dumps(p)); g["geometry"]["stages"] = 3
json.dump(g, open(d + "/geometry-plan.json", "w"))
q = json.loads(json.dumps(p)); dev = q["devices"][1]; dev[0], dev[1] = dev[1], dev[0]
json.dump(q, open(d + "/deadlock-plan.json", "w"))
PY
else
    echo "FAIL: cannot make a plan"
    fail=1
fi
inputs="no-such-file.json:2 a-directory.json:2 empty.json:2 garbage.json:2 malformed.json:2
        bad-value.json:2 cut-plan.json:2 geometry-plan.json:2 deadlock-plan.json:12"

# cmd_ok CMD [FLAG]: the command exists (and its --help mentions FLAG).
cmd_ok() { "$bin" "$1" --help 2>/dev/null | grep -q -e "${2:-Usage}"; }

# expect CMD INPUT ALLOWED ARGS...: runs the command; ARGS carry the file.
expect() {
    cmd=$1 in=$2 allowed=$3
    shift 3
    timeout 30 "$bin" "$cmd" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    runs=$((runs + 1))
    why=""
    if [ "$rc" -eq 124 ]; then
        why="hang (killed after 30 s)"
    elif [ "$rc" -ge 128 ]; then
        why="crash (signal $((rc - 128)))"
    elif [ "$rc" -eq 0 ]; then
        why="exit 0"
    elif ! echo "$allowed" | grep -q "$rc"; then
        why="exit $rc (expected one of: $(echo "$allowed" | sed 's/./& /g'))"
    elif grep -q -e 'Sanitizer' -e 'runtime error' "$tmp/err"; then
        why="sanitizer report"
    elif ! grep -q "$tmp/$in" "$tmp/err"; then
        why="the message does not name the file"
    fi
    if [ -n "$why" ]; then
        echo "FAIL: mario-tui $cmd ... $in: $why: $(head -c 300 "$tmp/err")"
        fail=1
    fi
}

for cmd in simulate optimize tune export explore run plan-inputs profile compare import chart; do
    cmd_ok "$cmd" || continue
    for spec in $inputs; do
        in=${spec%%:*}
        allowed=${spec#*:}
        if [ "$cmd" = simulate ] && cmd_ok simulate --calibration; then
            expect simulate "$in" 12 "$tmp/plan.json" --calibration "$tmp/$in"
        fi
        case $cmd in
        export)
            expect export "$in" "$allowed" "$tmp/$in" -o "$tmp/x.svg"
            expect export "$in" "$allowed" --plan "$tmp/$in" -o "$tmp/x.svg"
            ;;
        explore) expect explore "$in" "$allowed" "$tmp/$in" --dump-screen ;;
        tune)
            # The tuner searches from a plan's config, not its instructions.
            [ "$in" = deadlock-plan.json ] && continue
            expect tune "$in" "$allowed" "$tmp/$in"
            ;;
        plan-inputs)
            expect plan-inputs "$in" "$allowed" "$tmp/$in"
            expect plan-inputs "$in" 12 --lengths "$tmp/$in"
            ;;
        profile)
            # Anything it accepted would start the executor: only inputs it must refuse.
            [ "$in" = deadlock-plan.json ] && continue
            expect profile "$in" "$allowed" "$tmp/$in"
            ;;
        compare)
            expect compare "$in" "$allowed" "$tmp/$in" "$tmp/trace.json"
            expect compare "$in" 12 "$tmp/plan.json" "$tmp/$in"
            expect compare "$in" 12 "$tmp/plan.json" "$tmp/trace.json" --map "$tmp/$in"
            ;;
        chart) expect chart "$in" 12 "$tmp/$in" -o "$tmp/x.png" ;;
        import)
            # a plan is not a trace: every input here is one import must refuse
            expect import "$in" "$allowed" "$tmp/$in" -o "$tmp/x.json"
            expect import "$in" 12 "$tmp/trace.json" --map "$tmp/$in" -o "$tmp/x.json"
            ;;
        *) expect "$cmd" "$in" "$allowed" "$tmp/$in" ;;
        esac
    done
done
echo "$runs runs"
exit $fail
