#!/usr/bin/env python3
# scripts/launchers_doc.py: the blocks of docs/launchers.md "The tool's view of the test launches"
# regenerated from the binary: import-args FILE (stderr) and simulate FILE --device D's step.
# Run from the top of the tree after a build.
import re, subprocess, sys
doc = "docs/launchers.md"; s = open(doc).read()
a = s.index("## The tool's view of the test launches"); b = s.index("And back out, `export torchtitan_llama3_70b_pp.json")
sec = s[a:b]
files = {"megatron_llama3_8b.sh": ([], "H100-80G"), "megatron_gpt3_175b.sh": ([], "H100-80G"),
         "megatron_cmdline.txt": ([], "H100-80G"), "torchtitan_llama3_8b.toml": (["--devices", "64"], "H100-80G"),
         "torchtitan_llama3_70b_pp.toml": ([], "H100-80G"), "megatron_deepseek_v3.sh": ([], "H800"),
         "megatron_qwen3_30b_a3b.sh": ([], "H800"), "torchtitan_deepseek_v3_16b.toml": ([], "H800"),
         "torchtitan_llama3_405b_zbv.toml": ([], "H100-80G")}
def block(f):
    extra, dev = files[f]
    p = "tests/data/launch/" + f
    r = subprocess.run(["./mario-tui", "import-args", p] + extra, capture_output=True, text=True)
    lines = []
    for l in r.stderr.splitlines():
        l = l.replace("tests/data/launch/", "")
        if l.startswith(f + ": "):
            l = l[len(f) + 2:]
        if len(l) > 250:  # as the doc shortened them
            l = l[:240] + " ..."
        lines.append("    " + l)
    sim = subprocess.run(["./mario-tui", "simulate", p, "--device", dev] + extra, capture_output=True, text=True)
    st = [l for l in sim.stdout.splitlines() if l.startswith("step time")]
    if st:  # a file the reader refuses has no step
        lines.append("    " + st[0])
    return "\n".join(lines)
out = []
pos = 0
for m in re.finditer(r"^`([a-z0-9_.]+)`[^\n]*\n(?:[^\n]+\n)*?\n((?:    [^\n]*\n)+)", sec, re.M):
    f = m.group(1)
    if f not in files:
        continue
    out.append(sec[pos:m.start(2)]); out.append(block(f) + "\n"); pos = m.end(2)
out.append(sec[pos:])
s = s[:a] + "".join(out) + s[b:]
open(doc, "w").write(s)
