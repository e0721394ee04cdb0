#!/bin/sh
# scripts/accuracy.sh: remakes docs/accuracy.md, the simulator's accuracy against the CPU
# executor (issues 8 and 19; the paper's §6.6 reports 9.4 % step-time and 5.1 % peak-memory
# MAPE). Fidelity is taken apart into its two questions (issue 19):
#   (i)   the schedule model: each run replayed with its own measured durations (`compare`'s
#         replay): does the simulated timeline reproduce the run?
#   (ii)  the cost model, op by op: the calibrated prediction of each op type against the
#         medians the runs measured, with each op's spread;
#   (iii) step time, calibrated, and the ranking of the configs (Kendall tau), with the configs
#         run in interleaved rounds (A B C ... A B C ...) so that the machine's drift hits every
#         config alike, and the spread of identical runs stated as the noise floor;
#   and peak memory (the executor's counting allocator: exact).
# The configs: the schemes (1F1B, Chimera, interleaved, GPipe, ZB-H1) as the scheme makes
# them (base), with every forward checkpointed (ckpt) and after Mario's four passes (opt), on 2
# ranks and on 4 (two a core on a 2-core machine: processor sharing, sim/core/share.h), with
# micro-batches of 1 and 2 samples. Each round profiles the machine first (`mario-tui
# profile`, one calibration per micro-batch size; the calibration is the median of the rounds'
# coefficients) and then runs every config once.
# Usage: scripts/accuracy.sh [--quick] [--model tiny|large] [OUT]
#   OUT defaults to docs/accuracy.md (docs/accuracy-large.md with --model large); --quick: 4
#   configs, 2 rounds, a small profile (CI: tests/cli/test_accuracy.sh). --model large: a GPT of
#   hidden 128, sequence 128, 16 layers, whose forwards and backwards last 4-13 ms (the tiny
#   model's ops last 0.1-2 ms, where a preemption is as long as an op).
#   Environment: MT_BIN (default ./mario-tui), MT_ACCURACY_ROUNDS (3), MT_ACCURACY_STEPS (40
#   tiny, 12 large), MT_ACCURACY_IDLE=PCT and MT_ACCURACY_WAIT=S (wait up to S s, default
#   600, before each round for the CPUs to be PCT % idle), MT_ACCURACY_KEEP=DIR (keep the
#   plans, traces, calibrations and comparisons there). Needs python3 and mpirun. Figures
#   are what this machine measured: a loaded machine measures noise.
set -eu
bin=${MT_BIN:-./mario-tui}
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
model=tiny
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --model) model=$2; shift 2 ;;
    *) break ;;
    esac
done
case $model in
tiny) out=${1:-$top/docs/accuracy.md}; steps=${MT_ACCURACY_STEPS:-40} ;;
large) out=${1:-$top/docs/accuracy-large.md}; steps=${MT_ACCURACY_STEPS:-12} ;;
*) echo "accuracy: --model tiny or large" >&2; exit 2 ;;
esac
rounds=${MT_ACCURACY_ROUNDS:-3}
if [ -n "${MT_ACCURACY_KEEP:-}" ]; then # keep the runs, plans and calibrations there
    tmp=$MT_ACCURACY_KEEP
    mkdir -p "$tmp"
    rm -f "$tmp/ran"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

[ -x "$bin" ] || { echo "accuracy: no binary at $bin (build first, or set MT_BIN)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "accuracy: needs python3" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "accuracy: needs mpirun (apt-get install openmpi-bin)" >&2; exit 2; }

# The share of the CPUs idle over one second: what the machine's other work leaves.
idle_pct() {
    a=$(head -n 1 /proc/stat 2>/dev/null); sleep 1; b=$(head -n 1 /proc/stat 2>/dev/null)
    echo "$a $b" | awk '{ n = (NF - 2) / 2; t = 0; for (i = 2; i <= n + 1; i++) t += $(i + n + 1) - $i;
        idle = $(5 + n + 1) - $5 + $(6 + n + 1) - $6; if (t > 0) printf "%.0f", 100 * idle / t;
        else print "nan" }'
}
want_idle=${MT_ACCURACY_IDLE:-0}
max_wait=${MT_ACCURACY_WAIT:-600}
wait_idle() {
    idle=$(idle_pct)
    waited=1
    while [ "$want_idle" -gt 0 ] && [ "$idle" != nan ] && [ "$idle" -lt "$want_idle" ] &&
          [ "$waited" -lt "$max_wait" ]; do
        idle=$(idle_pct)
        waited=$((waited + 1))
    done
}

