#!/bin/sh
# tests/cli/test_compare.sh: `mario-tui compare` and --calibration end to end, with no executor:
# a plan against its own simulated trace (no error), against the same trace stretched by 5 %
# (error -4.76 %, gzip), --gate, --svg, a trace standing for the plan, a two-rank Kineto pair
# with a mapping file, a hand-made calibration whose step time is worked out by hand, and the
# errors (truncated and missing traces, bad mapping files, usage) with the file named.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 4 --plan-out "$tmp/p.json" \
    --trace-out "$tmp/sim.json" >/dev/null 2>&1
check "simulate writes a plan and a trace" "[ -s $tmp/p.json ] && [ -s $tmp/sim.json ]"

"$bin" compare "$tmp/p.json" "$tmp/sim.json" --json >"$tmp/j" 2>"$tmp/err"
check "plan vs its own trace exits 0 ($(head -c 300 $tmp/err))" "[ \$? -eq 0 ]"
check "json: no error, every instruction matched, per_device for 4 devices" \
    "json $tmp/j 'abs(d[\"step_time_error_pct\"]) < 1e-9 and d[\"peak_memory_error_pct\"] == 0 and len(d[\"per_device\"]) == 4 and d[\"matched\"] > 0 and d[\"missing\"] == 0 and \"FW\" in d[\"per_op\"]'"
"$bin" compare "$tmp/p.json" "$tmp/sim.json" >"$tmp/out" 2>&1
check "table names step time, devices, peak memory" \
    "grep -q 'step time: simulated' $tmp/out && grep -q 'peak memory MAPE' $tmp/out && grep -q '^device' $tmp/out"

# the same run, 5 % slower, as our executor would write it, gzip-compressed
python3 - "$tmp/sim.json" "$tmp/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    for k in ("ts", "dur"):
        if k in e:
            e[k] *= 1.05
d["otherData"]["source"] = "measured"
json.dump(d, open(sys.argv[2], "w"))
PY
gzip -k "$tmp/slow.json"
"$bin" compare "$tmp/p.json" "$tmp/slow.json.gz" --json >"$tmp/j" 2>"$tmp/err"
check "gzip trace exits 0 ($(head -c 300 $tmp/err))" "[ \$? -eq 0 ]"
check "5 % slower: step-time error -4.76 %, every scored op 4.76 % off" \
    "json $tmp/j 'abs(d[\"step_time_error_pct\"] + 100*0.05/1.05) < 1e-6 and abs(d[\"per_op\"][\"BW\"][\"mape_pct\"] - 100*0.05/1.05) < 1e-6'"
"$bin" compare "$tmp/p.json" "$tmp/slow.json.gz" --gate 3 >/dev/null 2>"$tmp/err"
check "--gate 3 fails with exit 1 and says why" "[ \$? -eq 1 ] && grep -q 'over the gate of 3' $tmp/err"
"$bin" compare "$tmp/p.json" "$tmp/slow.json.gz" --gate 10 --json >"$tmp/j" 2>/dev/null
check "--gate 10 passes" "[ \$? -eq 0 ] && json $tmp/j 'd[\"gate_passed\"] is True'"
"$bin" compare "$tmp/p.json" "$tmp/slow.json" --svg "$tmp/o.svg" >/dev/null 2>&1
check "--svg draws measured rows" "[ \$? -eq 0 ] && grep -q 'measured' $tmp/o.svg && grep -q 'data-id' $tmp/o.svg"
"$bin" compare "$tmp/sim.json" "$tmp/slow.json" --json >"$tmp/j" 2>"$tmp/err"
check "a simulated trace stands for its plan ($(head -c 300 $tmp/err))" \
    "[ \$? -eq 0 ] && json $tmp/j 'abs(d[\"step_time_error_pct\"] + 100*0.05/1.05) < 1e-6'"

