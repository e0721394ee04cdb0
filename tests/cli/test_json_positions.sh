#!/bin/sh
# tests/cli/test_json_positions.sh: every reader's semantic errors name FILE:LINE:COL and the
# JSON path of the offending key or value (issue 16: one strict reader, util/json.h). One bad
# file per reader, under tests/data/bad/, each checked for its exact first line of stderr:
# a plan, a plan's embedded config, a calibration, a trace mapping, a chart spec, a config.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
bad=$src/tests/data/bad
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=0

# expect WHAT RC MESSAGE CMD...: runs CMD, which must exit RC with MESSAGE as its stderr's
# first line.
expect() {
    what=$1 want_rc=$2 want=$3
    shift 3
    runs=$((runs + 1))
    "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    got=$(head -n 1 "$tmp/err")
    if [ "$rc" -ne "$want_rc" ] || [ "$got" != "$want" ]; then
        echo "FAIL: $what: exit $rc, stderr '$got' (expected exit $want_rc, '$want')"
        fail=1
    fi
}

expect "plan: mb a string on line 7" 2 \
    "mario-tui simulate: $bad/plan-mb-string.json:7:18: devices[0][0].mb: expected an integer, got string \"x\"" \
    "$bin" simulate "$bad/plan-mb-string.json"
expect "plan: its config's cluster.dp a string" 2 \
    "mario-tui simulate: $bad/plan-config-dp.json:5:26: config.cluster.dp: expected an integer, got string \"two\"" \
    "$bin" simulate "$bad/plan-config-dp.json"
expect "calibration: a fit term a string" 2 \
    "mario-tui simulate: --calibration: $bad/calibration-term-string.json:7:23: fits.fw_us.b: expected a finite number, got string \"fast\"" \
    "$bin" simulate --devices 4 --microbatches 4 --calibration "$bad/calibration-term-string.json"
expect "config: an unknown key" 2 \
    "mario-tui simulate: $bad/unknown-key.json:5:5: cluster.p2p_gbs: unknown key (did you mean 'p2p_gbps'?)" \
    "$bin" simulate "$bad/unknown-key.json"

if "$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 \
    --plan-out "$tmp/plan.json" --trace-out "$tmp/trace.json" >/dev/null 2>&1; then
    expect "mapping: a stage that is not whole" 2 \
        "mario-tui compare: $bad/mapping-stage-fraction.json:5:35: rules[1].stage: expected an integer, got 1.5" \
        "$bin" compare "$tmp/plan.json" "$tmp/trace.json" --map "$bad/mapping-stage-fraction.json"
else
    echo "FAIL: cannot make a plan and a trace"
    fail=1
fi

if "$bin" chart --help >/dev/null 2>&1; then
    expect "chart: a value that is a string" 2 \
        "mario-tui chart: $bad/chart-value-string.json:5:45: panels[0].series[0].values[1]: expected a finite number or null, got string \"two\"" \
        "$bin" chart "$bad/chart-value-string.json" -o "$tmp/x.png"
fi

echo "test_json_positions: $runs runs"
[ "$runs" -ge 5 ] || { echo "FAIL: only $runs runs"; fail=1; }
exit $fail
