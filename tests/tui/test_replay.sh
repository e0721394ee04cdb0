#!/bin/sh
# tests/tui/test_replay.sh: the replay of a loaded trace in the explorer (issue 19: "the
# explorer can show the replayed row"): the plan simulated with every measured duration, as
# `compare` replays it (traces/replay.h). The title gives the replayed step and its error
# against the measured one, r shows the replayed row under each lane in place of the measured
# one, and the inspect panel the selected instruction's replayed times.
#
# Hand-worked answers with unit costs (Figure 2: 1F1B, 4 devices, 4 micro-batches, 21 t):
#   - the plan at twice the costs replays to its own 42 t (+0.0 %);
#   - the 21 t trace with device 0's first forward lasting 2 t instead of 1 (the rest as it
#     was): every instruction waits on that forward, through its device or its data, so the
#     replay is the whole schedule 1 t later, 22 t against the 21 t measured (+4.8 %); device
#     1's FW0 is replayed at [2, 3) t where it was measured at [1, 2).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-replay-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"
title() { sed -n 1p "$tmp/$1"; }
status() { tail -n 1 "$tmp/$1"; }

"$bin" simulate --unit-costs 2,4,2 --devices 4 --microbatches 4 --trace-out "$tmp/slow.trace.json" >/dev/null 2>&1
# (200 columns: the status lines name the trace's path)
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 200x40 --keys 'll' >"$tmp/s" 2>&1
check "slow: the title gives the replay, 42t +0.0%" "title s | grep -q 'replay 42t +0.0%'"
check "slow: the status too" "status s | grep -q 'measured step 42t, simulated 21t (-50.0%), replayed 42t (+0.0%)'"
check "slow: the measured row until r" "[ \$(grep -c '^ meas  ' $tmp/s) -eq 4 ] && ! grep -q '^ repl  ' $tmp/s"
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 200x40 --keys 'llr' >"$tmp/sr" 2>&1
check "r: a replayed row under each lane" "[ \$(grep -c '^ repl  ' $tmp/sr) -eq 4 ] && ! grep -q '^ meas  ' $tmp/sr"
check "r: inspect gives FW2's replayed times, [4, 6) t" "grep -q 'replayed start 4t  end 6t  (2t); measured end 6t' $tmp/sr"
check "r: the status says what the row is" "status sr | grep -q '^replayed row (every measured duration simulated, as compare replays it): step 42t, measured 42t (+0.00%); r: measured row'"
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 120x40 --keys 'llrr' >"$tmp/srr" 2>&1
check "r again: the measured row" "[ \$(grep -c '^ meas  ' $tmp/srr) -eq 4 ] && grep -q 'measured start 4t  end 6t' $tmp/srr"
"$bin" explore $fig2 --trace "$tmp/slow.trace.json" --dump-screen --size 120x40 --keys 'or' >"$tmp/sor" 2>&1
check "o then r: the row shown again, replayed" "[ \$(grep -c '^ repl  ' $tmp/sor) -eq 4 ]"

# Device 0's FW0 2 t long: the replay 22 t, 4.8 % over the measured 21 t.
"$bin" simulate $fig2 --trace-out "$tmp/fig2.trace.json" --plan-out "$tmp/fig2.json" >/dev/null 2>&1
sed 's/"name":"FW0","cat":"compute","ph":"X","ts":0,"dur":1000,"pid":0,/"name":"FW0","cat":"compute","ph":"X","ts":0,"dur":2000,"pid":0,/' \
    "$tmp/fig2.trace.json" >"$tmp/late.trace.json"
check "the late trace differs from the simulated one" "! cmp -s $tmp/fig2.trace.json $tmp/late.trace.json"
"$bin" explore $fig2 --trace "$tmp/late.trace.json" --dump-screen --size 120x40 --keys 'jr' >"$tmp/l" 2>&1
check "late: replay 22t, +4.8% against 21t measured" "title l | grep -q 'replay 22t +4.8%'"
check "late: device 1's FW0 replayed at [2, 3) t, measured to 2 t" "grep -q 'replayed start 2t  end 3t  (1t); measured end 2t' $tmp/l"
"$bin" compare "$tmp/fig2.json" "$tmp/late.trace.json" --json >"$tmp/cmp.json" 2>/dev/null
check "compare's replay says the same (22000 us, +4.76 %)" "json $tmp/cmp.json \"d['replay']['step_time'] == 22000 and abs(d['replay']['step_time_error_pct'] - 100 / 21) < 1e-9\""

# No trace: r says how to load one.
"$bin" explore $fig2 --dump-screen --size 120x40 --keys 'r' >"$tmp/n" 2>&1
check "r without a trace says why" "status n | grep -q '^r: no trace loaded (T loads one)'"

if command -v tmux >/dev/null 2>&1; then
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore $fig2; sleep 10"
    sleep 1
    tmux -L "$sock" send-keys T
    sleep 0.3
    tmux -L "$sock" send-keys -l "$tmp/late.trace.json"
    tmux -L "$sock" send-keys Enter
    sleep 0.5
    tmux -L "$sock" send-keys r
    sleep 0.5
    tmux -L "$sock" capture-pane -p >"$tmp/t"
    check "tmux: T then r, the replayed rows and the title" "[ \$(grep -c '^ repl  ' $tmp/t) -eq 4 ] && sed -n 1p $tmp/t | grep -q 'replay 22t +4.8%'"
    tmux -L "$sock" send-keys q
else
    skip "tmux not installed: T and r were not typed"
fi
exit $fail
