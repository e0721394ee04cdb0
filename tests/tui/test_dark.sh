#!/bin/sh
# tests/tui/test_dark.sh: the explorer on a dark terminal (issue 20, item 4), in tmux with
# capture-pane -e: nothing is drawn in ink a dark (or light) theme hides, nor on the page's
# white; the cap marker is the terminal's own ink in bold, not colour 234; the selection is
# underlined in bold (never reverse video, which read as idle time) with a caret on the axis;
# the critical path has a colour of its own (Okabe-Ito black = xterm 16, on the op fills).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-dark-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
sgr() { python3 "${top_srcdir:-.}/tests/tui/sgr.py" "$@"; }
command -v tmux >/dev/null 2>&1 || skip "tmux not installed: no terminal to look at"

start() { # start ARGS...: the explorer in a fresh 120x40 xterm-256color pane
    tmux -L "$sock" kill-server >/dev/null 2>&1
    sleep 0.2
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore $*; sleep 10"
    sleep 1
}
grab() { sleep 0.4; tmux -L "$sock" capture-pane -e -p >"$tmp/$1"; }

start
grab t0
check "nothing in ink a theme hides" "[ \$(sgr $tmp/t0 unseen) -eq 0 ]"
# the cap marker: dev 0's memory column, "│" in the terminal's own ink, bold
col=$(sgr "$tmp/t0" find 3 "│")
check "the cap marker is drawn" "[ $col -gt 90 ]"
check "the cap marker: own ink, bold" "sgr $tmp/t0 3 $col | grep -q '^│ default default b\$'"
# the selection: FW0 of dev 0 (the first Gantt cell, blue 25): underlined, bold, white ink
check "selection: underlined and bold on blue" "sgr $tmp/t0 3 7 | grep -q '^  231 25 bu\$'"
check "selection: not reverse video" "! sgr $tmp/t0 3 7 | grep -q 'r\$'"
axis=$(grep -n '▲' "$tmp/t0" | head -1 | cut -d: -f1)
check "selection: a caret on the axis" "[ -n \"$axis\" ] && sgr $tmp/t0 \$((axis - 1)) 7 | grep -q '^▲ default default b\$'"
# the axis and idle time: the terminal's own ink, dim
check "axis: own ink, dim" "sgr $tmp/t0 \$((axis - 1)) 8 | grep -q '^─ default default d\$'"
check "title bar: the terminal's colours reversed" "sgr $tmp/t0 0 5 | grep -q ' default default br\$'"

# the critical path: c draws it in black (16) through the boxes (here BW's green, 35); the
# legend names it; its marks on boxes finer than a cell sit on the box's fill, not on the
# terminal's paper (where a dark theme would hide them: "unseen" below)
tmux -L "$sock" send-keys c
grab t1
check "critical path in a colour of its own" "[ \$(sgr $tmp/t1 count 16 35) -gt 20 ]"
check "the legend names it" "sed -n 3p $tmp/t1 | grep -q 'critical path'"
check "still nothing unseen" "[ \$(sgr $tmp/t1 unseen) -eq 0 ]"

# GPipe over the cap, the tuner, a pass step: nothing unseen either
start --scheme GPipe
grab t2
check "GPipe (OOM): nothing unseen" "[ \$(sgr $tmp/t2 unseen) -eq 0 ]"
# item 1: GPipe's all-forward phase is the forward's blue (xterm 25), not the page's white:
# dev 0 runs 128 forwards of 4.6 ms, 590 ms of a 3.02 s axis over 88 cells: cells 0-16
check "GPipe: the forward phase is blue" "(for c in 8 12 16 20; do sgr $tmp/t2 3 \$c | grep -q ' 25 ' || exit 1; done)"
tmux -L "$sock" send-keys n n
grab t3
check "a pass step: nothing unseen" "[ \$(sgr $tmp/t3 unseen) -eq 0 ]"
start --devices 8 --global-batch 32
tmux -L "$sock" send-keys t
sleep 3
grab t4
check "the tuner: nothing unseen" "grep -q 'tuner: ' $tmp/t4 && [ \$(sgr $tmp/t4 unseen) -eq 0 ]"
tmux -L "$sock" send-keys q
exit $fail
