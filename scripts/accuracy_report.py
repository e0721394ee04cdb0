#!/usr/bin/env python3
# scripts/accuracy_report.py: docs/accuracy.md from what scripts/accuracy.sh measured (its
# temporary folder): the replay (the schedule model), the cost model op by op, step time and
# ranking, peak memory. Not run by hand: accuracy.sh passes it its folder and settings.
import datetime
import json
import math
import os
import statistics
import sys

tmp, out, version, steps, rounds, model = sys.argv[1:7]
load0, load1, cores = sys.argv[7].split()
sizes = sys.argv[8].split()
want_idle, max_wait = sys.argv[9].split()
secs, command = int(sys.argv[10]), sys.argv[11]
rounds, steps = int(rounds), int(steps)
ncores = int(cores) if cores.isdigit() else 2


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def tau(a, b):
    c = d = ta = tb = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            x, y = a[i] - a[j], b[i] - b[j]
            if x == 0 and y == 0:
                continue
            if x == 0:
                ta += 1
            elif y == 0:
                tb += 1
            elif (x > 0) == (y > 0):
                c += 1
            else:
                d += 1
    den = math.sqrt((c + d + ta) * (c + d + tb))
    return (c - d) / den if den > 0 else float("nan")


def med(v):
    v = [x for x in v if x is not None and not math.isnan(x)]
    return statistics.median(v) if v else float("nan")


def pct(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def ms(us):
    return "%.2f" % (us / 1000) if us == us else "-"


def sgn(v, digits=1):
    return ("%+." + str(digits) + "f %%") % v if v == v else "-"


def mape(pairs):
    v = [abs(s - m) / m for s, m in pairs if m and m == m and s == s]
    return 100 * sum(v) / len(v) if v else float("nan")


# ---- the runs --------------------------------------------------------------------------------
ran = {}
for line in open(os.path.join(tmp, "ran")):
    name, r, status = line.split()
    ran[(name, int(r))] = status == "ok"

rows, failed = [], []
for line in open(os.path.join(tmp, "list")):
    name, pp, scheme, variant, mbs = line.split()
    pp, mbs = int(pp), int(mbs)
    cal, noshare = [], []
    for r in range(1, rounds + 1):
        if not ran.get((name, r)):
            continue
        c = load("%s/%s.cal-%d.json" % (tmp, name, r))
        n = load("%s/%s.noshare-%d.json" % (tmp, name, r))
        if c is not None:
            cal.append(c)
        if n is not None:
            noshare.append(n)
    a = load("%s/%s.analytic.json" % (tmp, name))
    if not cal or a is None:
        failed.append(name)
        continue
    meds = [statistics.median(c["measured"]["step_times_us"]) for c in cal]
    inner = [100 * (pct(c["measured"]["step_times_us"], 0.9) -
                    pct(c["measured"]["step_times_us"], 0.1)) /
             statistics.median(c["measured"]["step_times_us"]) for c in cal]
    meas = statistics.median(meds)
    sim_c = cal[0]["step_time_sim_us"]
    sim_n = noshare[0]["step_time_sim_us"] if noshare else float("nan")
    rp = [c["replay"]["step_time_error_pct"] for c in cal if "replay" in c]
    one = [c["replay"]["one_latency"]["step_time_error_pct"] for c in cal if "replay" in c]
    lat = [c["replay"]["one_latency"]["p2p_latency_us"] for c in cal if "replay" in c]

    def peaks(j):
        return [(d["peak_memory_sim"], d["peak_memory_measured"]) for d in j["per_device"]
                if d["peak_memory_measured"]]

    rows.append(dict(name=name, pp=pp, scheme=scheme, variant=variant, mbs=mbs, meds=meds,
                     meas=meas, spread=100 * (max(meds) / min(meds) - 1) if len(meds) > 1
                     else float("nan"), inner=med(inner), sim_c=sim_c, sim_n=sim_n, sim_a=a["step_time_sim_us"],
                     err_c=100 * (sim_c - meas) / meas, err_n=100 * (sim_n - meas) / meas,
                     err_a=100 * (a["step_time_sim_us"] - meas) / meas,
                     replay=med(rp), replay_one=med(one), one_runs=one, replay_runs=rp,
                     lat=med(lat),
                     peaks_c=peaks(cal[0]), peaks_a=peaks(a)))

# ---- the cost model, op by op: the calibrated simulation against the runs' medians -----------
OPS = ["FW", "CFW", "RC", "BW", "B", "W", "OS"]
ops = {op: [] for op in OPS}  # (config, stage, predicted, measured median, p10, p90)
for row in rows:
    sim = load("%s/%s.sim.json" % (tmp, row["name"]))
    if sim is None:
        continue
    pred = {}
    for ev in sim["traceEvents"]:
        a = ev.get("args", {})
        if ev.get("ph") == "X" and a.get("op") in ops:
            pred.setdefault((a["op"], a["stage"]), []).append(ev["dur"])
    meas = {}
    for r in range(1, rounds + 1):
        tr = load("%s/%s.trace-%d.json" % (tmp, row["name"], r)) if ran.get((row["name"], r)) \
            else None
        if tr is None:
            continue
        for ev in tr["traceEvents"]:
            a = ev.get("args", {})
            if ev.get("ph") == "X" and a.get("op") in ops and a.get("step", 0) >= 1:
                meas.setdefault((a["op"], a["stage"]), []).append(ev["dur"])
    for (op, stage), v in meas.items():
        if (op, stage) in pred:
            ops[op].append((row, stage, statistics.mean(pred[(op, stage)]),
                            statistics.median(v), pct(v, 0.1), pct(v, 0.9)))

# ---- the calibrations ------------------------------------------------------------------------
cals = {mbs: [load("%s/cal-mbs%s-r%d.json" % (tmp, mbs, r)) for r in range(1, rounds + 1)]
        for mbs in sizes}
final = {mbs: load("%s/cal-mbs%s.json" % (tmp, mbs)) for mbs in sizes}
cpu = final[sizes[0]]["device"]
idle = [line.split()[2] for line in open(os.path.join(tmp, "idle"))]

L = []
w = L.append
w("# Simulator accuracy: simulated against measured\n")
w("Generated by `%s` (%s) on %s, %s UTC, in %d min; do not edit by hand, rerun the script. "
  "Machine load (1-minute load average) %s at the start, %s at the end, on %s cores; the CPUs "
  "were %s %% idle in the second before each round%s.\n"
  % (command, version, cpu, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), secs // 60,
     load0, load1, cores, ", ".join(idle),
     " (the script waited up to %s s for %s %%)" % (max_wait, want_idle)
     if int(want_idle) > 0 else ""))
