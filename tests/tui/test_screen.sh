#!/bin/sh
# tests/tui/test_screen.sh: the explorer's screen in priority order (issue 27 item 7), at 80x24,
# 120x40 and 200x50 with --dump-screen: the header never drops the model, the scheme, the
# devices, the step or the OOM mark; the key hints fit the width and keep "?: help"; the legend
# names every op kind the plan has; the change marks (*) hide themselves where they would cover
# most boxes and '*' brings them back. And the top-level --help in one column.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
cols() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }
frame() { # frame NAME SIZE KEYS [flags...]
    name=$1 size=$2 keys=$3
    shift 3
    "$bin" explore "$@" --dump-screen --size "$size" --keys "$keys" >"$tmp/$name" 2>&1
}

# The plan: GPT3-13B on 32 A100-40G under a 40G cap, 4 devices over it (dev 0 at 46.2G).
big="--model GPT3-13B --devices 32 --memory 40G"
for size in 80x24 120x40 200x50; do
    w=${size%x*}
    frame oom$w "$size" '' $big
    head=$(sed -n 1p "$tmp/oom$w")
    check "$size: model, scheme and step in the header" \
        "echo '$head' | grep -qE '^ (mario-tui  )?GPT3-13B  V  .*step 7.057s'"
    check "$size: devices (pp 32, dp 1) and the device in the header" \
        "echo '$head' | grep -qE ' pp ?32( x | |x)(dp )?1 .* A100-40G '"
    check "$size: the OOM mark names dev 0, its peak and the cap" \
        "echo '$head' | grep -qE 'OOM:? dev ?0 46.2G ?> ?40G'"
    check "$size: every line fits" "[ \$(cols $tmp/oom$w) -le $w ]"
    check "$size: the hints end with ?: help (or q: quit after it)" \
        "tail -n 1 $tmp/oom$w | grep -qE '\\?: help(  q: quit)?\$'"
    frame fit$w "$size" ''
    check "$size: a plan that fits: the status line fits, with its step and ?: help" \
        "tail -n 1 $tmp/fit$w | grep -qE '^base: step 6.504s   n/p: passes .*\\?: help' && [ \$(cols $tmp/fit$w) -le $w ]"
done
check "200 columns: nothing shortened, the bound and the devices count kept" \
    "sed -n 1p $tmp/oom200 | grep -q '^ mario-tui  GPT3-13B  V  pp 32 x dp 1  N 128 x mbs 1  A100-40G 40G  step 7.057s  18.14 samples/s  bound 7.057s gap 0.0%  *OOM: dev 0 46.2G > 40G (4 devices) *\$'"
check "120 columns: the rate shortened, not dropped" "sed -n 1p $tmp/oom120 | grep -q ' 18.14/s '"
check "80 columns: every hint but ?: help gives way to the message" \
    "tail -n 1 $tmp/oom80 | grep -q '^OOM: 4 of 32 devices over the 40G cap (dev 0 at 46.2G); .*…   ?: help\$'"
check "200 columns: every hint" "tail -n 1 $tmp/fit200 | grep -q '   n/p: passes  arrows: select  +/-/0: zoom  t: tune  e: export  ?: help  q: quit\$'"

# The legend: ZB-V's plan has FW, B, W and OS; after apply-checkpoint (n) every forward is a
# CFW with its RC. At 80x24 the words shorten before an op goes (the issue: W and OS left out
# while W boxes were on screen).
for size in 80x24 120x40 200x50; do
    w=${size%x*}
    frame zb$w "$size" '' --scheme ZB-V
    for op in FW B W OS; do
        check "$size ZB-V base: the legend names $op" "sed -n 3p $tmp/zb$w | grep -qE '(^| )$op( |\$)'"
    done
    frame zbn$w "$size" n --scheme ZB-V --dp 2 --devices 8
    for op in CFW RC B W AR OS; do
        check "$size ZB-V ckpt, dp 2: the legend names $op" "sed -n 3p $tmp/zbn$w | grep -qE '(^| )$op( |\$)'"
    done
    check "$size ZB-V ckpt: no FW left to name" "! sed -n 3p $tmp/zbn$w | grep -qE '(^| )FW( |\$)'"
    check "$size ZB-V ckpt: the legend fits" "[ \$(sed -n 3p $tmp/zbn$w | wc -m) -le \$(($w + 1)) ]"
done
check "80 columns: short words" "sed -n 3p $tmp/zbn80 | grep -q ' W w-grad '"
check "200 columns: long words" "sed -n 3p $tmp/zbn200 | grep -q ' W weight grad '"

# Change marks. Figure 2's apply-checkpoint changes the 4 forwards of each device to CFW and
# adds their 4 RCs: 32 of 52 boxes (with BW and the optimizer step), more than half, so the marks start hidden and the status
# says how to show them; '*' shows them (a '*' beside micro-batch numbers), '*' again hides.
fig2="--unit-costs 1,2,1 --devices 4 --microbatches 4"
frame m0 120x40 n $fig2
check "ckpt of Figure 2: marks hidden, the status says why and how" \
    "tail -n 1 $tmp/m0 | grep -q '^ckpt: step 28t (+33.3% against base), 32 instructions changed (marks off, most boxes changed; \\*: show)'"
check "... and no * on the Gantt" "! sed -n 4,30p $tmp/m0 | grep -q '\\*'"
frame m1 120x40 'n*' $fig2
check "* shows them" "tail -n 1 $tmp/m1 | grep -q '^change marks (\\*) shown: 32 instructions changed by ckpt'"
check "... on the Gantt" "[ \$(sed -n 4,30p $tmp/m1 | grep -o '\\*' | wc -l) -ge 16 ]"
check "... and the legend says what * is" "sed -n 3p $tmp/m1 | grep -q '\\* changed'"
frame m2 120x40 'n**' $fig2
check "* again hides them" "! sed -n 4,30p $tmp/m2 | grep -q '\\*' && tail -n 1 $tmp/m2 | grep -q 'marks (\\*) hidden'"
# remove-redundancy changes few boxes of Figure 2 (8: the last micro-batch of each
# device is not checkpointed, its CFW back to FW and its RC gone): marked by default.
frame m3 120x40 nnn $fig2
check "redundancy of Figure 2: 8 changes, marked *" \
    "tail -n 1 $tmp/m3 | grep -q '^redundancy: step 23t (+9.5% against base), 8 instructions changed (marked \\*)' && sed -n 4,30p $tmp/m3 | grep -q '\\*'"

# The top-level --help: every command's summary in one column ("plan-inputs" pushed its own
# one column right).
"$bin" --help >"$tmp/help" 2>&1
check "top-level --help: one column of summaries" \
    "[ \$(sed -n '/^Commands:/,\$p' $tmp/help | sed -nE 's/^(  [a-z-]+ +).*/\\1/p' | awk '{ print length(\$0) }' | sort -u | wc -l) -eq 1 ]"
check "... plan-inputs among them" "grep -qE '^  plan-inputs  input-aware' $tmp/help"
exit $fail
