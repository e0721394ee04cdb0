#!/bin/sh
# scripts/accuracy.sh: remakes docs/accuracy.md, the simulator's accuracy against the executor
# (issue 8; the paper's §6.6 reports 9.4 % step-time and 5.1 % peak-memory MAPE). On the CPU
# backend it runs, for 2 and 4 ranks, the schemes V, X, W and GPipe, each as base (the
# scheme), ckpt (pass 1: every forward checkpointed) and opt (all of Mario's passes), with
# micro-batches of 1 and 2 samples (48 configs of the tiny model); each for a few steps
# (`mario-tui run --trace-out`), compared with its simulation (`mario-tui compare --json`)
# without and with a calibration made first on the same machine (`mario-tui profile`, one per
# micro-batch size, over the layer counts per stage the configs have). It reports each config,
# the MAPE of step time and of peak memory per device, and the Kendall tau between the
# simulated and the measured ranking of the configs, for the 2-rank configs (no more ranks
# than cores on a 2-core machine: what the goal is measured on) and the 4-rank ones apart, and
# the share of the CPUs idle before each.
# Each config runs $MT_ACCURACY_RUNS times (default 3, --quick 1): its measured step time is
# the median over the runs of each run's median step (the calibration takes medians too), and
# the table gives the spread of the runs and the error against the runs' mean steps. Each
# calibration is the per-coefficient median of $MT_ACCURACY_PROFILE_ROUNDS profiles (default 3,
# --quick 1), taken in rounds over the micro-batch sizes spread over the study (before the
# first config, and so on evenly), and every comparison is made once all runs are done: this
# machine has slow stretches of 0.1-1 s that one profile of a few seconds may fall into, and
# its speed drifts over minutes.
# Usage: scripts/accuracy.sh [--quick] [OUT]   (OUT defaults to docs/accuracy.md; --quick:
# 8 configs and a smaller profile, for CI; the binary is $MT_BIN, else ./mario-tui; steps per
# run $MT_ACCURACY_STEPS, default 100; MT_ACCURACY_IDLE=PCT waits, before the profiles and
# before each config, up to MT_ACCURACY_WAIT seconds (default 600) for the CPUs to be PCT %
# idle). Needs python3 and mpirun. Figures are what this machine measured: a loaded machine
# measures noise.
set -eu
bin=${MT_BIN:-./mario-tui}
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
if [ "${1:-}" = "--quick" ]; then
    quick=1
    shift
