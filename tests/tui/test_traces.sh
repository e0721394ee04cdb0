#!/bin/sh
# tests/tui/test_traces.sh: a measured trace in the explorer (issue 20, item 6): 0 fits the
# measured step too, the inspect panel shows the selected instruction's measured start, end
# and duration, and a trace made from another config is loudly said to be one.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-traces-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
sgr() { python3 "${top_srcdir:-.}/tests/tui/sgr.py" "$@"; }
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"

# The same plan at twice the costs: every instruction matched, each twice as long (42 t).
"$bin" simulate --unit-costs 2,4,2 --devices 4 --microbatches 4 --trace-out "$tmp/slow.trace.json" >/dev/null 2>&1
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 120x40 --keys 'll' >"$tmp/s" 2>&1
check "status: measured 42t against 21t" "tail -n 1 $tmp/s | grep -q '84 of 84 instructions matched; measured step 42t, simulated 21t (-50.0%)'"
check "the fit spans the measured step (axis to 40 t)" "grep -E '^ +t +0 ' $tmp/s | grep -q ' 40 '"
# FW2 of device 0: simulated [2, 3) t, measured [4, 6) t
check "inspect: simulated FW2" "grep -q 'start 2t  end 3t  (1t)' $tmp/s"
check "inspect: measured FW2" "grep -q 'measured start 4t  end 6t  (2t, error -50.0%)' $tmp/s"
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 120x40 --keys '++++0' >"$tmp/s0" 2>&1
check "0 after zooming fits both again" "grep -E '^ +t +0 ' $tmp/s0 | grep -q ' 40 '"
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 120x40 --keys 'o0' >"$tmp/so" 2>&1
check "o hides the measured rows, 0 then fits the simulation (28 t)" "! grep -q '^ meas  ' $tmp/so && ! grep -E '^ +t +0 ' $tmp/so | grep -q ' 40 '"

# A trace made from another config: 8 micro-batches for a 4-micro-batch plan, and the
# reverse (the default config's 8 x 128 plan against Figure 2's trace).
"$bin" simulate $fig2 --trace-out "$tmp/m4.trace.json" >/dev/null 2>&1
"$bin" simulate --unit-costs 1,2,1 --devices 4 --microbatches 8 --trace-out "$tmp/m8.trace.json" >/dev/null 2>&1
"$bin" explore $fig2 --trace "$tmp/m8.trace.json" --dump-screen --size 160x40 >"$tmp/m8" 2>&1
check "extra events: another config?" "tail -n 1 $tmp/m8 | grep -q 'trace .*m8.trace.json: 84 of 84 instructions matched, but 80 of its events match none: was it made from another config?'"
"$bin" explore --unit-costs 1,2,1 --devices 4 --microbatches 8 --trace "$tmp/m4.trace.json" --dump-screen --size 160x40 >"$tmp/m4" 2>&1
check "missing instructions: only 84 of 164" "tail -n 1 $tmp/m4 | grep -q 'only 84 of 164 instructions matched: was it made from another config?'"
check "inspect: an instruction the trace lacks" "\"$bin\" explore --unit-costs 1,2,1 --devices 4 --microbatches 8 --trace $tmp/m4.trace.json --dump-screen --size 160x40 --keys '/BW7\\n' | grep -q 'measured: not in the trace'"

if command -v tmux >/dev/null 2>&1; then
    tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore --unit-costs 1,2,1 --devices 4 --microbatches 8; sleep 10"
    sleep 1
    tmux -L "$sock" send-keys T
    sleep 0.3
    tmux -L "$sock" send-keys -l "$tmp/m4.trace.json"
    tmux -L "$sock" send-keys Enter
    sleep 0.5
    tmux -L "$sock" capture-pane -e -p >"$tmp/t"
    # the warning is an error line: bold, in PAL_MEM_OVER (#d55e00 = xterm 166)
    check "tmux: T loads it and the warning is red" "sgr $tmp/t 39 0 | grep -q '^t 166 default b\$' && tmux -L $sock capture-pane -p | tail -n 1 | grep -q 'only 84 of 164'"
    tmux -L "$sock" send-keys q
else
    skip "tmux not installed: T was not typed"
fi
exit $fail