if model == "tiny":
    w("The model is the tiny GPT (8 layers, hidden 64, sequence 64, vocabulary 256): its ops last "
      "0.1-2 ms, where one preemption is as long as an op. `scripts/accuracy.sh --model large` "
      "runs a GPT of hidden 128, sequence 128, 16 layers, whose forwards and backwards last "
      "4-13 ms ([accuracy-large.md](accuracy-large.md)).\n")
else:
    w("The model is a GPT of hidden 128, sequence 128, 16 layers, vocabulary 512, ffn 512: a "
      "stage's forward lasts 4 ms (4 layers, on 4 ranks) to 8 ms (8 layers, on 2), its backward "
      "6-13 ms, the optimizer step and W 2-5 ms (table (ii)), long beside what the machine's "
      "other work takes from a run (the tiny model's ops last 0.1-2 ms: "
      "[accuracy.md](accuracy.md)).\n")
w("Each config is a plan of `mario-tui simulate` (base), the same with every forward "
  "checkpointed (ckpt, Mario's pass 1) or `mario-tui optimize` (opt, the four passes), of 2 "
  "micro-batches per rank, run on the CPU backend (`mario-tui run`, one MPI rank per device, "
  "OpenBLAS on one thread) for %d steps in each of %d rounds. A round profiles the machine "
  "first (`mario-tui profile`: GPipe runs of two ranks, one calibration per micro-batch size; "
  "the calibration used is each coefficient's median over the rounds) and then runs every "
  "config once, in the same order: A B C ... A B C ..., so that the machine's drift over "
  "minutes hits every config alike. A run's step time is the median of its steps after the "
  "first, a config's the median of its rounds', its spread max / min - 1 of those: the noise "
  "floor, how far apart identical runs land.\n" % (steps, rounds))

two = [r for r in rows if r["pp"] <= ncores]
four = [r for r in rows if r["pp"] > ncores]


