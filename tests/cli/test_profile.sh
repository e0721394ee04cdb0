#!/bin/sh
# tests/cli/test_profile.sh: `mario-tui profile` on the CPU executor, end to end: a small
# profile (2 layer counts x 1 device (dp 2) and 2 devices x 2 micro-batch counts x with and
# without checkpointing, 2 steps each, odd micro-batches' backwards split) writes a
# calibration whose memory fits are exact (the executor's allocator is deterministic), B, W
# and W's kept bytes included; every command takes it, and with it the simulated peak memory
# of a measured 1F1B run and of a ZB-H1 run is within 1 %. `profile --from-trace`: a
# torch-style trace (F = 100 us, B = 200 us on 4 layers a stage, 20 us between stages) gives
# 25 and 50 us a layer and a 20 us p2p latency, and the device of its deviceProperties; our
# ZB-H1 run gives B, W and W's bytes. Timings are reported, not asserted (this machine may be
# busy). The executor's part skips (77) without mpirun.
set -u
bin=${MT_BIN:-./mario-tui}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

# --from-trace on a torch-style trace: one file per rank, clocks 1 s apart, two steps
python3 - "$tmp" <<'PYEOF'
import json, sys
d = sys.argv[1]
F, B, L = 100.0, 200.0, 20.0
t = {'0F0': (0, F), '0F1': (F, 2 * F), '1F0': (F + L, 2 * F + L), '1B0': (2 * F + L, 2 * F + L + B),
     '1F1': (2 * F + L + B, 3 * F + L + B)}
t['0B0'] = (t['1B0'][1] + L, t['1B0'][1] + L + B)
t['1B1'] = (t['1F1'][1], t['1F1'][1] + B)
t['0B1'] = (max(t['0B0'][1], t['1B1'][1] + L), max(t['0B0'][1], t['1B1'][1] + L) + B)
for r in (0, 1):
    ev = []
    for k in (0, 1):
        base = 1.7e12 + r * 1e6 + k * 5000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1,
                   "tid": 1, "ts": base - 10, "dur": 2000})
        for a, (s, e) in t.items():
            if a[0] == str(r):
                ev.append({"ph": "X", "cat": "user_annotation", "name": "PP:" + a, "pid": 1,
                           "tid": 1, "ts": base + s, "dur": e - s})
    json.dump({"distributedInfo": {"rank": r}, "deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
               "traceEvents": ev}, open("%s/pp%d.json" % (d, r), "w"))
PYEOF
"$bin" profile --from-trace "$tmp/pp0.json" "$tmp/pp1.json" --model tiny --out "$tmp/pp-cal.json" \
    >"$tmp/out" 2>&1
check "profile --from-trace a torch-style trace ($(head -c 300 $tmp/out))" "[ \$? -eq 0 ]"
check "25 us a layer forward, 50 backward (4 layers a stage), 20 us p2p, the A100 named" \
    "json $tmp/pp-cal.json 'abs(d[\"fits\"][\"fw_us\"][\"a\"] - 25) < 1e-9 and abs(d[\"fits\"][\"bw_us\"][\"a\"] - 50) < 1e-9 and abs(d[\"fits\"][\"p2p_us\"][\"b\"] - 20) < 1e-9 and d[\"device\"] == \"NVIDIA A100-SXM4-80GB\"'"
"$bin" profile "$tmp/pp0.json" "$tmp/pp1.json" >/dev/null 2>&1
check "traces without --from-trace are a usage error" "[ \$? -eq 2 ]"

# --from-nccl-tests: nccl-tests' output as it prints it (tests/data/nccl-tests/); the figures
# checked are read off the files' text (all_reduce line 28: 8388608 bytes, busbw 279.25)
nt=${top_srcdir:-.}/tests/data/nccl-tests
"$bin" profile --from-nccl-tests "$nt/all_reduce_perf-h100x8.txt" \
    "$nt/all_gather_perf-h100x16-2nodes.txt" -o "$tmp/nt.json" >"$tmp/out" 2>&1