# The model: the tiny preset, or the larger one as a config file.
if [ "$model" = tiny ]; then
    base="--model tiny"
    layers=8
    prof="--layer-counts 1,2,4 --mb-counts 2,4 --steps 8"
else
    cat >"$tmp/large.json" <<'EOF'
{"model": {"type": "GPT3", "hidden_size": 128, "num_layers": 16, "num_attention_heads": 4,
           "seq_length": 128, "vocab_size": 512, "ffn_hidden_size": 512}}
EOF
    base="$tmp/large.json"
    layers=16
    prof="--layer-counts 2,4,8 --mb-counts 2,4 --steps 4"
fi
if [ $quick -eq 1 ]; then
    ranks="2 4"; schemes="V GPipe"; variants="base opt"; sizes="1"; steps=4; rounds=2
    prof="--layer-counts 2,4 --mb-counts 2,3 --steps 3"
elif [ "$model" = tiny ]; then
    ranks="2 4"; schemes="V X W GPipe ZB-H1"; variants="base ckpt opt"; sizes="1 2"
else
    ranks="2 4"; schemes="V X GPipe ZB-H1"; variants="base opt"; sizes="1"
fi

# pass 1 as the optimizer applies it: FW -> CFW, an RC right before each BW
ckpt() {
    python3 - "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for dev in p["devices"]:
    out = []
    for i in dev:
        if i["op"] == "FW":
            i["op"] = "CFW"
        elif i["op"] == "BW":
            rc = {k: v for k, v in i.items() if k != "peer"}
            rc["op"] = "RC"
            out.append(rc)
        out.append(i)
    dev[:] = out
json.dump(p, open(sys.argv[2], "w"))
PY
}

# The configs and their plans.
: >"$tmp/list"
for pp in $ranks; do
    for scheme in $schemes; do
        for mbs in $sizes; do
            for variant in $variants; do
                # the split backward's schemes have no RC for a B: base only
                case $scheme in ZB-*) [ "$variant" = base ] || continue ;; esac
                name="$scheme-$variant-pp$pp-mbs$mbs"
                flags="$base --devices $pp --scheme $scheme --microbatches $((2 * pp)) --micro-batch-size $mbs --chunks 2"
                # shellcheck disable=SC2086
                case $variant in
                base) "$bin" simulate $flags --plan-out "$tmp/$name.plan.json" >/dev/null ;;
                ckpt) "$bin" simulate $flags --plan-out "$tmp/base.json" >/dev/null
                      ckpt "$tmp/base.json" "$tmp/$name.plan.json" ;;
                opt)  "$bin" optimize $flags --plan-out "$tmp/$name.plan.json" >/dev/null || [ $? -eq 1 ] ;;
                esac
                echo "$name $pp $scheme $variant $mbs" >>"$tmp/list"
            done
        done
    done
done
total=$(wc -l <"$tmp/list")
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
start=$(date +%s)

