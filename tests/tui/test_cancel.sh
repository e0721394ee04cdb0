#!/bin/sh
# tests/tui/test_cancel.sh: nothing freezes (issue 27 item 2), in tmux. Esc during a long tuner
# run (GPT3-13B on 32 devices, global batch 1024: 836 candidates, 49 s, one candidate up to
# ~4 s) gives a usable screen back within 0.5 s: the status says the tuner stopped, a key acts
# at once (n steps to ckpt) while the candidates in flight finish in the background, and what
# ran is kept: t shows it ("N ran before Esc"), not a fresh run. A loaded machine can delay one
# try past 0.5 s; the check fails only when two tries in a row do.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-cancel-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
command -v tmux >/dev/null 2>&1 || skip "tmux not installed: no terminal to look at"

now() { python3 -c 'import time; print(time.monotonic())'; }
last() { tmux -L "$sock" capture-pane -p | tail -n 1; }
# wait_for TEXT SECONDS: until the status line holds TEXT; false after SECONDS
wait_for() {
    python3 - "$sock" "$1" "$2" <<'EOF'
import subprocess, sys, time
sock, text, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
end = time.monotonic() + limit
while time.monotonic() < end:
    out = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True,
                         text=True).stdout.rstrip("\n").split("\n")
    if out and text in out[-1]:
        sys.exit(0)
    time.sleep(0.01)
sys.exit(1)
EOF
}

# try: start the explorer, start the tuner, Esc after 1.5 s; prints the seconds from Esc to
# the stopped status line (99 when it never came).
try() {
    tmux -L "$sock" kill-server >/dev/null 2>&1
    sleep 0.2
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore --model GPT3-13B --devices 32 --global-batch 1024; sleep 60"
    wait_for 'base: step' 30 || { echo 99; return; }
    tmux -L "$sock" send-keys t
    wait_for 'tuning [' 30 || { echo 99; return; }
    sleep 1.5
    t0=$(now)
    tmux -L "$sock" send-keys Escape
    if wait_for 'tuner stopped by Esc after' 10; then
        python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$(now)" "$t0"
    else
        echo 99
    fi
}

s=$(try)
if python3 -c "import sys; sys.exit(float(sys.argv[1]) <= 0.5)" "$s"; then
    echo "first try: ${s} s from Esc to a usable screen; again"
    s=$(try)
fi
check "Esc: a usable screen within 0.5 s (took ${s} s)" \
    "python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 0.5)' $s"
tmux -L "$sock" capture-pane -p >"$tmp/stopped"
check "... the status says how far it got and where the rest goes" \
    "tail -n 1 $tmp/stopped | grep -q '^tuner stopped by Esc after [0-9]* of 836 candidates: the ones in flight finish in the background; t shows what ran'"
check "... the Gantt is on screen" "grep -q '^dev 0 ' $tmp/stopped"
tmux -L "$sock" send-keys n
check "... a key acts at once: n shows ckpt" "wait_for 'ckpt: step 50.12s' 0.5"
check "the candidates in flight finish and are kept" \
    "wait_for 'tuner stopped: ' 30 && last | grep -q '^tuner stopped: [0-9]* of 836 candidates ran and are kept; t shows them'"
tmux -L "$sock" send-keys t
check "t shows what ran, not a fresh run" \
    "wait_for 'tuner stopped by Esc: ' 2 && tmux -L $sock capture-pane -p | grep -q 'tuner: 836 candidates ([0-9]* ran before Esc)'"
tmux -L "$sock" send-keys Escape
check "Esc back to the Gantt" "wait_for 'step ' 2 && ! last | grep -q tuner"
exit $fail
