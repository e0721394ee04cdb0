#!/usr/bin/env python3
"""scripts/fit_overheads.py: fits the time model's constants (device efficiency, op_overhead_us,
layer_overhead_us; model/cost.h "Overheads") to the paper's measured Table 5 rows of ONE model
(tests/data/paper_table5.tsv; rows marked est or oom left out) by Nelder-Mead on the mean absolute
percentage error of throughput, then reports the MAPE on the OTHER model's rows (the check).
Usage: scripts/fit_overheads.py [FIT_MODEL [EFF,OP_US,LAYER_US]]   (default GPT3-13B from
0.6,3000,500; the binary is $MT_BIN or ./mario-tui). The objective has a ridge along op vs
layer overhead: from 0.6,3000,500 the fit ends near 0.551, 3360, 546 (the defaults in
model/presets.c), from 0.6,3000,0 near 0.52, 5100, 0 - see docs/paper-comparison.md."""
import json, os, subprocess, sys, tempfile

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("MT_BIN", os.path.join(top, "mario-tui"))
ROW = {"base": "base", "ckpt": "ckpt", "ovlp": "prepose", "lmbs": "lmbs"}
table = [l.split() for l in open(os.path.join(top, "tests/data/paper_table5.tsv"))
         if l.strip() and not l.startswith("#")]
NAMES = ["efficiency", "op_overhead_us", "layer_overhead_us"]
START = [0.6, 3000.0, 500.0]
SCALE = [0.1, 1000.0, 200.0]


def mape(model, params):
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"cluster": dict(device="A100-40G", **params)}, f)
    thr = {}
    for scheme in "VXW":
        out = subprocess.run([BIN, "optimize", path, "--model", model, "--scheme", scheme,
                              "--devices", "32", "--global-batch", "128", "--micro-batch-size",
                              "1" if scheme == "W" else "2", "--chunks", "2", "--lmbs", "--json"],
                             capture_output=True, text=True).stdout
        for p in json.loads(out)["passes"]:
            thr[(scheme, p["name"])] = p["throughput"]
    os.unlink(path)
    errs = [abs(thr[(s, ROW[c])] / float(t) - 1) for m, s, c, _, t, kind in table
            if m == model and kind == "measured"]
    return 100 * sum(errs) / len(errs)


def params_of(u):
    p = {n: max(0.0, s0 + v * sc) for n, s0, v, sc in zip(NAMES, START, u, SCALE)}
    p["efficiency"] = min(max(p["efficiency"], 0.2), 1.0)
    return p


def nelder_mead(f, n, iters=60):
    simplex = [[0.0] * n] + [[float(i == j) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in simplex[:-1]) / n for j in range(n)]
        w = simplex[-1]
        r = [2 * c[j] - w[j] for j in range(n)]
        fr = f(r)
        if fr < vals[0]:
            e = [3 * c[j] - 2 * w[j] for j in range(n)]
            fe = f(e)
            simplex[-1], vals[-1] = (e, fe) if fe < fr else (r, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = r, fr
        else:
            k = [(c[j] + w[j]) / 2 for j in range(n)]
            fk = f(k)
            if fk < vals[-1]:
                simplex[-1], vals[-1] = k, fk
            else:
                simplex = [simplex[0]] + [[(simplex[0][j] + p[j]) / 2 for j in range(n)]
                                          for p in simplex[1:]]
                vals = [vals[0]] + [f(p) for p in simplex[1:]]
    b = min(range(n + 1), key=lambda i: vals[i])
    return simplex[b], vals[b]


if __name__ == "__main__":
    fit = sys.argv[1] if len(sys.argv) > 1 else "GPT3-13B"
    if len(sys.argv) > 2:
        START[:] = [float(v) for v in sys.argv[2].split(",")]
    other = "LLaMA2-13B" if fit == "GPT3-13B" else "GPT3-13B"
    u, best = nelder_mead(lambda u: mape(fit, params_of(u)), len(NAMES))
    p = params_of(u)
    rounded = {k: round(v, 3) for k, v in p.items()}
    print("fitted on %s: %s, MAPE %.1f %%" % (fit, json.dumps(rounded), best))
    print("check on %s: MAPE %.1f %%" % (other, mape(other, p)))