def summary(sel, shared):
    m = [r["meas"] for r in sel]
    return dict(
        n=len(sel),
        replay_med=med([abs(r["replay"]) for r in sel]),
        replay_max=max([abs(r["replay"]) for r in sel], default=float("nan")),
        one_med=med([abs(r["replay_one"]) for r in sel]),
        one_max=max([abs(r["replay_one"]) for r in sel], default=float("nan")),
        mape_c=mape([(r["sim_c"], r["meas"]) for r in sel]),
        mape_n=mape([(r["sim_n"], r["meas"]) for r in sel]),
        mape_a=mape([(r["sim_a"], r["meas"]) for r in sel]),
        spread=med([r["spread"] for r in sel]),
        inner=med([r["inner"] for r in sel]),
        tau_c=tau([r["sim_c"] for r in sel], m),
        # the ranking's noise ceiling: how well one round of the same runs ranks another
        tau_rr=[tau([r["meds"][i] for r in sel], [r["meds"][j] for r in sel])
                for i in range(len(sel[0]["meds"]) if sel else 0)
                for j in range(i + 1, len(sel[0]["meds"]) if sel else 0)
                if all(len(r["meds"]) > j for r in sel)],
        tau_a=tau([r["sim_a"] for r in sel], m),
        mem_c=mape([p for r in sel for p in r["peaks_c"]]),
        mem_a=mape([p for r in sel for p in r["peaks_a"]]))


s2, s4 = summary(two, False), summary(four, True)
w("## Summary\n")
w("| figure | goal (issue 19) | 2 ranks (a core each) | 4 ranks (two a core) |")
w("|---|---|---|---|")
w("| configs | | %d | %d |" % (s2["n"], s4["n"]))
w("| (i) replay with the measured durations, step-time error, median / max | <= 1 %% / <= 3 %% "
  "| %.3f %% / %.3f %% | %.3f %% / %.3f %% |" % (s2["replay_med"], s2["replay_max"],
                                               s4["replay_med"], s4["replay_max"]))
w("| (i) the same with one p2p latency for every message, median / max | | %.2f %% / %.2f %% | "
  "%.2f %% / %.2f %% |" % (s2["one_med"], s2["one_max"], s4["one_med"], s4["one_max"]))
w("| (iii) step-time MAPE, calibrated | <= 5 %%, and <= the noise floor | %.1f %% | %.1f %% "
  "(without processor sharing %.1f %%) |" % (s2["mape_c"], s4["mape_c"], s4["mape_n"]))
w("| (iii) spread of identical runs, median (the noise floor: max / min - 1 of a config's "
  "rounds) | | %.1f %% | %.1f %% |" % (s2["spread"], s4["spread"]))
w("| (iii) spread of the steps of one run, median (p10-p90 over the median) | | %.1f %% | "
  "%.1f %% |" % (s2["inner"], s4["inner"]))
w("| (iii) Kendall tau of the configs' step times, calibrated | >= 0.9 | %.2f | %.2f |"
  % (s2["tau_c"], s4["tau_c"]))
def rr(s):
    t = s["tau_rr"]
    return "%.2f / %.2f" % (min(t), sum(t) / len(t)) if t else "n/a (one round)"


w("| (iii) Kendall tau of one round's measured step times against another's (the noise "
  "ceiling of the ranking), min / mean over pairs of rounds | | %s | %s |" % (rr(s2), rr(s4)))
w("| peak-memory MAPE, calibrated | <= 1 %% | %.2f %% | %.2f %% |" % (s2["mem_c"], s4["mem_c"]))
w("| step-time MAPE, analytic (A100 figures, for scale) | | %.1f %% | %.1f %% |"
  % (s2["mape_a"], s4["mape_a"]))
w("")
w("The replay (`compare`'s `replay`, docs/traces.md) simulates each run again, step by step, "
  "with every instruction and every message lasting what it measured: what is left is the "
  "schedule model's error, which is the run itself to rounding unless the simulator waits for "
  "something else than the executor did (a dependency, an order, the ranks' clocks). With one "
  "p2p latency for every message (the run's median, L) the replay shows what the waits that "
  "ended late cost. The cost model is judged op by op in (ii), and the whole prediction in "
  "(iii).\n")

# ---- (i) --------------------------------------------------------------------------------------
w("## (i) The schedule model: each run replayed\n")
w("| config | ranks | replay error per round | median | with one latency, per round | median | "
  "p2p latency L (us) |")