# a PyTorch profiler pair, one file per rank, mapped by name; rank 1's clock 7 ms ahead
python3 - "$tmp" <<'PY'
import gzip, json, sys
tmp = sys.argv[1]
for r in (0, 1):
    ev, off = [], 7000.0 * r
    for step in range(3):
        t0 = step * 100000 + off
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": "host", "tid": 1, "ts": t0, "dur": 90000})
        for k, (n, at, dur) in enumerate([("fwd_mb0", 0, 1000), ("fwd_mb1", 2000, 1000),
                                          ("bwd_mb0", 20000, 2000), ("bwd_mb1", 30000, 2000)]):
            ev.append({"ph": "X", "cat": "user_annotation", "name": n, "pid": "host",
                       "tid": 1, "ts": t0 + 10 + r * 1000 + at, "dur": dur})
        ev.append({"ph": "X", "cat": "kernel", "pid": r, "tid": "stream 20", "ts": t0 + 40000,
                   "dur": 500, "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)"})
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": "host", "tid": 1,
                   "ts": t0 + 500, "args": {"Device Type": 1, "Device Id": r,
                                            "Total Allocated": 2 ** 20 * (5 + r)}})
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": r, "world_size": 2},
           "traceEvents": ev}
    if r == 0:
        json.dump(doc, open(tmp + "/k0.json", "w"))
    else:
        with gzip.open(tmp + "/k1.json.gz", "wt") as f:
            json.dump(ev, f)  # the bare-array form: no distributedInfo, so device by file
json.dump({"format": "mario-trace-map", "version": 1, "device": "file",
           "align": {"event": "^ncclDevKernel_AllReduce", "edge": "end"},
           "rules": [{"match": "^fwd_mb([0-9]+)$", "op": "FW", "mb": "$1"},
                     {"match": "^bwd_mb([0-9]+)$", "op": "BW", "mb": "$1"}]},
          open(tmp + "/map.json", "w"))
PY
"$bin" simulate --unit-costs 1,2,1 --devices 2 --microbatches 2 --plan-out "$tmp/p2.json" \
    >/dev/null 2>&1
"$bin" compare "$tmp/p2.json" "$tmp/k0.json" "$tmp/k1.json.gz" --map "$tmp/map.json" --json \
    >"$tmp/j" 2>"$tmp/err"
check "Kineto pair with a mapping exits 0 ($(head -c 300 $tmp/err))" "[ \$? -eq 0 ]"
check "Kineto pair: 8 instructions matched, FW 1000 us, memory per device" \
    "json $tmp/j 'd[\"matched\"] == 8 and abs(d[\"per_op\"][\"FW\"][\"measured_us\"] - 1000) < 1e-6 and d[\"per_device\"][1][\"peak_memory_measured\"] == 6 * 2**20 and d[\"measured\"][\"steps_used\"] == 2'"

# a calibration made by hand: 1 ms per layer forward, 2 ms backward, free p2p and optimizer;
# tiny has 8 layers, so 2 stages of 4: F = 4 ms, B = 8 ms, and 1F1B with 2 micro-batches
# takes F0 F1 | B0 after the last stage's B0 (16 ms) | B1 after its B1 (28 ms): 36 ms.
python3 - "$tmp/cal.json" <<'PY'
import json, sys
fit = lambda a, b=0: {"a": a, "b": b, "embed": 0, "head": 0, "r2": 1, "points": 4}
json.dump({"format": "mario-calibration", "version": 1, "device": "cpu: by hand",
           "backend": "cpu", "created": "2025-01-01T00:00:00Z",
           "shape": {"type": "GPT3", "hidden_size": 64, "num_attention_heads": 4,
                     "seq_length": 64, "vocab_size": 256, "ffn_hidden_size": 256,
                     "micro_batch_size": 1, "tp": 1},
           "fits": {"fw_us": fit(1000), "bw_us": fit(2000), "rc_us": fit(1000),
                    "os_us": fit(0), "p2p_us": fit(0)}}, open(sys.argv[1], "w"))
PY
"$bin" simulate --model tiny --devices 2 --microbatches 2 --calibration "$tmp/cal.json" --json \
    >"$tmp/j" 2>"$tmp/err"
check "--calibration: 36 ms by hand ($(head -c 300 $tmp/err))" \
    "[ \$? -eq 0 ] && json $tmp/j 'abs(d[\"step_time\"] - 0.036) < 1e-12'"
"$bin" optimize --model tiny --devices 2 --microbatches 4 --plan-out "$tmp/opt.json" >/dev/null 2>&1
"$bin" simulate "$tmp/opt.json" --calibration "$tmp/cal.json" --plan-out "$tmp/opt2.json" \
    >/dev/null 2>&1
check "a plan keeps its instructions under --calibration" \
    "python3 -c 'import json,sys; a=json.load(open(\"$tmp/opt.json\")); b=json.load(open(\"$tmp/opt2.json\")); sys.exit(0 if a[\"devices\"]==b[\"devices\"] and \"calibration\" in b[\"config\"] else 1)'"
