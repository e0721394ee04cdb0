#!/bin/sh
# tests/gpu/test_offload_gpu.sh: offload (OF/RL, issue 29) on the CUDA backend
# (exec/copy_cuda.cu: pinned host copies on one copy stream per direction, events for the
# backward). 1F1B on the tiny model, 2 and 4 ranks sharing the machine's GPUs, 8 micro-batches:
# the offloading plan of tests/mpi/offload_plan.py (an OF after every forward of every device
# but the last, an RL before its backward) on CUDA, against the same plan on the CPU backend
# (which trains bit for bit like the replay: tests/mpi/test_offload_run.sh) and against CUDA
# without offload. Within what tests/gpu/test_run_gpu.sh allows fp32 summed in another order:
# both steps' losses within 1e-4 (relative), one step's gradients within 1e-4 per tensor.
# Memory, as the CPU test holds it: each device's measured peak (the CUDA allocator's count)
# within 1 % of the simulated one beside four 16 KiB messages, the peak activations' drop from
# the CUDA baseline equal to the simulated drop within the same four messages, the pinned host
# bytes the copies held at once equal to the simulated host peak, none on the last device.
# Exits 77 (SKIP) without CUDA or a GPU, saying which.
set -u
bin=${MT_BIN:-./mario-tui}
helper=${top_builddir:-.}/tests/mpi/exec_ref
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run --model tiny --devices 1 --microbatches 2 --backend cuda --steps 1 >"$tmp/probe" 2>&1
case $(cat "$tmp/probe") in
*"built without CUDA"*) echo "SKIP: built without CUDA (configure found no nvcc/cudart/cublas)"; exit 77 ;;
*"no CUDA device"*) echo "SKIP: built with CUDA, but this machine has no CUDA device"; exit 77 ;;
esac
fail=0

# run NAME BACKEND PLAN STEPS: a run with its dumps and its JSON report
run() {
    mkdir "$tmp/$1"
    if ! "$bin" run "$3" --backend "$2" --steps "$4" --dump "$tmp/$1" --json >"$tmp/$1.json" \
        2>"$tmp/$1.err"; then
        echo "FAIL: $1: $(head -c 600 "$tmp/$1.err")"
        fail=1
        return 1
    fi
}

# grads NAME: the run's one-step gradients, stage after stage, as exec_ref cmp reads them
grads() {
    : >"$tmp/$1.all"
    for st in $(ls "$tmp/$1" | sed -n 's/^stage-\([0-9]*\)\.rank.*grad$/\1/p' | sort -u); do
        cat "$(ls "$tmp/$1"/stage-$st.rank-*.grad | head -1)" >>"$tmp/$1.all"
    done
}

for D in 2 4; do
    mkdir "$tmp/p$D"
    "$helper" plans 1F1B $D 8 1 "$tmp/p$D" || { echo "FAIL: plans 1F1B $D"; exit 1; }
    python3 "${top_srcdir:-.}/tests/mpi/offload_plan.py" "$tmp/p$D/base.json" "$tmp/p$D/of.json" ||
        { echo "FAIL: offload_plan.py"; exit 1; }
    run "cpu$D" cpu "$tmp/p$D/of.json" 2 &&
        run "base$D" cuda "$tmp/p$D/base.json" 2 &&
        run "of$D" cuda "$tmp/p$D/of.json" 2 &&
        run "cpu1$D" cpu "$tmp/p$D/of.json" 1 &&
        run "base1$D" cuda "$tmp/p$D/base.json" 1 &&
        run "of1$D" cuda "$tmp/p$D/of.json" 1 || continue
    for k in cpu1 base1 of1; do grads "$k$D"; done
    for ref in cpu1 base1; do
        out=$("$helper" cmp "$tmp/of1$D.all" "$tmp/$ref$D.all" 1e-4) ||
            { echo "FAIL: D=$D: gradients, CUDA offload against $ref: $out"; fail=1; }
        echo "D=$D: gradients, CUDA offload against $ref: $out"
    done
    python3 - "$tmp/cpu$D.json" "$tmp/base$D.json" "$tmp/of$D.json" "$D" <<'PY' || fail=1
import json, sys
cpu, base, of = (json.load(open(f)) for f in sys.argv[1:4])
D = sys.argv[4]
ok = True
for name, ref in (("CPU offload", cpu), ("CUDA baseline", base)):
    worst = max(abs(a - b) / abs(b) for a, b in zip(of["loss"], ref["loss"]))
    good = len(of["loss"]) == len(ref["loss"]) == 2 and worst <= 1e-4
    print("D=%s: losses %s against %s %s: worst relative difference %.2e%s"
          % (D, of["loss"], name, ref["loss"], worst, "" if good else "  FAIL"))
    ok = ok and good
for b, o in zip(base["devices"], of["devices"]):
    last = o["device"] == len(of["devices"]) - 1
    meas = o["peak_memory"]
    sim = o["simulated_static_memory"] + o["simulated_peak_activation_memory"]
    drop_m = b["peak_activation_memory"] - o["peak_activation_memory"]
    drop_s = b["simulated_peak_activation_memory"] - o["simulated_peak_activation_memory"]
    host, host_s = o["peak_host_memory"], o["simulated_host_memory"]
    good = (abs(meas - sim) <= 0.01 * sim + 4 * 16384 and abs(drop_m - drop_s) <= 4 * 16384
            and host == host_s and (host == 0) == last and (drop_s > 0 or last))
    print("D=%s device %d: peak %.0f KiB measured, %.0f simulated; activations drop %.0f KiB "
          "(simulated %.0f); pinned host %.0f KiB (simulated %.0f)%s"
          % (D, o["device"], meas / 1024, sim / 1024, drop_m / 1024, drop_s / 1024,
             host / 1024, host_s / 1024, "" if good else "  FAIL"))
    ok = ok and good
print("D=%s: step time %.2f ms with offload, %.2f ms without (CUDA)"
      % (D, of["step_time"] * 1e3, base["step_time"] * 1e3))
sys.exit(0 if ok else 1)
PY
done
exit $fail