w("|---|---|---|---|---|---|---|")
for r in rows:
    w("| %s | %d | %s | %s | %s | %s | %.1f |" % (
        r["name"], r["pp"], " ".join(sgn(x, 3) for x in r["replay_runs"]), sgn(r["replay"], 3),
        " ".join(sgn(x, 2) for x in r["one_runs"]), sgn(r["replay_one"], 2), r["lat"]))
w("")
miss = sorted(rows, key=lambda r: -abs(r["replay_one"]))[:3]
w("With one latency the replay runs short: the runs waited longer than L says. The difference "
  "between the two replays is exactly that: receives that ended late after their messages were "
  "sent (largest here: %s). On 2 ranks a waiting rank spins and yields "
  "(exec/comm_mpi.c), and a wait ends late only when the machine's other work holds its core; "
  "on 4 ranks on 2 cores a waiting rank naps (100 us at a time), then waits for a core, and "
  "Open MPI yields the core at every call once the ranks outnumber the cores, so the time "
  "between instructions grows too (it is counted in the replay's durations: an instruction "
  "lasts from the end of the previous one). The clocks: the executor's ranks take one origin "
  "after a barrier, but with more ranks than cores one leaves the barrier late; `compare` puts "
  "the ranks' clocks together from their messages where a receive would otherwise end before "
  "its send began (docs/traces.md). Message copies: a receive whose message was there costs "
  "the run's median receive time c (5-20 us on 2 ranks).\n"
  % ", ".join("%s %s" % (r["name"], sgn(r["replay_one"], 2)) for r in miss))

# ---- (ii) -------------------------------------------------------------------------------------
w("## (ii) The cost model, op by op\n")
w("Each op type of every config and stage: the calibrated cost model's duration (a core each) "
  "against the median the runs measured (every instance in the steps after the first, all "
  "rounds), and the measured spread p10-p90 over the median.\n")
for title, sel in (("2 ranks (a core each)", lambda r: r["pp"] <= ncores),
                   ("4 ranks (two a core): the same cost model against the ops as they ran "
                    "with two ranks a core",
                    lambda r: r["pp"] > ncores)):
    w("%s:\n" % title)
    w("| op | (config, stage) pairs | measured median, range (ms) | error of the prediction, "
      "median | MAPE | spread p10-p90, median |")
    w("|---|---|---|---|---|---|")
    for op in OPS:
        v = [x for x in ops[op] if sel(x[0])]
        if not v:
            continue
        errs = [100 * (p - m) / m for _, _, p, m, _, _ in v if m > 0]
        spread = [100 * (hi - lo) / m for _, _, _, m, lo, hi in v if m > 0]
        w("| %s | %d | %s-%s | %s | %.1f %% | %.1f %% |" % (
            op, len(v), ms(min(m for _, _, _, m, _, _ in v)),
            ms(max(m for _, _, _, m, _, _ in v)), sgn(statistics.median(errs)),
            statistics.mean(abs(e) for e in errs), statistics.median(spread)))
    w("")
# ---- (iii) ------------------------------------------------------------------------------------
w("## (iii) Step time\n")
w("| config | ranks | measured step per round (ms) | median | spread | calibrated (ms) | "
  "error | without sharing | analytic error | peak memory error per device, calibrated |")
w("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    w("| %s | %d | %s | %s | %.1f %% | %s | %s | %s | %s | %s |" % (
        r["name"], r["pp"], " ".join(ms(x) for x in r["meds"]), ms(r["meas"]), r["spread"],
        ms(r["sim_c"]), sgn(r["err_c"]), sgn(r["err_n"]) if r["pp"] > ncores else "",
        sgn(r["err_a"]), " ".join("%+.2f" % (100 * (s - m) / m) for s, m in r["peaks_c"])))
w("")
if failed:
    w("Configs whose runs failed (left out): %s.\n" % ", ".join(failed))

# ---- the calibrations -------------------------------------------------------------------------
w("## The calibrations\n")
w("Each round's main fits (us; a: per layer, b: per stage) and the median the calibration takes; "
  "a round in a slow stretch stands out. Processor sharing: the cores recorded and, from runs "
  "of twice as many ranks as cores, a message's latency, a receive's time and the time between "
  "instructions.\n")
w("| micro-batch size | round | FW a | BW a | B a | W a | RC a | OS a | p2p b | cores | p2p, "
  "shared | receive, shared | between instructions, shared |")
