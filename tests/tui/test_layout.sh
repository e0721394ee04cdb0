#!/bin/sh
# tests/tui/test_layout.sh: the explorer's layout at 200x50, 120x40 and 80x24 (issue 20,
# item 5): lanes grow to 3 rows with op names and micro-batches when rows are free, 80
# columns keep step time and samples/s and narrow the memory column, a one-line legend names
# the colours and abbreviations, the tuner explains its labels, and below 80x24 the "too
# small" message fits the terminal and keys are not acted on unseen (tmux).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
sock="mt-layout-$$"
cleanup() { tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"
maxlen() { # the longest line of $1, in characters
    python3 -c "import sys; print(max([len(l.rstrip('\\n')) for l in open(sys.argv[1], encoding='utf-8')] + [0]))" "$1"
}

# 200x50, Figure 2: 38 rows for 4 lanes: 3 rows each and a blank row between them; op names
# on a lane's first row, micro-batches on its second (dev 0: FW0..FW3, then BW0 at 10 t).
"$bin" explore $fig2 --dump-screen --size 200x50 >"$tmp/big" 2>&1
check "200x50: four lanes" "[ \$(grep -c '^dev [0-3] ' $tmp/big) -eq 4 ]"
check "200x50: dev 0's first row names the ops" "grep '^dev 0 ' $tmp/big | grep -q 'FW  *FW  *FW  *FW .* BW '"
check "200x50: its second row the micro-batches" "sed -n 5p $tmp/big | grep -qE '^ +0 +1 +2 +3 +[·]+ +0 '"
check "200x50: lanes 4 rows apart" "sed -n 8p $tmp/big | grep -q '^dev 1 '"
# the default (8 devices) at 200x50: no longer eight one-row lanes over ~30 blank rows
"$bin" explore --dump-screen --size 200x50 >"$tmp/big8" 2>&1
check "200x50 default: lanes of 3 rows" "sed -n 5,6p $tmp/big8 | grep -c '^       .*░░░' | grep -q 2 && sed -n 8p $tmp/big8 | grep -q '^dev 1 '"
# 38 rows: 8 lanes x 4 = 32, less the last gap, and the axis: 7 gaps and 5 rows spare
check "200x50 default: few blank rows in the Gantt" "[ \$(sed -n 4,41p $tmp/big8 | grep -c '^\$') -le 12 ]"

# 80x24: the header keeps step time and samples/s, the memory column is 16 wide (the Gantt
# 80 - 7 - 16 - 1 = 56 cells), every line fits.
"$bin" explore --dump-screen --size 80x24 >"$tmp/small" 2>&1
check "80x24: step and samples/s" "sed -n 1p $tmp/small | grep -q 'step 6.504s  19.68/s'"
check "80x24: nothing past column 80" "[ \$(maxlen $tmp/small) -le 80 ]"
check "80x24: the memory column beside a 56-cell Gantt" "grep '^dev 0 ' $tmp/small | python3 -c \"import sys; l = sys.stdin.buffer.read().decode().rstrip(); sys.exit(0 if l[64] == '▕' and l.endswith('18.0G') and len(l) == 80 else 1)\""
check "80x24: the pass bar fits, the shown step's time kept" "sed -n 2p $tmp/small | grep -q 'base 6.504s › ckpt +29% › ovl +27% › red +20% › prepose +19%'"

# The legend: the ops of the shown plan, idle, the receives, and lane names with chunks.
check "legend: FW, BW, idle, RA/RG" "sed -n 3p $tmp/small | grep -q 'FW forward .*BW backward .*· idle  RA/RG receive'"
"$bin" explore --scheme ZB-H1 --dump-screen >"$tmp/zb" 2>&1
check "legend: B and W of split backward" "sed -n 3p $tmp/zb | grep -q 'B input grad .*W weight grad'"
"$bin" explore --scheme W --dump-screen >"$tmp/w" 2>&1
check "legend: d0.1 on chunked schemes" "sed -n 3p $tmp/w | grep -q 'd0.1 device 0 chunk 1'"
"$bin" explore --dump-screen --keys nn >"$tmp/nn" 2>&1
check "legend: CFW and RC after ckpt" "sed -n 3p $tmp/nn | grep -q 'CFW ckpt forward .*RC recompute'"

# The tuner says what its labels mean, for the selected row.
# one GPU a node: the tuner's grid keeps tp 1 (the rows below are tp 1 rows)
printf '{"num_device": 8, "global_batch_size": 32, "cluster": {"gpus_per_node": 1}}\n' >"$tmp/tp1.json"
"$bin" explore "$tmp/tp1.json" --dump-screen --keys 'tjj' >"$tmp/t" 2>&1
# (which row is third moves with the cost model; what its label says must not)
check "tuner: the selected label explained" "sed -n 39p $tmp/t | grep -Eq '^ ZB-W-4-8x([0-9])(-do)? \\(scheme-pp-mbsxchunks(-do)?\\): ZB-W, pp 4, dp 2, micro-batch size 8, [0-9] chunks(, distributed optimizer)?; ckpt m'"

# Too small: the message wrapped to the width, at several sizes.
for s in 60x20 30x10 20x6; do
    "$bin" explore --dump-screen --size $s >"$tmp/ts" 2>&1
    w=${s%x*}
    check "$s: the message fits" "[ \$(maxlen $tmp/ts) -le $w ] && tr '\n' ' ' <$tmp/ts | grep -q 'terminal too small .*need 80x24, .*have $s'"
done

# The help at 80x24: wrapped to the width, scrolled with j/k when taller than the screen.
"$bin" explore --dump-screen --size 80x24 --keys '?' >"$tmp/h" 2>&1
check "help at 80x24: within 80 columns" "[ \$(maxlen $tmp/h) -le 80 ]"
check "help at 80x24: says it scrolls" "sed -n 2p $tmp/h | grep -q '^  lines 1-21 of [0-9]*   j/k, PgDn/PgUp: scroll'"
"$bin" explore --dump-screen --size 80x24 --keys '?jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj' >"$tmp/h2" 2>&1
check "help at 80x24: j reaches its end" "grep -q 'OOM = over the cap.\$' $tmp/h2 && ! grep -q 'OOM = over the cap.\$' $tmp/h"
"$bin" explore --dump-screen --size 80x24 --keys '?jq' >"$tmp/h3" 2>&1
check "help: another key goes back" "! grep -q 'j/k, PgDn/PgUp' $tmp/h3 && grep -q '^dev 0 ' $tmp/h3"

# --png: a screenshot of the frame, 9 x 18 pixels a cell (120x40: 1080 x 720)
"$bin" explore --dump-screen --size 120x40 --png "$tmp/s.png" >/dev/null 2>&1
check "--png writes a 1080 x 720 PNG" "python3 -c \"import struct, sys; d = open('$tmp/s.png', 'rb').read(24); sys.exit(0 if d[:8] == b'\\x89PNG\\r\\n\\x1a\\n' and struct.unpack('>II', d[16:24]) == (1080, 720) else 1)\""

if command -v tmux >/dev/null 2>&1; then
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "LANG=C.UTF-8 TERM=xterm-256color $bin explore; sleep 5"
    sleep 1
    tmux -L "$sock" resize-window -x 60 -y 20 2>/dev/null
    sleep 0.5
    tmux -L "$sock" capture-pane -p >"$tmp/t1"
    check "tmux 60x20: too small, and it fits" "grep -q 'terminal too small' $tmp/t1 && [ \$(maxlen $tmp/t1) -le 60 ]"
    tmux -L "$sock" send-keys D D s t
    sleep 0.5
    tmux -L "$sock" resize-window -x 120 -y 40 2>/dev/null
    sleep 0.5
    tmux -L "$sock" capture-pane -p >"$tmp/t2"
    check "tmux: keys typed unseen were not acted on" "sed -n 1p $tmp/t2 | grep -q '  V  pp 8 x dp 1 ' && ! grep -q 'tuner: ' $tmp/t2"
    tmux -L "$sock" send-keys q
else
    skip "tmux not installed: resizing was not checked"
fi
exit $fail
