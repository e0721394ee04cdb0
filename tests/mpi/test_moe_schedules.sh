#!/bin/sh
# tests/mpi/test_moe_schedules.sh: the MoE block (tiny-moe: 4 layers, 4 experts, top-2) under
# 1F1B (V), interleaved 1F1B (W, 2 chunks) and DualPipeV with ep 2 (pp 2 x dp 2 = 4 ranks; ep
# folds into dp: a device's two replicas are its ep group, docs/moe.md). Two steps each.
# Bit for bit across the three schedules: the loss of both steps, and after step 2 every
# rank's gradients and parameters (each rank's stages in stage order: the model's flat order,
# whatever the split). Why equal: a stage's gradient sums its micro-batches' contributions in
# ascending micro-batch order under all three (V and W run BWs in that order; DualPipeV's Ws
# too, and a MoE layer's own gradients are added in its B, also in that order); the MoE
# exchange's rows come in a fixed order (source rank, then token), so no sum depends on
# timing; the allreduce over ep adds two parts, which commutes. Against ep 1 (pp 2, dp 1, the
# same 8 micro-batches one replica reads): the loss of step 1 within 1e-6 relative (the same
# samples, summed in another order) and of step 2 within 1e-4 (one AdamW step from gradients
# that differ by rounding). Plus: the run reports its all-to-all (4 exchanges a MoE layer and
# micro-batch: 2 layers x 4 micro-batches x 4 = 32 per rank and step) and memory beside the
# simulation, and refuses what the block does not run.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
common="--model tiny-moe --pp 2 --microbatches 4 --steps 2"

for sc in V W DualPipeV; do
    mkdir "$tmp/$sc"
    if ! "$bin" run $common --scheme $sc --dp 2 --ep 2 --dump "$tmp/$sc" --json \
        >"$tmp/$sc.json" 2>"$tmp/$sc.err"; then
        echo "FAIL: $sc: run failed: $(head -c 600 "$tmp/$sc.err")"
        fail=1
        continue
    fi
    # per dp replica (rank = replica * pp + device): its stages' dumps in stage order
    for kind in grad param; do
        for r in 0 1; do
            : >"$tmp/$sc.$kind.$r"
            for f in $(ls "$tmp/$sc" | grep "\.$kind\$" | sort); do
                rank=$(echo "$f" | sed 's/.*rank-0*\([0-9][0-9]*\)\..*/\1/')
                [ $((rank / 2)) -eq $r ] && cat "$tmp/$sc/$f" >>"$tmp/$sc.$kind.$r"
            done
        done
    done
    python3 - "$tmp/$sc.json" "$sc" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); sc = sys.argv[2]
print("%s: loss %s; step %.2f ms, simulated %.2f ms" % (sc, [repr(x) for x in d["loss"]],
      1e3 * d["step_time"], 1e3 * d["simulated_step_time"]))
bad = 0
for dv in d["devices"]:
    print("  rank %d: a2a %d exchanges, %.0f bytes, %.3f ms (simulated %.3f ms); peak %.0f B "
          "(simulated %.0f B)" % (dv["rank"], dv["a2a_exchanges"], dv["a2a_bytes"],
          1e3 * dv["a2a_time"], 1e3 * dv["simulated_a2a_time"], dv["peak_memory"],
          dv["simulated_static_memory"] + dv["simulated_peak_activation_memory"]))
    # 2 MoE layers a stage (V: 2 layers a device; W, DualPipeV: 2 stages of 1 layer), 4
    # micro-batches, 4 exchanges each, 2 steps
    if dv["a2a_exchanges"] != 2 * 4 * 4 * 2:
        print("FAIL: %s rank %d: %d exchanges, expected 64" % (sc, dv["rank"], dv["a2a_exchanges"]))
        bad = 1
    if not (dv["a2a_bytes"] > 0 and dv["a2a_time"] > 0 and dv["simulated_a2a_time"] > 0):
        print("FAIL: %s rank %d: no all-to-all measured or simulated" % (sc, dv["rank"]))
        bad = 1
sys.exit(bad)
PY
done

ref=$(python3 -c "import json; print(repr(json.load(open('$tmp/V.json'))['loss']))" 2>/dev/null)
for sc in W DualPipeV; do
    got=$(python3 -c "import json; print(repr(json.load(open('$tmp/$sc.json'))['loss']))" 2>/dev/null)
    [ "$got" = "$ref" ] || { echo "FAIL: $sc: losses $got, V's $ref"; fail=1; }
    for kind in grad param; do
        for r in 0 1; do
            if ! [ -s "$tmp/$sc.$kind.$r" ] || ! cmp -s "$tmp/V.$kind.$r" "$tmp/$sc.$kind.$r"; then
                echo "FAIL: $sc: replica $r's ${kind}s differ from V's"
                fail=1
            fi
        done
    done
