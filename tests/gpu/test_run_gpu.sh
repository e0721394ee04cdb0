#!/bin/sh
# tests/gpu/test_run_gpu.sh: `mario-tui run` on a GPU: the CUDA backend (cuBLAS model, MPI
# with host staging) with 1, 2 and 4 ranks sharing the machine's GPUs (several pipeline
# devices on one GPU run as several ranks on it), V, X and W plans against the sequential
# CPU reference within 1e-4 per tensor (fp32, other summation orders), an offloading V plan
# (OF/RL on the copy streams) on 2 and 4 ranks the same way, and NCCL with one
# rank and, when there are at least 2 GPUs, with 2. Exits 77 (SKIP) without CUDA or a GPU.
set -u
bin=${MT_BIN:-./mario-tui}
helper=${top_builddir:-.}/tests/mpi/exec_ref
data=${top_srcdir:-.}/data/corpus.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run --model tiny --devices 1 --microbatches 2 --backend cuda --steps 1 >"$tmp/probe" 2>&1
case $(cat "$tmp/probe") in
*"built without CUDA"*) echo "SKIP: built without CUDA"; exit 77 ;;
*"no CUDA device"*) echo "SKIP: no CUDA device"; exit 77 ;;
esac
fail=0
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c GPU)
mkdir "$tmp/ref"
"$helper" ref 8 1 "$data" "$tmp/ref" || exit 1

# run NAME BACKEND PLAN: one step, gradients against the CPU reference within 1e-4
run() {
    mkdir "$tmp/$1"
    start=$(date +%s.%N)
    if ! "$bin" run "$3" --backend "$2" --steps 1 --dump "$tmp/$1" --json >"$tmp/$1.json" \
        2>"$tmp/$1.err"; then
        echo "FAIL: $1: $(head -c 600 "$tmp/$1.err")"
        fail=1
        return
    fi
    : >"$tmp/$1.all"
    for st in $(ls "$tmp/$1" | sed -n 's/^stage-\([0-9]*\)\.rank.*grad$/\1/p' | sort -u); do
        cat "$(ls "$tmp/$1"/stage-$st.rank-*.grad | head -1)" >>"$tmp/$1.all"
    done
    out=$("$helper" cmp "$tmp/$1.all" "$tmp/ref/grad" 1e-4) || { echo "FAIL: $1: $out"; fail=1; }
    python3 - "$tmp/$1.json" "$1" "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("%s: loss %.6f, step %.2f ms, peak memory %s; %s" % (sys.argv[2], d["loss"][0],
      d["step_time"] * 1e3, ", ".join("%.1f MiB" % (m / 2**20) for m in d["peak_memory"]),
      sys.argv[3].split(": ", 1)[1]))
PY
}

for s in V X W; do
    for D in 1 2 4; do
        [ $s = X ] && [ $D = 1 ] && continue
        [ $s = W ] && [ $D = 1 ] && continue
        mkdir -p "$tmp/p$s$D"
        "$helper" plans $s $D 8 1 "$tmp/p$s$D" || { echo "FAIL: plans"; exit 1; }
        run "cuda-$s-$D-base" cuda "$tmp/p$s$D/base.json"
        run "cuda-$s-$D-opt" cuda "$tmp/p$s$D/opt.json"
    done
done
# offload (OF/RL, issue 29): pinned host copies on the copy streams; the gradients as above,
# and the devices that offload report the pinned host bytes they held
for D in 2 4; do
    python3 "${top_srcdir:-.}/tests/mpi/offload_plan.py" "$tmp/pV$D/base.json" "$tmp/of$D.json" &&
        run "cuda-V-$D-offload" cuda "$tmp/of$D.json"
    [ -f "$tmp/cuda-V-$D-offload.json" ] && python3 -c "import json, sys
d = json.load(open('$tmp/cuda-V-$D-offload.json'))['devices']
sys.exit(0 if all((x['peak_host_memory'] > 0) == (x['device'] < $D - 1) for x in d) else 1)" ||
        { echo "FAIL: cuda-V-$D-offload: host memory of the offloading devices"; fail=1; }
done
mkdir -p "$tmp/pn1" "$tmp/pn2"
"$helper" plans V 1 8 1 "$tmp/pn1" && run nccl-V-1 nccl "$tmp/pn1/base.json"
if [ "$ngpu" -ge 2 ]; then
    "$helper" plans V 2 8 1 "$tmp/pn2" && run nccl-V-2 nccl "$tmp/pn2/base.json"
fi
exit $fail
