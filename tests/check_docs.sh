#!/bin/sh
# tests/check_docs.sh: docs that run (issue 41 item 7). Every ```json block of docs/*.md and
# README.md is loaded by the command that reads it: a config by `simulate` (exit 0, or 1 for
# a plan over its cap; never 2, bad input), a plan ("format": "mario-plan") by `simulate`, a
# trace mapping ("mario-trace-map") by `import --map` (refused for the trace, never for the
# mapping). A block that is an excerpt and not a whole file is marked so: ```json excerpt.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec python3 - "$bin" "$src" "$tmp" <<'PY'
import glob, json, os, re, subprocess, sys

bin_, src, tmp = sys.argv[1:4]
files = sorted(glob.glob(os.path.join(src, "docs", "*.md"))) + [os.path.join(src, "README.md")]
fence = re.compile(r"^```json([^\n]*)\n(.*?)^```", re.M | re.S)
fail, n, excerpts = 0, 0, 0


def run(args):
    p = subprocess.run([bin_] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr


for path in files:
    text = open(path, encoding="utf-8").read()
    for m in fence.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        where = "%s:%d" % (os.path.relpath(path, src), line)
        info, body = m.group(1).strip(), m.group(2)
        if info == "excerpt":
            excerpts += 1
            continue
        n += 1
        try:
            doc = json.loads(body)
        except ValueError as e:
            print("FAIL: %s: the json block does not parse (%s); mark an excerpt ```json excerpt"
                  % (where, e))
            fail = 1
            continue
        f = os.path.join(tmp, "block%d.json" % n)
        open(f, "w").write(body)
        kind = doc.get("format") if isinstance(doc, dict) else None
        if kind == "mario-trace-map":
            trace = os.path.join(src, "tests", "data", "pippy-4stage-skewed.json")
            rc, err = run(["import", trace, "--map", f, "--model", "tiny",
                           "-o", os.path.join(tmp, "p.json")])
            ok = "block%d.json" % n not in err
            what = "import --map"
        else:  # a config (ours or a Hugging Face config.json) or a plan
            rc, err = run(["simulate", f, "--quiet"])
            ok = rc in (0, 1)
            what = "simulate"
        if not ok:
            print("FAIL: %s: %s refuses the block (exit %d): %s" % (where, what, rc,
                                                                     err.strip()[:300]))
            fail = 1
print("%d json blocks loaded, %d excerpts marked, in %d files" % (n, excerpts, len(files)))
sys.exit(fail)
PY