w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for mbs in sizes:
    for i, c in enumerate(cals[mbs] + [final[mbs]]):
        if c is None:
            continue
        f = c["fits"]

        def g(key, coef="a"):
            return "%.0f" % f[key][coef] if key in f else "-"
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            mbs, "median" if i == len(cals[mbs]) else str(i + 1), g("fw_us"), g("bw_us"),
            g("b_us"), g("w_us"), g("rc_us"), g("os_us"), g("p2p_us", "b"), c.get("cores", "-"),
            g("p2p_shared_us", "b"), g("recv_shared_us", "b"), g("gap_shared_us", "b")))
w("")
w("The first round's profile, micro-batch size %s:\n" % sizes[0])
w("```")
L.extend(open("%s/profile-mbs%s-r1.txt" % (tmp, sizes[0])).read().rstrip().splitlines())
w("```\n")

# ---- reading ----------------------------------------------------------------------------------
w("## Reading these figures\n")
w("- The goals are measured on the 2-rank configs, where each rank has a core as the "
  "simulator's devices do. Step-time error is bounded below by the noise floor: the spread of "
  "identical runs of one config, interleaved with the others over the study, is what no "
  "prediction of one number can beat.")
w("- Peak memory is the executor's counting allocator (exact, deterministic): the calibrated "
  "memory model is what the simulator should be judged on; what is left is mostly send "
  "buffers, which the executor frees when the receiver has taken the message, possibly "
  "several instructions after the send, and the simulator after the next one.")
fs = final[sizes[0]]["fits"]
# how much longer the 4-rank runs' forwards and backwards were than the cost model says
shared_err = [100 * (m / p - 1) for op in ("FW", "BW") for row, _, p, m, _, _ in ops[op]
              if row["pp"] > ncores and p > 0]
stretch_pct = med(shared_err)
stretch = ("about as long as" if abs(stretch_pct) < 5 else "%.0f %% longer than" % stretch_pct
           if stretch_pct > 0 else "%.0f %% shorter than" % -stretch_pct)


def fit_b(key):
    return fs[key]["b"] if key in fs else float("nan")


w("- The 4-rank configs put two ranks on each core. Without processor sharing the simulator "
  "assumes a core per rank and predicts them %.0f %% short (the 'without sharing' column). "
  "A rank's compute lasts %s the cost model's, a core each (the 4-rank op table, FW and BW), "
  "and besides, between two instructions a rank waits "
  "%.0f us on average for its core (Open MPI, once the ranks outnumber the cores, yields the "
  "core at each call, and the executor calls MPI between instructions to finish its sends), "
  "and a waiting rank naps and then waits for a core (a message %.0f us, against %.0f us on a "
  "core each). The calibration's cores (%s) make the simulator share them (sim/core/share.h): "
  "two ranks computing on one core each run at half speed, and the messages and the time "
  "between instructions are those `profile` measured on runs of twice as many ranks as cores. "
  "What is left (largest: %s) comes from the fluid model itself, which shares a core "
  "evenly at every instant while the ranks take it in turns of an instruction (so one of two "
  "finishes early and the other late), and from the runs' own spread (%.0f %% between "
  "identical runs, %.0f %% between the steps of a run).\n"
  % (s4["mape_n"], stretch, fit_b("gap_shared_us"), fit_b("p2p_shared_us"), fit_b("p2p_us"),
     cores,
     ", ".join("%s %s" % (r["name"], sgn(r["err_c"]))
               for r in sorted(four, key=lambda r: -abs(r["err_c"]))[:3]),
     s4["spread"], s4["inner"]))
w("- What the replay found while it was built: the 4-rank runs' ranks took their clocks' "
  "origin up to 0.8 ms apart (a rank left the start barrier late), which put receives before "
  "their sends and the replay 25 %% off; `compare` now puts the clocks together from the "
  "messages (docs/traces.md). With one latency for every message (the second row) the 2-rank "
  "replay is within %.2f %% at the median and %.2f %% at most, the 4-rank within %.2f %% and "
  "%.2f %%: waits that end later than the run's usual latency, a napping rank's (4 ranks) or "
  "one the machine's other work held off its core (a round with the CPUs less idle is where "
  "they are).\n" % (s2["one_med"], s2["one_max"], s4["one_med"], s4["one_max"]))
open(out, "w").write("\n".join(L) + "\n")
print("accuracy: wrote %s (%d configs, %d failed)" % (out, len(rows), len(failed)),
      file=sys.stderr)