fi
out=${1:-$top/docs/accuracy.md}
steps=${MT_ACCURACY_STEPS:-100}
rounds=${MT_ACCURACY_PROFILE_ROUNDS:-3}
runs=${MT_ACCURACY_RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

[ -x "$bin" ] || { echo "accuracy: no binary at $bin (build first, or set MT_BIN)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "accuracy: needs python3" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "accuracy: needs mpirun (apt-get install openmpi-bin)" >&2; exit 2; }

# The share of the CPUs idle over one second, before a config starts: what the machine's other
# work leaves (the load average would count this script's own ranks).
idle_pct() {
    a=$(head -n 1 /proc/stat 2>/dev/null); sleep 1; b=$(head -n 1 /proc/stat 2>/dev/null)
    echo "$a $b" | awk '{ n = (NF - 2) / 2; t = 0; for (i = 2; i <= n + 1; i++) t += $(i + n + 1) - $i;
        idle = $(5 + n + 1) - $5 + $(6 + n + 1) - $6; if (t > 0) printf "%.0f", 100 * idle / t;
        else print "nan" }'
}

# With MT_ACCURACY_IDLE, waits for the machine's other work to leave the CPUs that idle.
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

load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
# A calibration per micro-batch size, over the layer counts per stage of the configs (8
# layers: 4 per stage on 2 devices, 2 on 4 devices or W's 4 stages on 2, 1 for W on 4).
if [ $quick -eq 1 ]; then
    ranks="2 4"; schemes="V GPipe"; variants="base opt"; sizes="1"; steps=4; runs=1; rounds=1
    prof="--layer-counts 2,4 --mb-counts 2,3 --steps 3"
else
    ranks="2 4"; schemes="V X W GPipe"; variants="base ckpt opt"; sizes="1 2"
    prof="--layer-counts 1,2,4 --mb-counts 2,4 --steps 8"
fi
# Profile round $1, over every size (its own loop variable: sh has no locals, and the config
# loop below runs it in the middle of its own loop over the sizes).
profile_round() {
    for prof_mbs in $sizes; do
        [ "$want_idle" -gt 0 ] && wait_idle
        "$bin" profile --model tiny --micro-batch-size "$prof_mbs" $prof \
            --out "$tmp/cal-mbs$prof_mbs-r$1.json" >"$tmp/profile-mbs$prof_mbs-r$1.txt" \
            2>"$tmp/profile-mbs$prof_mbs-r$1.err"
        echo "accuracy: profiled micro-batch size $prof_mbs, round $1 of $rounds" \
            "($(tail -c 60 "$tmp/profile-mbs$prof_mbs-r$1.err"))" >&2
    done
}
set -- $ranks; n_ranks=$#; set -- $schemes; n_schemes=$#; set -- $sizes; n_sizes=$#
set -- $variants; total=$((n_ranks * n_schemes * n_sizes * $#))
round=1 # the next profile round; round r runs before config 1 + (r - 1) * total / rounds

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

n=0
: >"$tmp/list"
for pp in $ranks; do
    for scheme in $schemes; do
        for mbs in $sizes; do
            for variant in $variants; do
                name="$scheme-$variant-pp$pp-mbs$mbs"
                N=$((2 * pp))
                flags="--model tiny --devices $pp --scheme $scheme --microbatches $N --micro-batch-size $mbs --chunks 2"
                case $variant in
                base) "$bin" simulate $flags --plan-out "$tmp/$name.plan.json" >/dev/null ;;
                ckpt) "$bin" simulate $flags --plan-out "$tmp/base.json" >/dev/null
                      ckpt "$tmp/base.json" "$tmp/$name.plan.json" ;;
                opt)  "$bin" optimize $flags --plan-out "$tmp/$name.plan.json" >/dev/null || [ $? -eq 1 ] ;;
                esac
                n=$((n + 1))
                while [ $round -le "$rounds" ] &&
                      [ $((n - 1)) -ge $(((round - 1) * total / rounds)) ]; do
                    profile_round $round
                    round=$((round + 1))
                done
                printf 'accuracy: %2d %-24s' "$n" "$name" >&2
                ok=1
                k=1
                lowest=100
                while [ $k -le "$runs" ] && [ $ok -eq 1 ]; do
                    wait_idle # before every run: the lowest idle share is reported
                    [ "$idle" != nan ] && [ "$idle" -lt "$lowest" ] && lowest=$idle
                    "$bin" run "$tmp/$name.plan.json" --steps "$steps" \
                        --trace-out "$tmp/$name.trace-$k.json" >"$tmp/$name.run.txt" 2>&1 || ok=0
                    k=$((k + 1))
                done
                if [ $ok -eq 1 ]; then
                    echo "$name $pp $scheme $variant $mbs ok $lowest" >>"$tmp/list"
                    echo " ran" >&2
                else
                    echo "$name $pp $scheme $variant $mbs failed $lowest" >>"$tmp/list"
                    echo " FAILED: $(tail -n 1 "$tmp/$name.run.txt")" >&2
                fi
            done
        done
    done
done

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
            fit[coef] = statistics.median(c["fits"][key][coef] for c in cals)
json.dump(out, open("%s/cal-mbs%s.json" % (tmp, mbs), "w"), indent=1)
PY
done

# Every run laid beside its simulation, analytic (the first run) and calibrated (each run).
: >"$tmp/list2"
while read -r name pp scheme variant mbs status lowest; do
    if [ "$status" = ok ]; then
        k=1
        while [ $k -le "$runs" ] && [ "$status" = ok ]; do
            "$bin" compare "$tmp/$name.plan.json" "$tmp/$name.trace-$k.json" --json \
                --calibration "$tmp/cal-mbs$mbs.json" >"$tmp/$name.calibrated-$k.json" \
                2>>"$tmp/$name.run.txt" || status=failed
            k=$((k + 1))
        done
        [ "$status" = ok ] && { "$bin" compare "$tmp/$name.plan.json" "$tmp/$name.trace-1.json" \
            --json >"$tmp/$name.analytic.json" 2>>"$tmp/$name.run.txt" || status=failed; }
        [ "$status" = ok ] || echo "accuracy: $name: compare FAILED: $(tail -n 1 "$tmp/$name.run.txt")" >&2
    fi
    echo "$name $pp $scheme $variant $mbs $status $lowest" >>"$tmp/list2"
done <"$tmp/list"
mv "$tmp/list2" "$tmp/list"

version=$("$bin" --version)
load1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
cores=$(nproc 2>/dev/null || echo '?')
cpu=$(python3 -c "import json; print(json.load(open('$tmp/cal-mbs1.json'))['device'])")
python3 - "$tmp" "$out" "$version" "$cpu" "$steps" "$quick" "$load0 $load1 $cores" "$sizes" \
    "$runs" "$want_idle $max_wait" "$rounds" <<'PY'
