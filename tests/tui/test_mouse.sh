#!/bin/sh
# tests/tui/test_mouse.sh: the explorer's mouse (issue 20, item 8), as htop has it: a click
# selects an instruction, a lane, a pass step or a tuner row (a second click on the selected
# row loads it), the wheel zooms around the pointer's time, a drag pans. Headless through
# --keys (\Mc click, \Mu \Mw wheel, \Md drag) and in tmux with xterm's SGR mouse reports.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-mouse-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"
frame() { # frame NAME KEYS: Figure 2 at 120x40 (4 lanes of 3 rows from row 3, 4 rows apart;
    # the Gantt from column 7, 88 cells for 28 t)
    "$bin" explore $fig2 --dump-screen --size 120x40 --keys "$2" >"$tmp/$1" 2>&1
}
axis() { grep -E '^ +t +' "$tmp/$1"; }

# Device 1's lane is rows 7-9; column 40 is t = (33.5 / 88) x 28 = 10.7: FW3 (10-11 t).
frame click '\Mc40,8;'
check "click selects FW3 of device 1" "grep -q '^ FW3  device 1  mb 3' $tmp/click && tail -n 1 $tmp/click | grep -q '^FW3 on device 1'"
frame click2 '\Mc40,10;'
check "a blank row between lanes selects nothing" "grep -q '^ FW0  device 0  mb 0' $tmp/click2"
frame lane '\Mc2,15;'
check "click on a lane's name selects that lane" "grep -q 'device 3  mb' $tmp/lane"
frame pass '\Mc30,1;'
check "click in the pass bar shows that step" "sed -n 1p $tmp/pass | grep -q 'step 25t' && tail -n 1 $tmp/pass | grep -q '^overlap: step 25t'"
# The wheel: twice in around t = 10.7, the axis from 8 to 14 t; once out of it, back to 4x.
frame wheel '\Mu40,8;\Mu40,8;'
check "wheel up twice: 4 x around the pointer" "axis wheel | grep -qE '^ +t +8 +9 +10 +11 +12 +13 +14 '"
frame wheel3 '\Mu40,8;\Mu40,8;\Mw40,8;'
check "wheel down: out again" "axis wheel3 | grep -qE '^ +t +[0-9]+ +[0-9]+ +[0-9]+ ' && ! axis wheel3 | grep -qE '^ +t +8 +9 '"
# A drag of 30 cells to the left after the zoom: 30 x 7 / 88 = 2.4 t later.
frame drag '\Mu40,8;\Mu40,8;\Md60,8,30,8;'
check "drag pans the axis" "axis drag | grep -qE '^ +t +11 +12 +13 +14 +15 +16 +17 '"
check "a drag selects nothing" "grep -q '^ FW0  device 0  mb 0' $tmp/drag"
# The tuner: a click selects its row (rank 3, the list's third row at screen row 7), a second
# click on it loads it.
# one GPU a node: the tuner's grid keeps tp 1 (the rows below are tp 1 rows)
printf '{"num_device": 8, "global_batch_size": 32, "cluster": {"gpus_per_node": 1}}\n' >"$tmp/tp1.json"
"$bin" explore "$tmp/tp1.json" --dump-screen --keys 't\Mc20,7;' >"$tmp/t1" 2>&1
# the label of rank 3 as listed (which candidate is third moves with the cost model)
third=$("$bin" explore "$tmp/tp1.json" --dump-screen --keys 't' 2>/dev/null | awk '$1 == 3 {print $2; exit}')
check "tuner: click selects a row ($third)" "[ -n '$third' ] && grep -q '^ $third (scheme-pp' $tmp/t1"
"$bin" explore "$tmp/tp1.json" --dump-screen --keys 't\Mc20,7;\Mc20,7;' >"$tmp/t2" 2>&1
check "tuner: a second click loads it" "sed -n 1p $tmp/t2 | grep -q '  ZB-W v[0-9]  pp 4 x dp 2  N 2 x mbs 8 ' && tail -n 1 $tmp/t2 | grep -q '^loaded $third'"

if command -v tmux >/dev/null 2>&1; then
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore $fig2; sleep 10"
    sleep 1
    # xterm's SGR reports, 1-based: button 0 press M / release m, 64 wheel up, 32 motion
    tmux -L "$sock" send-keys -l "$(printf '\033[<0;41;9M\033[<0;41;9m')"
    sleep 0.4
    tmux -L "$sock" capture-pane -p >"$tmp/m1"
    check "tmux: click selects FW3 of device 1" "grep -q '^ FW3  device 1  mb 3' $tmp/m1"
    tmux -L "$sock" send-keys -l "$(printf '\033[<64;41;9M')"
    sleep 0.2
    tmux -L "$sock" send-keys -l "$(printf '\033[<64;41;9M')"
    sleep 0.4
    tmux -L "$sock" capture-pane -p >"$tmp/m2"
    check "tmux: the wheel zooms" "grep -qE '^ +t +8 +9 +10 +11 +12 +13 +14 ' $tmp/m2"
    # a drag as a terminal sends it: press, motion with the button held, release, in time
    for ev in '0;61;9M' '32;45;9M' '0;31;9m'; do
        tmux -L "$sock" send-keys -l "$(printf '\033[<%s' "$ev")"
        sleep 0.2
    done
    tmux -L "$sock" capture-pane -p >"$tmp/m3"
    check "tmux: a drag pans" "grep -qE '^ +t +11 +12 +13 +14 +15 +16 +17 ' $tmp/m3"
    tmux -L "$sock" send-keys q
else
    skip "tmux not installed: no terminal mouse"
fi
exit $fail