check "profile --from-nccl-tests two files ($(head -c 300 $tmp/out))" "[ \$? -eq 0 ]"
check "14 + 11 rows, 8 MiB all-reduce busbw 279.25, the 2-host all-gather on the network, no fits" \
    "json $tmp/nt.json 'len(d[\"micro\"][\"collectives\"]) == 25 and [r[\"busbw_gbps\"] for r in d[\"micro\"][\"collectives\"] if r[\"collective\"] == \"all_reduce\" and r[\"bytes\"] == 8388608] == [279.25] and {r[\"link\"] for r in d[\"micro\"][\"collectives\"] if r[\"collective\"] == \"all_gather\"} == {\"network\"} and \"shape\" not in d and d[\"device\"] == \"NVIDIA H100 80GB HBM3\"'"
check "the summary names the collective, ranks and hosts" \
    "grep -q 'all_reduce_perf, 8 ranks on 1 host (nvlink), 14 rows' $tmp/out && grep -q '16 ranks on 2 hosts (network)' $tmp/out"
"$bin" simulate --calibration "$tmp/nt.json" >/dev/null 2>&1
check "a calibration of tables alone loads in simulate" "[ \$? -eq 0 ]"
"$bin" profile --from-nccl-tests "$nt/all_gather_perf-2.13-a100x16.txt" -o "$tmp/x.json" >"$tmp/out" 2>&1
check "nccl-tests 2.13 without --collective: exit 2, asking for it" \
    "[ \$? -eq 2 ] && grep -q 'all_gather_perf-2.13-a100x16.txt: cannot tell the collective' $tmp/out && grep -q -- '--collective' $tmp/out"
"$bin" profile --from-nccl-tests "$nt/all_gather_perf-2.13-a100x16.txt" --collective all_gather \
    --in-place -o "$tmp/x.json" >/dev/null 2>&1
check "with --collective all_gather --in-place" "[ \$? -eq 0 ] && json $tmp/x.json 'len(d[\"micro\"][\"collectives\"]) == 11'"
head -25 "$nt/all_reduce_perf-h100x8.txt" >"$tmp/cut.txt"
"$bin" profile --from-nccl-tests "$tmp/cut.txt" -o "$tmp/x.json" >"$tmp/out" 2>&1
check "a truncated file: exit 2 naming FILE:LINE" \
    "[ \$? -eq 2 ] && grep -q 'cut.txt:25: the file ends before' $tmp/out"
"$bin" profile --from-nccl-tests "$nt/all_reduce_perf-h100x8.txt" "$nt/all_reduce_perf-h100x8.txt" \
    -o "$tmp/x.json" >"$tmp/out" 2>&1
check "one file twice: exit 2 naming both rows" \
    "[ \$? -eq 2 ] && grep -q 'the same collective, link, size and ranks as' $tmp/out"
"$bin" profile --collective all_reduce >/dev/null 2>&1
check "--collective without --from-nccl-tests is a usage error" "[ \$? -eq 2 ]"

command -v mpirun >/dev/null 2>&1 || skip "no mpirun"

# --micro, short: sgemm on a 2 x 2 x 2 grid, copies of 4 KiB to 256 KiB, the four MPI
# collectives on 2 and 3 ranks from 1 KiB to 256 KiB (about 10 s on a busy 2-core machine)
t0=$(date +%s)
"$bin" profile --micro --gemm-sizes 32,128 --ranks 2,3 --max-bytes 256K --seconds 0.005 \
    -o "$tmp/micro.json" >"$tmp/out" 2>"$tmp/err"