import json, math, sys, datetime, statistics
tmp, out, version, cpu, steps, quick = sys.argv[1:7]
load0, load1, cores = sys.argv[7].split()
sizes = sys.argv[8].split()
nruns = int(sys.argv[9])
want_idle, max_wait = sys.argv[10].split()
rounds = int(sys.argv[11])

def tau(a, b):
    c = d = ta = tb = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            x, y = a[i] - a[j], b[i] - b[j]
            if x == 0 and y == 0: continue
            if x == 0: ta += 1
            elif y == 0: tb += 1
            elif (x > 0) == (y > 0): c += 1
            else: d += 1
    den = math.sqrt((c + d + ta) * (c + d + tb))
    return (c - d) / den if den > 0 else float("nan")

rows, failed = [], []
for line in open(tmp + "/list"):
    name, pp, scheme, variant, mbs, status, idle = line.split()
    if name != "%s-%s-pp%s-mbs%s" % (scheme, variant, pp, mbs):
        sys.exit("accuracy: %s recorded as %s, %s, pp %s, mbs %s" % (name, scheme, variant, pp, mbs))
    if status != "ok":
        failed.append(name)
        continue
    a = json.load(open("%s/%s.analytic.json" % (tmp, name)))
    cs = [json.load(open("%s/%s.calibrated-%d.json" % (tmp, name, k))) for k in range(1, nruns + 1)]
    c = cs[0]
    means = [j["step_time_measured_us"] for j in cs]
    meds = [statistics.median(j["measured"]["step_times_us"]) for j in cs]
    meas = statistics.median(meds)
    def peaks(j):
        return [(d["peak_memory_sim"], d["peak_memory_measured"]) for d in j["per_device"]
                if d["peak_memory_measured"]]
    rows.append(dict(name=name, pp=int(pp), scheme=scheme, variant=variant, mbs=int(mbs),
                     idle=float(idle), meds=meds, spread=100 * (max(meds) / min(meds) - 1),
                     meas=meas, sim_a=a["step_time_sim_us"],
                     meas_mean=statistics.median(means),
                     sim_c=c["step_time_sim_us"],
                     err_a=100 * (a["step_time_sim_us"] - meas) / meas,
                     err_c=100 * (c["step_time_sim_us"] - meas) / meas,
                     peaks_a=peaks(a), peaks_c=peaks(c),
                     mem_a=a["peak_memory_error_pct"], mem_c=c["peak_memory_error_pct"],
                     steps_used=a["measured"]["steps_used"]))

def mape_step(key, sel, meas="meas"):
    v = [abs(r[key] - r[meas]) / r[meas] for r in sel]
    return 100 * sum(v) / len(v) if v else float("nan")

def mape_mem(key, sel):
    v = [abs(s - m) / m for r in sel for s, m in r[key]]
    return 100 * sum(v) / len(v) if v else float("nan")

def fmt_ms(us): return "%.2f" % (us / 1000)
def fmt_mib(b): return "%.2f" % (b / 2**20)

