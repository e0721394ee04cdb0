#!/bin/sh
# tests/tui/test_small.sh: the explorer's smaller faults (issue 20, item 7): the status line
# after Esc and n, zoom and pan limits, units that fit the tiny model, keys that do nothing
# say why, plurals, the tuner's rows that have no figures, the scroll marker beside the lane
# labels, and a missing input file is bad input (exit 2).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"

frame() { # frame NAME KEYS [flags...]
    name=$1 keys=$2
    shift 2
    "$bin" explore "$@" --dump-screen --size 120x40 --keys "$keys" >"$tmp/$name" 2>&1
}
status() { tail -n 1 "$tmp/$1"; }

# The status line follows what is shown: n names the step and its change (Figure 2: ckpt
# 28t = +33.3% of 21t), Esc out of a prompt or the tuner goes back to it.
frame n 'n' $fig2
check "n: status names the ckpt step" "status n | grep -q '^ckpt: step 28t (+33.3% against base), [0-9]* instructions changed'"
frame np 'np' $fig2
check "np: back to base" "status np | grep -q '^base: step 21t   n/p: passes'"
frame esc "/BW\\e" $fig2
check "Esc out of a search: the shown step, not a stale line" "status esc | grep -q '^base: step 21t'"
frame esct "e\\e" $fig2
check "Esc out of export" "status esct | grep -q '^base: step 21t'"
frame tq "t\\e" --devices 8 --global-batch 32
check "Esc out of the tuner" "status tq | grep -q '^base: step '"
frame nfound "/BW9\\e" $fig2
check "a failed search, then Esc, clears the error" "status nfound | grep -q '^base: step 21t'"

# Zoom: out no further than the whole step, in no further than 4096 x (12 halvings).
frame zout '-' $fig2
check "- at the fit says the whole step is shown" "status zout | grep -q '^zoom: the whole step is shown'"
frame zin '+++++++++++++' $fig2
check "+ x13 stops at the limit" "status zin | grep -q '^zoom: at its limit, 4096 x the whole step'"
frame zin2 '++++++++++++++++++++++++' --model tiny
check "a deep zoom's axis has no e-notation" "! grep -E '^ +(µs|ms|s) ' $tmp/zin2 | grep -q 'e-'"
check "... and its unit is us" "grep -qE '^  µs ' $tmp/zin2"
frame pan 'LLLLLLLL' $fig2
check "L stops half a screen past the end" "status pan | grep -q '^pan: at the end of the step'"
frame panl 'H' $fig2
check "H at the start says so" "status panl | grep -q '^pan: at the start of the step'"

# The tiny model: times in ms, rates in k, memory in M (without the A100 preset's framework
# overheads of model/cost.h, whose milliseconds per instruction would hide the formats).
printf '{"model": "tiny", "cluster": {"device": "A100-40G", "efficiency": 0.5, "op_overhead_us": 0, "layer_overhead_us": 0}}\n' >"$tmp/tiny.json"
frame tiny '' "$tmp/tiny.json"
check "tiny: step in ms, samples/s in k" "sed -n 1p $tmp/tiny | grep -q 'step 2.578ms  49.65k samples/s'"
check "tiny: peak in MiB, not 0.0G" "grep -q '^dev 0 .*2.78M\$' $tmp/tiny && ! grep -q '0.0G' $tmp/tiny"
check "tiny: inspect times not 0.000 ms" "grep -q 'start 0µs  end 0.4235µs  (0.4235µs)' $tmp/tiny"

# Keys that do nothing say why.
frame i 'i' $fig2
check "i on V says why" "status i | grep -q '^i/I: V is synchronous'"
frame u 'U' $fig2
check "U on V says why" "status u | grep -q '^u/U: V is synchronous'"
frame v 'v' $fig2
check "v on V says why" "status v | grep -q '^v/V: V has no chunks to change'"
frame ai 'i' --scheme Async $fig2
check "i at one iteration says it is at its limit" "frame ai2 'iii' --scheme Async $fig2 && status ai2 | grep -q '^iterations stays 1: it is at its limit'"

# One bucket is a bucket.
printf '1000\n1010\n1020\n' >"$tmp/l1.txt"
frame b 'a' --lengths "$tmp/l1.txt"
check "1 bucket, not 1 buckets" "grep -q 'input-aware checkpointing: 1 bucket of 64 tokens' $tmp/b"

# The tuner: a candidate that never ran has no figures, not 0.000 and 0 B.
# one GPU a node: the tuner's grid keeps tp 1 (the rows below are tp 1 rows)
printf '{"num_device": 8, "global_batch_size": 32, "cluster": {"gpus_per_node": 1}}\n' >"$tmp/tp1.json"
"$bin" explore "$tmp/tp1.json" --dump-screen --size 160x300 --keys t >"$tmp/t" 2>&1
check "invalid rows: dashes" "grep -E ' needs ' $tmp/t | head -1 | grep -qE '  - +- +-  num_microbatches'"
check "no 0.000 or 0 B rows" "! grep -qE ' 0\\.000 | 0 B ' $tmp/t"
check "OOM rows: step and peak, no samples/s" "grep 'out of memory on device' $tmp/t | head -1 | grep -qE ' - +[0-9.]+(ms|s) +[0-9.]+ GiB'"

# More lanes than rows: the marker sits in the axis row's gutter, every lane keeps its label.
"$bin" explore --devices 16 --dump-screen --size 80x24 >"$tmp/s" 2>&1
check "scroll marker in the axis row" "grep -qE '^↕4 +(┬|▲)' $tmp/s"
check "lane labels whole" "[ \$(grep -cE '^dev [0-9]+ ' $tmp/s) -eq 12 ]"

# Bad input exits 2, as the README says.
"$bin" explore "$tmp/nonexist.json" --dump-screen >"$tmp/err" 2>&1
check "a missing CONFIG exits 2 naming it" "[ $? -eq 2 ] && grep -q 'nonexist.json' $tmp/err"
exit $fail