check "profile --micro ($(tail -c 300 $tmp/err))" "[ \$? -eq 0 ]"
echo "profile --micro: $(($(date +%s) - t0)) s"
check "8 fp32 GEMM rows, 4 copies, 4 collectives x 5 sizes x 2 rank counts, every rate > 0" \
    "json $tmp/micro.json 'len(d[\"micro\"][\"gemm\"]) == 8 and {r[\"dtype\"] for r in d[\"micro\"][\"gemm\"]} == {\"fp32\"} and len(d[\"micro\"][\"hbm\"]) == 4 and len(d[\"micro\"][\"collectives\"]) == 40 and {r[\"ranks\"] for r in d[\"micro\"][\"collectives\"]} == {2, 3} and all(r[\"tflops\"] > 0 for r in d[\"micro\"][\"gemm\"]) and all(r[\"busbw_gbps\"] > 0 for r in d[\"micro\"][\"collectives\"]) and d[\"backend\"] == \"cpu\"'"
check "progress on stderr, the tables on stdout" \
    "grep -q 'sgemm 128x128x128' $tmp/err && grep -q 'all_to_all, 3 ranks (nvlink)' $tmp/out"
"$bin" profile --micro --ranks 1 >/dev/null 2>&1
check "--ranks 1 is a usage error" "[ \$? -eq 2 ]"

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
check "forward, backward, recompute, B, W, optimizer, allreduce, memory, buffers and p2p are fitted" \
    "json $tmp/cal.json 'all(d[\"fits\"][k][\"points\"] > 0 for k in (\"fw_us\", \"bw_us\", \"rc_us\", \"b_us\", \"w_us\", \"os_us\", \"ar_us\", \"p2p_us\", \"act_bytes\", \"ckpt_bytes\", \"static_bytes\", \"msg_bytes\", \"w_keep_bytes\"))'"
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
# ZB-H1: its memory with the measured W bytes; its own trace calibrates B and W
"$bin" simulate --model tiny --scheme ZB-H1 --devices 2 --microbatches 4 --plan-out "$tmp/zb.json" \
    >/dev/null
"$bin" run "$tmp/zb.json" --steps 3 --trace-out "$tmp/zb-run.json" >/dev/null 2>"$tmp/err"
check "a ZB-H1 run ($(tail -c 300 $tmp/err))" "[ \$? -eq 0 ]"
"$bin" compare "$tmp/zb.json" "$tmp/zb-run.json" --calibration "$tmp/cal.json" --json >"$tmp/j" \
    2>"$tmp/err"
check "calibrated ZB-H1 peak memory within 1 % ($(head -c 200 $tmp/err))" \
    "json $tmp/j 'd[\"peak_memory_error_pct\"] < 1.0'"
"$bin" profile --from-trace "$tmp/zb-run.json" --out "$tmp/zb-cal.json" >"$tmp/out" 2>&1
check "profile --from-trace our ZB-H1 run ($(head -c 300 $tmp/out))" "[ \$? -eq 0 ]"
check "B, W, W's bytes and p2p fitted from it" \
    "json $tmp/zb-cal.json 'all(d[\"fits\"][k][\"points\"] > 0 for k in (\"fw_us\", \"b_us\", \"w_us\", \"bw_us\", \"p2p_us\", \"w_keep_bytes\"))'"
check "W's bytes the same as the profile's" \
    "python3 -c 'import json,sys; a=json.load(open(\"$tmp/cal.json\"))[\"fits\"][\"w_keep_bytes\"]; b=json.load(open(\"$tmp/zb-cal.json\"))[\"fits\"][\"w_keep_bytes\"]; n=4; sys.exit(0 if abs((a[\"a\"]*n+a[\"b\"]+a[\"head\"]) - (b[\"a\"]*n+b[\"b\"]+b[\"head\"])) < 1 else 1)'"
for cmd in simulate optimize tune; do
    "$bin" $cmd --model tiny --devices 2 --microbatches 4 --calibration "$tmp/cal.json" \
        >/dev/null 2>"$tmp/err"
    rc=$?
    check "$cmd takes --calibration (rc $rc: $(head -c 200 $tmp/err))" "[ $rc -eq 0 ] || [ $rc -eq 1 ]"
done

[ $fail -eq 0 ] && echo "test_profile: all passed"
exit $fail
