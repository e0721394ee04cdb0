#!/bin/sh
# tests/cli/test_profile.sh: `mario-tui profile` on the CPU executor, end to end: a small
# profile (2 layer counts x 1 device (dp 2) and 2 devices x 2 micro-batch counts x with and
# without checkpointing, 2 steps each) writes a calibration whose memory fits are exact (the
# executor's allocator is deterministic), every command takes it, and with it the simulated
# peak memory of a measured 1F1B run is within 1 %. Timings are reported, not asserted (this
# machine may be busy). Skips (77) without mpirun.
set -u
bin=${MT_BIN:-./mario-tui}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" profile --help >"$tmp/h" 2>&1
check "--help exits 0 and names --calibration" "[ \$? -eq 0 ] && grep -q -- '--calibration' $tmp/h"
"$bin" profile --layer-counts 0 >/dev/null 2>&1
check "a bad layer count is a usage error" "[ \$? -eq 2 ]"
"$bin" profile --backend tpu >/dev/null 2>&1
check "an unknown backend is a usage error" "[ \$? -eq 2 ]"

"$bin" profile --layer-counts 1,2 --mb-counts 2,3 --steps 2 --out "$tmp/cal.json" \
    --keep "$tmp/runs" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "profile exits 0 ($(tail -c 400 $tmp/err))" "[ $rc -eq 0 ]"
cat "$tmp/out"
check "the calibration records the device and the shape" \
    "json $tmp/cal.json 'd[\"format\"] == \"mario-calibration\" and d[\"device\"].startswith(\"cpu: \") and d[\"backend\"] == \"cpu\" and d[\"shape\"][\"hidden_size\"] == 64'"
check "forward, backward, recompute, optimizer, allreduce, memory, buffers and p2p are fitted" \
    "json $tmp/cal.json 'all(d[\"fits\"][k][\"points\"] > 0 for k in (\"fw_us\", \"bw_us\", \"rc_us\", \"os_us\", \"ar_us\", \"p2p_us\", \"act_bytes\", \"ckpt_bytes\", \"static_bytes\", \"msg_bytes\"))'"
check "a message buffer is one hidden state: 64 x 64 floats" \
    "json $tmp/cal.json 'd[\"fits\"][\"msg_bytes\"][\"b\"] == 16384'"
check "memory fits are exact (R^2 = 1)" \
    "json $tmp/cal.json 'all(d[\"fits\"][k][\"r2\"] > 0.999999 for k in (\"act_bytes\", \"static_bytes\"))'"
check "the runs are kept with --keep" "[ -s $tmp/runs/run-00.trace.json ] && [ -s $tmp/runs/run-15.plan.json ]"

"$bin" simulate --model tiny --devices 2 --microbatches 4 --plan-out "$tmp/p.json" >/dev/null
"$bin" run "$tmp/p.json" --steps 3 --trace-out "$tmp/run.json" >/dev/null 2>"$tmp/err"
check "a 1F1B run ($(tail -c 300 $tmp/err))" "[ \$? -eq 0 ]"
"$bin" compare "$tmp/p.json" "$tmp/run.json" --calibration "$tmp/cal.json" --json >"$tmp/j" \
    2>"$tmp/err"
check "compare --calibration exits 0 ($(head -c 300 $tmp/err))" "[ \$? -eq 0 ]"
check "calibrated peak memory within 1 %" "json $tmp/j 'd[\"peak_memory_error_pct\"] < 1.0'"
python3 -c "import json; d=json.load(open('$tmp/j')); print('calibrated 1F1B run: step-time error %.1f %%, peak memory error %.2f %%' % (d['step_time_error_pct'], d['peak_memory_error_pct']))"
"$bin" compare "$tmp/p.json" "$tmp/run.json" --json >"$tmp/j0" 2>/dev/null
check "without calibration the memory is further off" \
    "python3 -c 'import json,sys; a=json.load(open(\"$tmp/j0\")); b=json.load(open(\"$tmp/j\")); sys.exit(0 if a[\"peak_memory_error_pct\"] > b[\"peak_memory_error_pct\"] else 1)'"
for cmd in simulate optimize tune; do
    "$bin" $cmd --model tiny --devices 2 --microbatches 4 --calibration "$tmp/cal.json" \
        >/dev/null 2>"$tmp/err"
    rc=$?
    check "$cmd takes --calibration (rc $rc: $(head -c 200 $tmp/err))" "[ $rc -eq 0 ] || [ $rc -eq 1 ]"
done

[ $fail -eq 0 ] && echo "test_profile: all passed"
exit $fail
