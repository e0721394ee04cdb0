#!/bin/sh
# scripts/cost_model_doc.sh: the table of docs/cost-model.md — device 0's weights + optimizer
# state and its peak activations as `mario-tui simulate --json` gives them, beside Megatron-LM's
# estimator (megatron/training/theoretical_memory_usage.py, NVIDIA/Megatron-LM; transcribed below
# in Python from its formulas) on the same tp, pp, dp, SP, distributed optimizer and schedule.
# Flash attention, no checkpointing, micro-batch 1. Then the op table: each op kind's formula
# (model/ops.c) and each op the builders list (model/ops_build.c) with its per-rank shape, kept
# bytes and source, as `mario-tui simulate --costs --json` gives them.
# Usage: scripts/cost_model_doc.sh [MARIO_TUI] (markdown on stdout: the two generated sections
# of docs/cost-model.md)
set -eu
bin=${1:-./mario-tui}
python3 - "$bin" <<'PY'
import json, math, subprocess, sys
bin = sys.argv[1]
MODELS = {  # published shapes, as `mario-tui models` lists them
    "GPT-3-13B": dict(h=5120, L=40, a=40, s=2048, V=50257, f=20480),
    "GPT-3-175B": dict(h=12288, L=96, a=96, s=2048, V=50257, f=49152),
}

def megatron(m, tp, pp, dp, sp, do, vpp, n_mb, b=1):
    """Megatron-LM's compute_weight_and_optimizer_memory and compute_activation_memory
    (SP path) / compute_activation_memory_without_sp, GPT (LayerNorm, no SwiGLU, MHA,
    untied embeddings as Megatron's GPT default), bytes."""
    h, L, s, f = m["h"], m["L"], m["s"], m["f"]
    mult = 128 * tp  # --make-vocab-size-divisible-by 128, times tp
    V = math.ceil(m["V"] / mult) * mult
    layer = 2 * h * (f + 2) + 2 * h * h * 2          # MLP + norms, QKV + proj
    block = layer * L + 2 * h                          # + final layernorm
    emb = h * V
    shard = (block / pp + emb) / tp
    if pp == 1:
        shard += emb / tp                              # untied output layer
    bpp = 18 if not do else 6 + 12 / dp
    weights = shard * bpp
    if sp:
        act = s * b * h * (18 + 4 * f / h) * L
    else:
        act = s * b * h * (10 + 24 / tp) * L
    act += 8 * s * b * pp + s * b * h * pp
    if vpp:
        act *= 1 + (pp - 1) / (pp * vpp)
    elif pp > 1:
        act *= min(1, n_mb / pp)
    if sp:
        if pp == 1:
            act += s * b * h * 4 * (1 + V / h)
        act /= tp
    else:
        if pp == 1:
            act += (s * b * V / tp + s * b * h) * 2
        act *= 1.05
    return weights, act