done
# the replicas hold different experts: their dumps must differ (the experts are not reduced)
cmp -s "$tmp/V.param.0" "$tmp/V.param.1" && { echo "FAIL: the two ep ranks hold the same parameters"; fail=1; }

# ep 1: the same samples on one replica
if "$bin" run --model tiny-moe --pp 2 --microbatches 8 --steps 2 --json >"$tmp/ep1.json" 2>"$tmp/ep1.err"; then
    python3 - "$tmp/ep1.json" "$tmp/V.json" <<'PY' || fail=1
import json, sys
a = json.load(open(sys.argv[1]))["loss"]; b = json.load(open(sys.argv[2]))["loss"]
r1, r2 = abs(a[0] - b[0]) / abs(a[0]), abs(a[1] - b[1]) / abs(a[1])
print("ep 1: loss %r %r; relative to ep 2: %.2g, %.2g" % (a[0], a[1], r1, r2))
sys.exit(0 if r1 < 1e-6 and r2 < 1e-4 else 1)
PY
else
    echo "FAIL: ep 1: $(head -c 600 "$tmp/ep1.err")"
    fail=1
fi

# the trace carries the exchanges ("ep_a2a" events) and compare lays them beside the simulation:
# 2 MoE layers x 4 micro-batches x 4 = 32 exchanges a device and step, bytes measured
"$bin" simulate --model tiny-moe --pp 2 --microbatches 4 --scheme V --dp 2 --ep 2 \
    --plan-out "$tmp/plan.json" >/dev/null 2>&1
if "$bin" run "$tmp/plan.json" --steps 2 --trace-out "$tmp/trace.json" >/dev/null 2>"$tmp/tr.err" &&
    "$bin" compare "$tmp/plan.json" "$tmp/trace.json" >"$tmp/cmp.out" 2>"$tmp/cmp.err"; then
    sed -n '/^all-to-all a step/,$p' "$tmp/cmp.out"
    rows=$(awk '/^all-to-all a step/ {on = 1; next} on && $1 ~ /^[0-9]+$/ && $2 == 32 && $NF != "0" {n++} END {print n + 0}' "$tmp/cmp.out")
    [ "$rows" = 2 ] || { echo "FAIL: compare: all-to-all rows $rows, expected 2 devices of 32 exchanges"; fail=1; }
    "$bin" compare "$tmp/plan.json" "$tmp/trace.json" --json 2>/dev/null | python3 -c '
import json, sys
a = json.load(sys.stdin).get("all_to_all", [])
ok = len(a) == 2 and all(x["exchanges"] == 32 and x["measured_us"] > 0 and x["sim_us"] > 0 and
                         x["measured_bytes"] > 0 for x in a)
sys.exit(0 if ok else 1)' || { echo "FAIL: compare --json: all_to_all"; fail=1; }
else
    echo "FAIL: trace + compare: $(head -c 600 "$tmp/tr.err" "$tmp/cmp.err")"
    fail=1
fi

# refusals: ep without dp, ep beside a different dp, the CUDA backend
refuse() {
    why=$1
    shift
    if "$bin" run "$@" >/dev/null 2>"$tmp/refuse.err"; then
        echo "FAIL: ran: $*"
        fail=1
    elif ! grep -qE "$why" "$tmp/refuse.err"; then
        echo "FAIL: $*: $(cat "$tmp/refuse.err"), expected '$why'"
        fail=1
    fi
}
refuse "set --ep equal to --dp" --model tiny-moe --pp 2 --dp 2 --microbatches 4 --steps 1
refuse "cpu backend only|[Cc][Uu][Dd][Aa]" --model tiny-moe --pp 2 --dp 2 --ep 2 --microbatches 4 --backend cuda --steps 1
refuse "has no experts" --model tiny-llama --pp 2 --dp 2 --ep 2 --microbatches 4 --steps 1
# a variable-length run checkpoints (CFW + RC), which would repeat the exchange
printf '32\n48\n64\n40\n' >"$tmp/lengths"
refuse "checkpointing a MoE stage" --model tiny-moe --pp 2 --dp 2 --ep 2 --microbatches 4 \
    --steps 2 --lengths "$tmp/lengths"

[ $fail = 0 ] && echo "PASS: tiny-moe at ep 2 under V, W and DualPipeV"
exit $fail