# The rounds: the profiles, then every config once, in the same order each round.
: >"$tmp/idle"
r=1
while [ $r -le "$rounds" ]; do
    wait_idle
    echo "round $r $idle" >>"$tmp/idle"
    for mbs in $sizes; do
        # shellcheck disable=SC2086
        "$bin" profile $base --micro-batch-size "$mbs" $prof --out "$tmp/cal-mbs$mbs-r$r.json" \
            >"$tmp/profile-mbs$mbs-r$r.txt" 2>"$tmp/profile-mbs$mbs-r$r.err" ||
            { echo "accuracy: profile failed: $(tail -c 300 "$tmp/profile-mbs$mbs-r$r.err")" >&2; exit 1; }
        echo "accuracy: round $r of $rounds: profiled micro-batch size $mbs" >&2
    done
    n=0
    while read -r name pp scheme variant mbs; do
        n=$((n + 1))
        if "$bin" run "$tmp/$name.plan.json" --steps "$steps" \
            --trace-out "$tmp/$name.trace-$r.json" </dev/null >"$tmp/$name.run-$r.txt" 2>&1; then
            echo "$name $r ok" >>"$tmp/ran"
        else
            echo "$name $r failed" >>"$tmp/ran"
            echo "accuracy: $name round $r FAILED: $(tail -n 1 "$tmp/$name.run-$r.txt")" >&2
        fi
        printf '\raccuracy: round %d of %d: %d of %d configs ' "$r" "$rounds" "$n" "$total" >&2
    done <"$tmp/list"
    echo >&2
    r=$((r + 1))
done
secs=$(($(date +%s) - start))

# The calibration of a size: each fit's coefficients, the median over the rounds.
for mbs in $sizes; do
    python3 - "$tmp" "$mbs" "$rounds" <<'PY'
import json, statistics, sys
tmp, mbs, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cals = [json.load(open("%s/cal-mbs%s-r%d.json" % (tmp, mbs, r))) for r in range(1, rounds + 1)]
out = cals[0]
for key, fit in out["fits"].items():
    for coef in ("a", "b", "embed", "head", "r2"):
        if coef in fit:
            fit[coef] = statistics.median(c["fits"][key][coef] for c in cals if key in c["fits"])
out.pop("observations", None)
json.dump(out, open("%s/cal-mbs%s.json" % (tmp, mbs), "w"), indent=1)
PY
done

# Every run beside its simulation: calibrated (its replay with it), calibrated without
# processor sharing (4-rank configs), analytic (the first round).
while read -r name pp scheme variant mbs; do
    r=1
    while [ $r -le "$rounds" ]; do
        if grep -q "^$name $r ok" "$tmp/ran"; then
            "$bin" compare "$tmp/$name.plan.json" "$tmp/$name.trace-$r.json" --json </dev/null \
                --calibration "$tmp/cal-mbs$mbs.json" >"$tmp/$name.cal-$r.json" 2>/dev/null ||
                echo "accuracy: $name: compare failed" >&2
            "$bin" compare "$tmp/$name.plan.json" "$tmp/$name.trace-$r.json" --json </dev/null \
                --calibration "$tmp/cal-mbs$mbs.json" --cores 1024 >"$tmp/$name.noshare-$r.json" \
                2>/dev/null || true
            [ $r -eq 1 ] && { "$bin" compare "$tmp/$name.plan.json" "$tmp/$name.trace-1.json" \
                --json </dev/null >"$tmp/$name.analytic.json" 2>/dev/null || true; }
        fi
        r=$((r + 1))
    done
    # the calibrated cost model's own durations (a core each), for the ops one by one
    "$bin" simulate "$tmp/$name.plan.json" --calibration "$tmp/cal-mbs$mbs.json" --cores 1024 \
        --trace-out "$tmp/$name.sim.json" </dev/null >/dev/null 2>&1 || true
done <"$tmp/list"

version=$("$bin" --version)
load1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
cores=$(nproc 2>/dev/null || echo '?')
command=scripts/accuracy.sh
[ $quick -eq 1 ] && command="$command --quick"
[ "$model" = large ] && command="$command --model large"
:
python3 "$top/scripts/accuracy_report.py" "$tmp" "$out" "$version" "$steps" "$rounds" "$model" \
    "$load0 $load1 $cores" "$sizes" "$want_idle $max_wait" "$secs" "$command"