CONFIGS = [  # model, tp, pp, dp, sp, distributed optimizer, chunks (interleaved), micro-batches
    ("GPT-3-13B", 1, 4, 1, False, False, 0, 16),
    ("GPT-3-13B", 2, 4, 2, True, True, 0, 16),
    ("GPT-3-13B", 8, 8, 1, True, False, 0, 16),
    ("GPT-3-13B", 2, 4, 1, False, False, 2, 16),
    ("GPT-3-13B", 1, 8, 4, False, True, 0, 32),
    ("GPT-3-175B", 8, 32, 2, True, True, 0, 64),
    ("GPT-3-175B", 8, 8, 1, True, False, 3, 32),
]
print("| model | tp | pp | dp | SP | dist. opt. | schedule | static ours (GB) | static Megatron | diff | act. ours (GB) | act. Megatron | diff |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, tp, pp, dp, sp, do, v, n in CONFIGS:
    args = [bin, "simulate", "--json", "--model", name, "--tp", str(tp), "--dp", str(dp),
            "--devices", str(tp * pp * dp), "--microbatches", str(n), "--memory", "0",
            "--attention", "flash", "--scheme", "W" if v else "V"]
    if v:
        args += ["--chunks", str(v)]
    if sp:
        args.append("--sequence-parallel")
    if do:
        args.append("--distributed-optimizer")
    d = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    dev = d["devices"][0]
    ours_w, ours_a = dev["static_memory"], dev["peak_activation_memory"]
    mw, ma = megatron(MODELS[name], tp, pp, dp, sp, do, v, n)
    pct = lambda x, y: "%+.1f %%" % (100 * (x - y) / y)
    print("| %s | %d | %d | %d | %s | %s | %s | %.2f | %.2f | %s | %.2f | %.2f | %s |" % (
        name, tp, pp, dp, "on" if sp else "off", "on" if do else "off",
        "interleaved v=%d" % v if v else "1F1B", ours_w / 1e9, mw / 1e9, pct(ours_w, mw),
        ours_a / 1e9, ma / 1e9, pct(ours_a, ma)))

KINDS = [  # model/ops.c's registry, one formula per kind
    ("gemm", "FW 2mnk x count; B 2mnk (4mnk with no weight side); W 2mnk for a weight GEMM",
     "operands read once, result written once", "FLOPs / (peak x efficiency)",
     "Narayanan et al. SC'21 eq. 2; torch.utils.flop_counter mm"),
    ("attention", "FW 4 b a s_q s_kv d (causal flash: the pairs its kernel runs, s(s+1)/2); B 2.5x "
     "flash (Dao 2023: S recomputed), 2x eager; model FLOPs: full squares, B 2x",
     "Q, K, V read, O written; B twice that", "FLOPs / (peak x efficiency)",
     "FlashAttention-2 Alg. 1-2; PaLM / Megatron model-FLOPs convention"),
    ("memory", "0", "fw_bytes, bw_bytes (each op's reads + writes)", "bytes / HBM bandwidth",
     "llm.c's kernel list; per op below"),
    ("collective", "0", "the buffer a rank holds", "bus factor x bytes / link bandwidth + latency",
     "NCCL ring: all-reduce 2(n-1)/n, all-gather, reduce-scatter (n-1)/n (nccl-tests PERFORMANCE.md)"),
]
print()
print("### Op kinds")
print()
print("| kind | FLOPs | HBM bytes | time (Megatron-core, torchtitan) | source |")
print("|---|---|---|---|---|")
for k in KINDS:
    print("| %s |" % " | ".join(k))
print()
print("The paper's presets (Megatron-DeepSpeed 2021) price the same list the 2021 way: model FLOPs")
print("/ (peak x efficiency x T/(T + T_half)), the TP collectives by the ring formula without latency,")
print("memory-bound ops 0 (inside the fitted layer overhead).")

def ops_of(args):
    out = subprocess.run([bin, "simulate", "--costs", "--json"] + args, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)

LISTS = [
    ("Llama-3.1-8B, tp 2 with SP, flash (Megatron-core)",
     ["--model", "Llama-3.1-8B", "--devices", "8", "--tp", "2", "--sequence-parallel"]),
    ("GPT3-1.6B, the paper's preset, eager (Megatron-DeepSpeed 2021)", ["--devices", "8"]),
]
for title, args in LISTS:
    d = ops_of(args)
    print()
    print("### %s" % title)
    print()
    print("| site | op | kind | shape (per rank) | kept, MiB | source |")
    print("|---|---|---|---|---|---|")
    seen = set()
    for st in (d[0], d[-1]):
        for o in st["ops"]:
            if (o["site"], o["name"]) in seen:
                continue
            seen.add((o["site"], o["name"]))
            print("| %s | %s | %s | %s | %.1f | %s |" % (
                o["site"], o["name"], o["kind"], o["shape"],
                o["keep_bytes"] / o["count"] / 2**20, o["source"].replace("|", "/")))
PY
