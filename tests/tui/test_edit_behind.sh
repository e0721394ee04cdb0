#!/bin/sh
# tests/tui/test_edit_behind.sh: an edit's passes run behind its base plan (issue 27 item 1),
# in tmux: GPT3-13B, V, 32 devices x 1024 micro-batches, m. The base of 896 is shown first (m steps
# down the ladder at large N) and the pass bar fills in; waited for, the title and the pass bar are those of the explorer
# opened headless on 896 micro-batches (every step built before the first frame, as edits
# were built before), and the prepose step it exports is the plan `optimize --plan-out` writes
# for that config (but for the global batch the edit keeps whole): the same steps and figures.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-behind-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
command -v tmux >/dev/null 2>&1 || skip "tmux not installed: no terminal to look at"

# wait_for REGEX SECONDS [ROW]: until row ROW of the screen (the status line when not given)
# matches; false after SECONDS
wait_for() {
    python3 - "$sock" "$@" <<'PY'
import re, subprocess, sys, time
sock, text, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
row = int(sys.argv[4]) if len(sys.argv) > 4 else -1
end = time.monotonic() + limit
while time.monotonic() < end:
    out = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True,
                         text=True).stdout.rstrip("\n").split("\n")
    if len(out) > max(row, 0) and re.search(text, out[row]):
        sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
}

flags="--model GPT3-13B --devices 32 --microbatches 1024"
tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
    "LANG=C.UTF-8 TERM=xterm-256color $bin explore $flags; sleep 600"
wait_for 'base: step' 120 || { echo "the explorer did not open"; exit 1; }
tmux -L "$sock" send-keys m
check "m: the base of 896 micro-batches is shown (m steps down the ladder at large N)" "wait_for ' N 896 mbs 1 ' 120 0"
# the passes behind it: the status line says which runs (unless they were done already)
tmux -L "$sock" capture-pane -p | tail -n 1 >"$tmp/status"
echo "status after m: $(cat "$tmp/status")"
check "... then its passes fill the pass bar" "wait_for 'prepose [0-9.]+s ' 240 1"
check "... and the status line says the edit" "wait_for '^micro-batches 1024 -> 896' 10"
tmux -L "$sock" capture-pane -p | sed -n 1,2p >"$tmp/behind"
LANG=C.UTF-8 "$bin" explore $flags --microbatches 896 --dump-screen --size 120x40 \
    | sed -n 1,2p >"$tmp/whole"
check "title and pass bar as the explorer opened on 896 shows them" \
    "diff $tmp/behind $tmp/whole"
# prepose exported against optimize --plan-out
tmux -L "$sock" send-keys n n n n
wait_for '^prepose: step' 30 || echo "prepose was not shown"
tmux -L "$sock" send-keys e
tmux -L "$sock" send-keys -l "$tmp/explored.json"
tmux -L "$sock" send-keys Enter
wait_for '^wrote ' 60 || echo "no export"
"$bin" optimize $flags --microbatches 896 --plan-out "$tmp/optimized.json" >/dev/null 2>&1
# the edit keeps the global batch whole (N x mbs x dp: 896), --microbatches alone does not
# (the config's 128): the plans are compared with that one key aside
same_plan() {
    python3 - "$tmp/explored.json" "$tmp/optimized.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    d["config"].pop("global_batch_size", None)
sys.exit(a != b)
PY
}
check "the prepose plan is optimize's" same_plan
exit $fail