L = []
L.append("# Simulator accuracy: simulated against measured\n")
L.append("Generated by `scripts/accuracy.sh%s` (%s) on %s, %s UTC; do not edit by hand, rerun the "
         "script.\n" % (" --quick" if quick == "1" else "", version, cpu,
                        datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")))
L.append("Machine load while it ran (1-minute load average, at the start and at the end): %s and "
         "%s on %s cores.%s\n" % (load0, load1, cores,
                                 " Before each profile and each config the script waited (at most "
                                 "%s s) for the CPUs to be %s %% idle (`MT_ACCURACY_IDLE=%s`): "
                                 "this machine is shared." % (max_wait, want_idle, want_idle)
                                 if int(want_idle) > 0 else ""))
L.append("Each config is the tiny GPT model (8 layers, hidden 64, sequence 64, vocabulary 256) as "
         "a plan of `mario-tui simulate` (base), the same with every forward checkpointed (ckpt, "
         "Mario's pass 1) or `mario-tui optimize` (opt, all four passes), run for %s steps on the "
         "CPU backend (`mario-tui run`, one MPI rank per device, OpenBLAS on one thread), %d "
         "time%s, and laid beside its simulation with `mario-tui compare`: a run's step time is "
         "the median of its steps after the first, the config's measured step time the median of "
         "those over its runs (the mean step, median over the runs, is given beside it), peak "
         "memory the highest sample of each device during the steps of the first run. "
         "*Analytic* uses the estimators of `model/cost.h` with the built-in A100 figures; "
         "*calibrated* uses the calibration `mario-tui profile` measured on this machine for the "
         "config's micro-batch size (%s): GPipe runs of two ranks each, as the 2-rank configs "
         "run, over the layer counts per stage the configs have, %d time%s in rounds over the "
         "sizes spread over the study (the first before the first config, the others evenly "
         "between the configs), each fit's coefficients the median over the rounds (the fits "
         "of every round are listed at the end); the runs are compared once all are done. Medians on both sides: the profile's per-op times are medians over "
         "each run, so the simulation predicts a step at the machine's usual speed.\n"
         % (steps, nruns, "s" if nruns > 1 else "", ", ".join(sizes), rounds,
            "s" if rounds > 1 else ""))
L.append("The goal is measured on the **2-rank configs**: this machine has %s cores, so two ranks "
         "each have one, as the simulator assumes (one device per rank). The 4-rank configs put "
         "two ranks on each core; they are reported apart and not held to the goal.\n" % cores)

groups = [("2 ranks (the goal)", [r for r in rows if r["pp"] <= int(cores)]),
          ("4 ranks (2 per core)", [r for r in rows if r["pp"] > int(cores)]),
          ("all", rows)]
L.append("## Summary\n")
L.append("| configs | n | step-time MAPE, analytic | step-time MAPE, calibrated | peak-memory MAPE, "
         "analytic | peak-memory MAPE, calibrated | Kendall tau, analytic | Kendall tau, "
         "calibrated | step-time MAPE, calibrated, against the mean steps | spread of identical "
         "runs, median | CPUs idle before the runs, mean |")
L.append("|---|---|---|---|---|---|---|---|---|---|---|")
for g, sel in groups:
    if not sel: continue
    m = [r["meas"] for r in sel]
    L.append("| %s | %d | %.1f %% | %.1f %% | %.2f %% | %.2f %% | %.2f | %.2f | %.1f %% | %s | "
             "%.0f %% |" % (
        g, len(sel), mape_step("sim_a", sel), mape_step("sim_c", sel),
        mape_mem("peaks_a", sel), mape_mem("peaks_c", sel),
        tau([r["sim_a"] for r in sel], m), tau([r["sim_c"] for r in sel], m),
        mape_step("sim_c", sel, "meas_mean"),
        "%.1f %%" % statistics.median(r["spread"] for r in sel) if nruns > 1 else "-",
        sum(r["idle"] for r in sel) / len(sel)))
L.append("")
L.append("Goal (issue 8): step time MAPE <= 3 % and peak memory MAPE <= 1 % after calibration "
         "(paper: 9.4 % and 5.1 %). Kendall tau ranks the configs by step time: 1 = the "
         "simulator orders them exactly as measured. The mean-step column compares the same "
         "simulation with the runs' mean steps, which slow stretches and preemptions move more "
         "than the median. The spread of identical runs is max / min - 1 of a config's run "
         "step times: no simulation, which predicts one number, matches every run closer than "
         "that.\n")
# Configs the calibrated simulation predicts alike (within 0.5 %: e.g. 1F1B and GPipe with
# N <= D + 1 micro-batches): what separates their measurements is the machine, not the model.
goal = groups[0][1]
alike = []
for i, r in enumerate(goal):
    for q in goal[i + 1:]:
        if abs(r["sim_c"] - q["sim_c"]) <= 0.005 * r["sim_c"]:
            alike.append((max(r["meas"], q["meas"]) / min(r["meas"], q["meas"]) - 1, r, q))
if alike:
    d, r, q = max(alike, key=lambda t: t[0])
    L.append("Pairs of 2-rank configs that the calibrated simulation predicts within 0.5 %% of each "
             "other: %d; the furthest apart measured: %s %s ms and %s %s ms (%.1f %% apart, "
             "simulated %s and %s ms), median over the pairs %.1f %%. Such a pair ran at different "
             "times of the study: the machine's speed moved between them.\n" % (
                 len(alike), r["name"], fmt_ms(r["meas"]), q["name"], fmt_ms(q["meas"]), 100 * d,
                 fmt_ms(r["sim_c"]), fmt_ms(q["sim_c"]),
                 100 * statistics.median(t[0] for t in alike)))
if failed:
    L.append("Runs that failed (left out): %s.\n" % ", ".join(failed))

L.append("## Per config\n")
L.append("| config | ranks | CPUs idle | measured step (ms) | runs (ms) | mean step (ms) | "
         "simulated, analytic (ms) | error | simulated, calibrated (ms) | error | peak memory "
         "error per device, analytic | calibrated |")
L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    pe = lambda ps: " ".join("%+.1f" % (100 * (s - m) / m) for s, m in ps)
    L.append("| %s | %d | %.0f %% | %s | %s | %s | %s | %+.1f %% | %s | %+.1f %% | %s | %s |" % (
        r["name"], r["pp"], r["idle"], fmt_ms(r["meas"]), " ".join(fmt_ms(x) for x in r["meds"]),
        fmt_ms(r["meas_mean"]), fmt_ms(r["sim_a"]), r["err_a"], fmt_ms(r["sim_c"]), r["err_c"],
        pe(r["peaks_a"]), pe(r["peaks_c"])))
L.append("")
L.append("## The calibrations\n")
L.append("Each round's main fits (us; per layer a, per stage b) and the median the calibration "
         "takes; a round that fell into a slow stretch stands out.\n")
L.append("| micro-batch size | round | FW a | FW b | BW a | BW b | RC a | OS a | p2p b |")
L.append("|---|---|---|---|---|---|---|---|---|")
for mbs in sizes:
    cals = [json.load(open("%s/cal-mbs%s-r%d.json" % (tmp, mbs, r))) for r in range(1, rounds + 1)]
    cals.append(json.load(open("%s/cal-mbs%s.json" % (tmp, mbs))))
    for i, c in enumerate(cals):
        f = c["fits"]
        L.append("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.0f |" % (
            mbs, "median" if i == rounds else str(i + 1), f["fw_us"]["a"], f["fw_us"]["b"],
            f["bw_us"]["a"], f["bw_us"]["b"], f["rc_us"]["a"], f["os_us"]["a"], f["p2p_us"]["b"]))
L.append("")
for mbs in sizes:
    L.append("The first round's profile, micro-batch size %s:\n" % mbs)
    L.append("```")
    L.extend(open("%s/profile-mbs%s-r1.txt" % (tmp, mbs)).read().rstrip().splitlines())
    L.append("```\n")
L.append("## Reading these figures\n")
L.append("- Peak memory is the executor's counting allocator (exact, deterministic): the calibrated "
         "memory model (static + activations per micro-batch in flight + message buffers + a "
         "running instruction's workspace) is what the simulator should be judged on. The "
         "analytic model assumes mixed precision (2-byte activations, 16 bytes per parameter) "
         "while the CPU executor keeps fp32, hence its large memory error. What is left after "
         "calibration is mostly send buffers: the executor frees one when the receiver has taken "
         "the message, which may be several instructions after the send; the simulator frees it "
         "after the next one.")
L.append("- Step time on the CPU backend depends on what else the machine runs: the per-config "
         "idle share is the lowest of both CPUs' in the second before each of its runs (100 % = "
         "nothing else ran). A preemption costs milliseconds against instructions of a fraction "
         "of one, and the simulator predicts a machine that runs nothing else; the calibration "
         "takes medians for the same reason. Even on an idle machine identical runs differ (the "
         "spread column): on this 2-core VM a rank, sometimes both, computes 20-30 % slower for "
         "stretches of 0.1-1 s and then recovers, often at the start of a run but also in its "
         "middle; a 10-step run (0.25 s) may sit wholly inside one, which first looked like a "
         "per-run speed, while 200-step runs stayed fast throughout. Its cause was not found: "
         "the guest sees no steal time, each rank has its own core, page faults do not grow "
         "with the steps (all are at start-up), and it stays with address randomisation off, "
         "with transparent huge pages, without MPI's single-copy transfers, whether waits spin "
         "or sleep, after warming the cores up, and with a busy neighbour core; a kernel DAMON "
         "thread (kdamond, pageout scheme) runs in the guest and was not ruled out. A profile of "
         "a few seconds can fall into such a stretch as a whole: an earlier version of this "
         "study took one profile per micro-batch size, got a slow one for size 1 and a fast one "
         "for size 2, and showed a bias of -10 to -25 % on every size-2 config that was only "
         "that. Hence the rounds of profiles and medians on both sides.")
L.append("- With 4 ranks on 2 cores two ranks share a core whenever both have work, which the "
         "simulator does not model (it assumes one device per rank), so their step times are "
         "longer than simulated. Waiting ranks sleep between polls (exec/comm_mpi.c) rather than "
         "spin, so that a waiting rank leaves its core to a computing one.")
open(out, "w").write("\n".join(L) + "\n")
print("accuracy: wrote %s (%d configs, %d failed)" % (out, len(rows), len(failed)), file=sys.stderr)
PY
