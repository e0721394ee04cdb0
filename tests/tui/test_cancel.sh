#!/bin/sh
# tests/tui/test_cancel.sh: nothing freezes (issue 27 item 2), in tmux. Esc during a long tuner
# run (GPT3-13B on 32 devices, global batch 1024: over a thousand candidates, tens of seconds, one candidate up to
# ~4 s; the plan shown has micro-batches of 8, 128 of them, quick to draw) stops it within
# 0.5 s: the candidates in flight give up at their next pass (issue 27 item 3), the status says
# how many ran and are kept, a key acts at once (n steps to ckpt), and t shows what ran ("N ran
# before Esc"), not a fresh run. An edit of a huge config (GPT3-13B x 32 at 4095
# micro-batches) shows the new base plan within a second and runs the passes behind it, the
# status line naming the pass that runs: Esc stops them within 0.5 s, keeping base, and keys
# act; the next edit starts over from its config and, waited for, fills the pass bar. A loaded
# machine can delay a try past 0.5 s; a check fails only when three tries in a row do.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-cancel-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
command -v tmux >/dev/null 2>&1 || skip "tmux not installed: no terminal to look at"

last() { tmux -L "$sock" capture-pane -p | tail -n 1; }
# wait_for TEXT SECONDS [re]: until the status line holds TEXT (a Python regular expression
# with re); false after SECONDS
wait_for() {
    python3 - "$sock" "$@" <<'EOF'
import re, subprocess, sys, time
sock, text, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
regex = len(sys.argv) > 4
end = time.monotonic() + limit
while time.monotonic() < end:
    out = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True,
                         text=True).stdout.rstrip("\n").split("\n")
    if out and (re.search(text, out[-1]) if regex else text in out[-1]):
        sys.exit(0)
    time.sleep(0.03)
sys.exit(1)
EOF
}

# esc_latency TEXT: presses Esc and prints the seconds until the status line holds TEXT (99
# after 10 s), timed in one process: no program start-up inside the measure.
esc_latency() {
    python3 - "$sock" "$1" <<'EOF'
import subprocess, sys, time
sock, text = sys.argv[1], sys.argv[2]
t0 = time.monotonic()
subprocess.run(["tmux", "-L", sock, "send-keys", "Escape"])
while time.monotonic() < t0 + 10:
    out = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True,
                         text=True).stdout.rstrip("\n").split("\n")
    if out and text in out[-1]:
        print("%.3f" % (time.monotonic() - t0))
        sys.exit(0)
    time.sleep(0.01)
print(99)
EOF
}

# tries TRY: TRY until its seconds from Esc to a usable screen are within 0.5 s, three times at
# most (the whole suite runs two tests at a time under ASan on two cores: CI saw 0.62 and 0.60 s
# in a row where a quiet machine takes 0.09-0.21 s); prints the last try's seconds (its tmux
# session stays for the checks after it).
tries() {
    for k in 1 2 3; do
        t=$("$1")
        python3 -c "import sys; sys.exit(float(sys.argv[1]) > 0.5)" "$t" && break
        echo "try $k: $t s from Esc to a usable screen" >&2
    done
    echo "$t"
}

# try: start the explorer, start the tuner, Esc after 1.5 s; prints the seconds from Esc to
# the status line that says what ran is kept: the tuner's thread has ended (99 when it never
# came).
try() {
    tmux -L "$sock" kill-server >/dev/null 2>&1
    sleep 0.2
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore --model GPT3-13B --devices 32 --global-batch 1024 --micro-batch-size 8; sleep 600"
    wait_for 'base: step' 120 || { echo 99; return; }
    tmux -L "$sock" send-keys t
    wait_for 'tuning [' 30 || { echo 99; return; }
    sleep 1.5
    tmux -L "$sock" capture-pane -p | tail -n 1 >"$tmp/bar"
    esc_latency 'candidates ran and are kept'
}

s=$(tries try)
check "Esc: the tuner stopped, what ran kept, within 0.5 s (took ${s} s)" \
    "python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 0.5)' $s"
check "the tuner's bar says about how long it has left (issue 41 item 6): $(cut -c1-30 "$tmp/bar")..." \
    "grep -qE ', about [0-9.]+ (s|min|h) left' $tmp/bar"
tmux -L "$sock" capture-pane -p >"$tmp/stopped"
echo "status after Esc: $(tail -n 1 "$tmp/stopped")"
check "... the status says how far it got" \
    "tail -n 1 $tmp/stopped | grep -qE '^tuner stopped: [0-9]+ of [0-9]+ candidates ran and are kept; t shows them'"
check "... the Gantt is on screen" "grep -q '^dev 0 ' $tmp/stopped"
tmux -L "$sock" send-keys n
check "... a key acts: n shows ckpt" "wait_for 'ckpt: step ' 5"
# t while the candidates in flight finish says so; once they have, it shows what ran
for i in $(seq 40); do
    tmux -L "$sock" send-keys t
    wait_for 'tuner stopped by Esc: ' 5 && break
    last | grep -qE 'the stopped tuner is finishing its candidates in flight|^tuner stopped: ' || break
done
check "t shows what ran, not a fresh run" \
    "last | grep -q '^tuner stopped by Esc: [0-9]* of [0-9]* candidates ran and are ranked' && tmux -L $sock capture-pane -p | grep -q 'tuner: [0-9]* candidates ([0-9]* ran before Esc)'"
tmux -L "$sock" send-keys Escape
check "Esc back to the Gantt" "wait_for 'step ' 5 && ! last | grep -q tuner"

# try_edit: the huge config drawn, M, Esc once its base is shown and the passes run behind it;
# the seconds from Esc to the status line that says they stopped (99 when it never came).
try_edit() {
    tmux -L "$sock" kill-server >/dev/null 2>&1
    sleep 0.2
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore --model GPT3-13B --devices 32 --microbatches 4095; sleep 600"
    wait_for 'base: step' 120 || { echo 99; return; }
    tmux -L "$sock" send-keys M
    wait_for '^passes [0-4]/4: .*Esc: stop \(keeps the steps made\)' 60 re || { echo 99; return; }
    esc_latency 'passes stopped by Esc: base'
}
s=$(tries try_edit)
check "an edit's passes: Esc stops them within 0.5 s (took ${s} s)" \
    "python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 0.5)' $s"
check "... the new config's base is shown (N 4096: M goes up to the ladder's next rung)" \
    "tmux -L $sock capture-pane -p | sed -n 1p | grep -q ' N 4096 mbs 1 '"
# n up to the first step not made (base, or a step or two more on a loaded machine)
not_built() {
    for i in 1 2 3 4 5; do
        tmux -L "$sock" send-keys n
        wait_for '^[a-z]+ was not built: the passes were stopped' 3 re && return 0
    done
    return 1
}
check "... a step not built says so" not_built
# The next edit starts over from its config: its base, then its passes fill the pass bar.
# Their end is waited for at most two minutes: minutes under the sanitizers.
tmux -L "$sock" send-keys M
check "the next edit builds its base and runs its passes behind it" \
    "wait_for '^passes [0-4]/4: [a-z]+.*steps? made\), [0-9.]+ s   Esc: stop' 60 re && tmux -L $sock capture-pane -p | sed -n 1p | grep -q ' N 5120 mbs 1 '"
if wait_for '^micro-batches 4096 -> 5120' 120 re; then
    check "... and, done, fills the pass bar" \
        "tmux -L $sock capture-pane -p | sed -n 2p | grep -q 'prepose [0-9.]*s '"
else
    echo "the next edit's passes did not end within two minutes (a loaded machine): not checked"
fi
exit $fail
