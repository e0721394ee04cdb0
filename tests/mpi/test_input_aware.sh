#!/bin/sh
# tests/mpi/test_input_aware.sh: input-aware checkpointing on the executor (issue 12). The tiny
# model on 2 ranks (1F1B, 4 micro-batches) trains on 520 batches of 4 to 64 tokens (a fixed
# pseudo-random sequence) under a memory cap halfway between full checkpointing's and no
# checkpointing's peak at the longest batch (the executor's exact bytes, `plan-inputs
# --exec-bytes`). `mario-tui run --lengths FILE --input-aware` must keep every batch's
# measured peak under the cap on both devices, switch plans, hit and miss its plan cache, and
# its memory predictor, fitted on the first 10 batches, must predict every later batch's peak
# per device within 2 %. Also: bad lengths files and a cap no plan meets are refused (exit 2)
# naming the file and line, or the length and the bytes over.
set -u
bin=${MT_BIN:-./mario-tui}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

cat >"$tmp/tiny.json" <<'EOF'
{
  "pipeline_scheme": "V",
  "global_batch_size": 4,
  "micro_batch_size": 1,
  "num_device": 2,
  "model": {"preset": "tiny", "max_position_embeddings": 64, "seq_length": 64},
  "cluster": {"device_name": "CPU", "peak_flops": "50G", "efficiency": 0.3, "memory": "2GiB",
              "hbm_gbps": 20, "p2p_gbps": 5, "p2p_latency_us": 5, "allreduce_gbps": 5}
}
EOF
# 520 lengths in [4, 64]: a linear congruential sequence, the same on every machine
awk 'BEGIN { x = 12345; for (i = 0; i < 520; i++) { x = (x * 1103515245 + 12345) % 2147483648;
     print 4 + int(x / 2147483648 * 61) } }' >"$tmp/len.txt"

# bad input
: >"$tmp/empty.txt"
printf '12\n3x\n' >"$tmp/word.txt"
printf '12\n# a comment\n65\n' >"$tmp/long.txt"
"$bin" run "$tmp/tiny.json" --lengths "$tmp/empty.txt" --input-aware >/dev/null 2>"$tmp/err"
check "an empty lengths file exits 2 naming it" "[ \$? -eq 2 ] && grep -q 'empty.txt: no lengths' $tmp/err"
"$bin" run "$tmp/tiny.json" --lengths "$tmp/word.txt" --input-aware >/dev/null 2>"$tmp/err"
check "a non-numeric length exits 2 naming file and line" \
    "[ \$? -eq 2 ] && grep -q \"word.txt:2:1: '3x' is not a length\" $tmp/err"
"$bin" run "$tmp/tiny.json" --lengths "$tmp/long.txt" --input-aware >/dev/null 2>"$tmp/err"
check "a length beyond the positions exits 2 naming file and line" \
    "[ \$? -eq 2 ] && grep -q \"long.txt:3:1: length 65 is beyond the model's largest position (64\" $tmp/err"
"$bin" run "$tmp/tiny.json" --lengths "$tmp/len.txt" --input-aware --memory 4M >/dev/null \
    2>"$tmp/err"
check "a cap no plan meets exits 2 naming the length and the bytes over" \
    "[ \$? -eq 2 ] && grep -q 'no checkpointing plan fits a batch of 64 tokens' $tmp/err && grep -q 'bytes) over the 4.00 MiB cap' $tmp/err"
"$bin" run --model tiny --input-aware >/dev/null 2>"$tmp/err"
check "--input-aware without --lengths exits 2" "[ \$? -eq 2 ]"

# the cap: halfway at the longest batch, with the executor's own bytes
"$bin" plan-inputs "$tmp/tiny.json" --lengths "$tmp/len.txt" --memory 1T --exec-bytes --json \
    >"$tmp/free.json" || { echo "FAIL: plan-inputs --exec-bytes"; exit 1; }
cap=$(python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["buckets"][-1]
print(int((b["full_checkpointing"]["peak_memory"] + b["peak_memory"]) / 2))' "$tmp/free.json")

start=$(date +%s)
"$bin" run "$tmp/tiny.json" --lengths "$tmp/len.txt" --input-aware --bucket 8 --memory "$cap" \
    --json >"$tmp/j" 2>"$tmp/err"
rc=$?
took=$(($(date +%s) - start))
[ $rc -eq 0 ] || { echo "FAIL: input-aware run exited $rc: $(head -c 600 "$tmp/err")"; exit 1; }
python3 - "$tmp/j" "$cap" "$took" "$tmp/free.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
ia, cap = d["input_aware"], int(sys.argv[2])
devs = ia["devices"]
print("input-aware run: %d batches of %d-%d tokens in %s s, cap %d B; plan switches %d, cache "
      "%d hits / %d misses; peak per device %s; predictor error %.3f %% max, %.3f %% mean"
      % (ia["batches"], ia["min_length"], ia["max_length"], sys.argv[3], cap,
         ia["plan_switches"], ia["cache"]["hits"], ia["cache"]["misses"],
         ", ".join("%d" % x["peak_memory"] for x in devs), 100 * ia["predictor"]["error_max"],
         100 * ia["predictor"]["error_mean"]))
bad = []
if ia["batches"] < 500 or len(d["loss"]) != ia["batches"]:
    bad.append("batches %d, losses %d" % (ia["batches"], len(d["loss"])))
if ia["memory_cap"] != cap:
    bad.append("cap %s" % ia["memory_cap"])
if ia["exceeded_cap"] or ia["steps_over_cap"] != 0:
    bad.append("%d steps over the cap" % ia["steps_over_cap"])
for x in devs:
    if not 0 < x["peak_memory"] <= cap:
        bad.append("device %d peak %d" % (x["device"], x["peak_memory"]))
    if x["predicted_steps"] != ia["batches"] - 10:
        bad.append("device %d: %d predicted steps" % (x["device"], x["predicted_steps"]))
if len(devs) != 2 or ia["peak_memory"] != max(x["peak_memory"] for x in devs):
    bad.append("devices %r" % devs)
if ia["plan_switches"] < 1:
    bad.append("no plan switch")
if ia["cache"]["misses"] < 2 or ia["cache"]["hits"] < 1:
    bad.append("cache %r" % ia["cache"])
if ia["cache"]["hits"] + ia["cache"]["misses"] + 10 != ia["batches"]:
    bad.append("cache gets %r for %d batches after the 10 fit batches" % (ia["cache"], ia["batches"]))
if not ia["predictor"]["error_max"] <= 0.02:
    bad.append("predictor error %.4f" % ia["predictor"]["error_max"])
# checkpointing was chosen per batch: the run holds more than full checkpointing would
full = json.load(open(sys.argv[4]))["buckets"][-1]
if not ia["peak_memory"] > full["full_checkpointing"]["peak_memory"]:
    bad.append("peak %d not above full checkpointing's %d"
               % (ia["peak_memory"], full["full_checkpointing"]["peak_memory"]))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
exit $fail
