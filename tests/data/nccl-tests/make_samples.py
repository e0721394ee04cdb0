# Writes nccl-tests-format samples (printf formats of nccl-tests 2.19.6 src/util.cu and 2.13.13
# src/common.cu), figures from an alpha-beta model with a fixed jitter: synthetic, for tests.
import math, sys
def fstr(v, w):
    for f in ("%*.2f", "%*.1f", "%*.0f"):
        s = f % (w, v)
        if len(s) <= w: return s
    return ("%*.1e" if w >= 7 else "%*.0e") % (w, v)
def old_time(t):
    return "%7.0f" % t if t >= 10000 else "%7.1f" % t if t >= 100 else "%7.2f" % t
FACT = {"all_reduce": lambda n: 2*(n-1)/n, "all_gather": lambda n: (n-1)/n,
        "reduce_scatter": lambda n: (n-1)/n, "alltoall": lambda n: (n-1)/n, "sendrecv": lambda n: 1.0}
def rows(coll, n, sizes, lat, bw, elt=4):
    out = []
    for i, s in enumerate(sizes):
        f = FACT[coll](n)
        res = []
        for g in range(2):
            jit = 1 + 0.013 * math.sin(1.7 * i + 0.9 * g)
            t = (lat + f * s / (bw * 1e3)) * jit
            alg = s / t / 1e3
            res.append((t, alg, alg * f))
        out.append((s, res))
    return out
def count_of(coll, s, n, elt=4):
    c = s // elt
    if coll in ("all_gather", "reduce_scatter", "alltoall"): return c // n
    return c
def new_file(path, prog, coll, n, ngpus, procs, hosts, dev, sizes, lat, bw, redop, typ="float", minb=None, maxb=None, step=4):
    L = []
    L.append("# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807")
    L.append("# Collective test starting: %s" % prog)
    L.append("# nThread 1 nGpus %d minBytes %d maxBytes %d step: %d(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0" % (ngpus, sizes[0], sizes[-1], step))
    L.append("#")
    L.append("# Using devices")
    pid = 41235
    r = 0
    for p in range(procs):
        for g in range(ngpus):
            host = hosts[(r * len(hosts)) // n]
            cdev = g if ngpus > 1 else r % (n // len(hosts))
            bus = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][cdev % 8]
            L.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (r, 0, pid + (p if procs > 1 else 0), host, cdev, 0, bus, 0, dev))
            r += 1
    L.append("#")
    L.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""))
    L.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, ""))
    L.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, ""))
    tot = 0; cnt = 0
    for s, res in rows(coll, n, sizes, lat, bw):
        line = "%12li  %12li  %8s  %6s  %6s" % (s, count_of(coll, s, n), typ, redop, "%6i" % -1)
        for (t, alg, bus) in res:
            line += "  %7s  %6s  %6s  %6g" % (fstr(t, 7), fstr(alg, 6), fstr(bus, 6), 0)
            tot += bus; cnt += 1
        L.append(line)
    L.append("# %-20s : %d %s" % ("Out of bounds values", 0, "OK"))
    L.append("# %-20s : %g %s" % ("Avg bus bandwidth", tot / cnt, ""))
    L.append("#")
    L.append("# Collective test concluded: %s" % prog)
    open(path, "w").write("\n".join(L) + "\n")
def old_file(path, coll, n, hosts, dev, sizes, lat, bw, redop):
    L = []
    L.append("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0" % (sizes[0], sizes[-1]))
    L.append("#")
    L.append("# Using devices")
    per = n // len(hosts)
    for r in range(n):
        host = hosts[r // per]
        L.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s" % (r, 0, 2201 + r, host, r % per, [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][r % per], dev))
    L.append("#")
    L.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""))
    L.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s" % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
    L.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    tot = 0; cnt = 0
    for s, res in rows(coll, n, sizes, lat, bw):
        line = "%12li  %12li  %8s  %6s  %6s" % (s, count_of(coll, s, n), "float", redop, "%6i" % -1)
        for (t, alg, bus) in res:
            line += "  %7s  %6.2f  %6.2f  %5g" % (old_time(t), alg, bus, 0)
            tot += bus; cnt += 1
        L.append(line)
    L.append("# Out of bounds values : %d %s" % (0, "OK"))
    L.append("# Avg bus bandwidth    : %g %s" % (tot / cnt, ""))
    L.append("#")
    L.append("")
    open(path, "w").write("\n".join(L) + "\n")
d = sys.argv[1]
H100 = "NVIDIA H100 80GB HBM3"
s4 = [8 * 4**i for i in range(15)]        # 8 B .. 2 GiB, factor 4
new_file(d + "/all_reduce_perf-h100x8.txt", "all_reduce_perf", "all_reduce", 8, 8, 1, ["dgx-h100-01"], H100, s4[:14], 22.0, 470.0, "sum")
new_file(d + "/reduce_scatter_perf-h100x8-mpi.txt", "reduce_scatter_perf_mpi", "reduce_scatter", 8, 1, 8, ["dgx-h100-01"], H100, [1024 * 4**i for i in range(11)], 18.0, 440.0, "sum", step=4)
new_file(d + "/alltoall_perf-h100x8.txt", "alltoall_perf", "alltoall", 8, 8, 1, ["dgx-h100-01"], H100, [1024 * 4**i for i in range(11)], 25.0, 330.0, "none")
new_file(d + "/sendrecv_perf-h100x2.txt", "sendrecv_perf", "sendrecv", 2, 2, 1, ["dgx-h100-01"], H100, [1024 * 4**i for i in range(11)], 9.0, 360.0, "none")
new_file(d + "/all_gather_perf-h100x16-2nodes.txt", "all_gather_perf", "all_gather", 16, 1, 16, ["node-a07", "node-b12"], H100, [1024 * 4**i for i in range(11)], 45.0, 45.0, "none")
old_file(d + "/all_gather_perf-2.13-a100x16.txt", "all_gather", 16, ["gpu-node1", "gpu-node2"], "NVIDIA A100-SXM4-80GB", [1024 * 2**i for i in range(0, 21, 2)], 40.0, 21.0, "none")
