#!/bin/sh
# tests/tui/test_oom.sh: a plan over the memory cap is loud (issue 20, item 3): the header
# ends in a red "OOM: dev D PEAK > CAP", the status line says how many devices are over, and
# a peak is printed precisely enough to tell it from the cap (40.02G beside a 40G cap).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-oom-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

# GPipe keeps all 128 micro-batches' activations: every device over 40G, the last the most.
"$bin" explore --scheme GPipe --dump-screen --size 120x40 >"$tmp/g" 2>&1
check "GPipe: OOM in the header (the device count left to the status line)" "sed -n 1p $tmp/g | grep -q 'OOM: dev 7 256.3G > 40G *\$'"
check "GPipe: and in the status line" "tail -n 1 $tmp/g | grep -q '^OOM: 8 of 8 devices over the 40G cap (dev 7 at 256.3G)'"
check "GPipe: the header keeps model, scheme, devices, step and samples/s" "sed -n 1p $tmp/g | grep -q '^ GPT3-1.6B  GPipe  pp 8 dp 1  .* A100-40G .*step 6.504s  19.68/s'"
"$bin" explore --scheme GPipe --dump-screen --size 80x24 >"$tmp/g80" 2>&1
check "GPipe at 80x24: OOM, step and rate in 80 columns" \
    "sed -n 1p $tmp/g80 | grep -q '^ GPT3-1.6B  GPipe  pp8x1  A100-40G  step 6.504s  19.68/s  *OOM dev7 256.3G>40G *\$'"
# PipeDream on one device: a peak of 40.02 GiB against 40 GiB is not "40.0G".
"$bin" explore --scheme PipeDream --devices 1 --dump-screen --size 120x40 >"$tmp/p" 2>&1
check "40.02G > 40G in the header" "sed -n 1p $tmp/p | grep -q 'OOM: dev 0 40.02G > 40G *\$'"
check "40.02G beside the bar" "grep -q '^dev 0 .* 40.02G τ0' $tmp/p"
check "one device, singular" "tail -n 1 $tmp/p | grep -q '^OOM: 1 of 1 device over the 40G cap'"
# 1F1B fits: no OOM anywhere.
"$bin" explore --dump-screen --size 120x40 >"$tmp/v" 2>&1
check "1F1B fits: no OOM" "! grep -q OOM $tmp/v"
# [ ten times: the cap under every device's peak, and the edit says so.
"$bin" explore --dump-screen --size 120x40 --keys '[[[[[[[[[[' >"$tmp/c" 2>&1
check "[ x10: OOM in the header" "sed -n 1p $tmp/c | grep -q 'OOM: dev 0 18.0G > 4.295G *\$'"
check "[ x10: the edit's status says OOM" "tail -n 1 $tmp/c | grep -q '^cap 5.37 GiB -> 4.29 GiB; OOM: 8 of 8 devices'"

if command -v tmux >/dev/null 2>&1; then
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore --scheme GPipe; sleep 5"
    sleep 1
    tmux -L "$sock" capture-pane -e -p >"$tmp/t" 2>/dev/null
    # #d55e00 (PAL_MEM_OVER) is xterm-256 colour 166: the badge's background
    check "tmux: the OOM badge is red" "sed -n 1p $tmp/t | grep -q '48;5;166m OOM: dev 7'"
    tmux -L "$sock" send-keys q
else
    skip "tmux not installed: the badge's colour was not checked"
fi
exit $fail