"$bin" simulate "$tmp/opt2.json" --json >"$tmp/j2" 2>&1
"$bin" simulate "$tmp/opt.json" --calibration "$tmp/cal.json" --json >"$tmp/j3" 2>&1
check "a plan saved with a calibration simulates the same" \
    "python3 -c 'import json,sys; sys.exit(0 if json.load(open(\"$tmp/j2\"))[\"step_time\"] == json.load(open(\"$tmp/j3\"))[\"step_time\"] else 1)'"
echo '{"format": "mario-calibration", "version": 1, "shape": {}, "fits": {"fw_us": {"a": -1, "points": "x"}}}' >"$tmp/badcal.json"
"$bin" simulate --calibration "$tmp/badcal.json" >/dev/null 2>"$tmp/err"
check "a bad calibration exits 2 naming the file" "[ \$? -eq 2 ] && grep -q 'badcal.json' $tmp/err"

# errors name the file
head -c 700 "$tmp/slow.json" >"$tmp/cut.json"
"$bin" compare "$tmp/p.json" "$tmp/cut.json" >/dev/null 2>"$tmp/err"
check "truncated trace exits 2 naming the file" "[ \$? -eq 2 ] && grep -q 'cut.json:' $tmp/err && grep -q truncated $tmp/err"
head -c $(($(wc -c <"$tmp/slow.json.gz") / 2)) "$tmp/slow.json.gz" >"$tmp/cut.json.gz"
"$bin" compare "$tmp/p.json" "$tmp/cut.json.gz" >/dev/null 2>"$tmp/err"
check "truncated gzip fails naming the file" "[ \$? -ne 0 ] && grep -q 'cut.json.gz' $tmp/err"
"$bin" compare "$tmp/p.json" "$tmp/none.json" >/dev/null 2>"$tmp/err"
check "missing trace fails naming the file" "[ \$? -eq 2 ] && grep -q 'none.json' $tmp/err"
echo '{"rules": [{"match": "(", "op": "FW"}]}' >"$tmp/badmap.json"
"$bin" compare "$tmp/p2.json" "$tmp/k0.json" --map "$tmp/badmap.json" >/dev/null 2>"$tmp/err"
check "bad mapping exits 2 naming the file" "[ \$? -eq 2 ] && grep -q 'badmap.json' $tmp/err && grep -q 'regular expression' $tmp/err"
"$bin" compare "$tmp/p2.json" "$tmp/k0.json" --json >"$tmp/j" 2>"$tmp/err"
check "without a mapping a profiler trace gives step time only (NCCL AllReduce kept)" \
    "[ \$? -eq 0 ] && json $tmp/j 'd[\"matched\"] == 0 and d[\"extra\"] == 2 and d[\"step_time_measured_us\"] > 0'"
"$bin" compare "$tmp/p.json" >/dev/null 2>&1
check "one argument is a usage error" "[ \$? -eq 2 ]"
"$bin" compare --help >"$tmp/h" 2>&1
check "--help lists --gate and --map" "[ \$? -eq 0 ] && grep -q -- '--gate' $tmp/h && grep -q -- '--map' $tmp/h"

# a simulated trace stands for its plan with the config it carries (otherData.config): its
# degrees and lengths, not the default's (issue 41: compare TRACE TRACE printed pp 2 x dp 1, 1024)
"$bin" simulate --model Llama-3.1-8B --device H100-80G --devices 8 --dp 2 --tp 2 --seq-length 4096 \
    --microbatches 8 --trace-out "$tmp/ta.json" >/dev/null 2>&1
"$bin" simulate --model Llama-3.1-8B --device H100-80G --devices 8 --dp 2 --tp 2 --seq-length 4096 \
    --microbatches 8 --scheme GPipe --trace-out "$tmp/tb.json" >/dev/null 2>&1
"$bin" compare "$tmp/ta.json" "$tmp/tb.json" >"$tmp/o" 2>&1
check "compare TRACE TRACE: the first trace's plan keeps pp 2 x dp 2 x tp 2 and 4096 tokens" \
    "[ \$? -eq 0 ] && grep -q 'V, pp 2 x dp 2 x tp 2, 8 micro-batches of 1 x 4096 tokens (from its trace)' $tmp/o"

[ $fail -eq 0 ] && echo "test_compare: all passed"
exit $fail
