#!/bin/sh
# tests/cli/test_export.sh: `mario-tui export` end to end: every format from the extension or
# its flag, the requested PNG width, one PDF page per pass step, the before/after figure's
# step times (the paper's Figure 2: 21 28 25 23 22 t), saved plans, and exit statuses.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
png_width() { python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(struct.unpack(">I", d[16:20])[0] if d[:8]==b"\x89PNG\r\n\x1a\n" else -1)' "$1"; }
pdf_pages() { python3 -c 'import re,sys; print(len(re.findall(rb"/Type\s*/Page(?!s)", open(sys.argv[1],"rb").read())))' "$1"; }
unit="--unit-costs 1,2,1 --devices 4 --microbatches 4"

"$bin" export $unit -o "$tmp/a.svg" -o "$tmp/a.png" -o "$tmp/a.pdf" >"$tmp/out" 2>&1
check "three formats exit 0 ($(head -c 300 $tmp/out))" "[ $? -eq 0 ]"
check "SVG has one box per compute instruction (32)" \
    "[ \$(grep -c '<rect class=\"op-' $tmp/a.svg) -eq 32 ]"
check "SVG title has the step time" "grep -q 'step time 21 t' $tmp/a.svg"
check "PNG is 1200 wide by default" "[ \$(png_width $tmp/a.png) -eq 1200 ]"
check "PDF has one page" "[ \$(pdf_pages $tmp/a.pdf) -eq 1 ]"

"$bin" export $unit --width 640 --png "$tmp/w.img" >/dev/null 2>&1
check "--png ignores the extension, --width sets the PNG width" \
    "[ $? -eq 0 ] && [ \$(png_width $tmp/w.img) -eq 640 ]"

"$bin" export $unit --passes all -o "$tmp/all.svg" -o "$tmp/all.pdf" >/dev/null 2>&1
check "--passes all exits 0" "[ $? -eq 0 ]"
for s in 'base · step 21 t' 'ckpt · step 28 t' 'overlap · step 25 t' \
    'redundancy · step 23 t' 'prepose · step 22 t'; do
    check "figure 2 panel '$s'" "grep -q '$s' $tmp/all.svg"
done
check "PDF of all passes: a page per step (5)" "[ \$(pdf_pages $tmp/all.pdf) -eq 5 ]"
"$bin" export $unit --passes 0,4 --pdf "$tmp/two.pdf" >/dev/null 2>&1
check "--passes 0,4 gives 2 pages" "[ $? -eq 0 ] && [ \$(pdf_pages $tmp/two.pdf) -eq 2 ]"

"$bin" export --scheme X --devices 4 --microbatches 8 --memory-view --comm -o "$tmp/x.svg" \
    >/dev/null 2>&1
check "X with memory view and comm marks" \
    "[ $? -eq 0 ] && grep -q 'class=\"mem-curve\"' $tmp/x.svg && grep -q 'class=\"comm\"' $tmp/x.svg && grep -q 'class=\"hatch\"' $tmp/x.svg"

"$bin" simulate --scheme W --devices 4 --microbatches 8 $unit --plan-out "$tmp/p.json" \
    >/dev/null 2>&1
"$bin" export --plan "$tmp/p.json" -o "$tmp/p.svg" >/dev/null 2>&1
check "--plan draws a saved plan" "[ $? -eq 0 ] && grep -q 'chunk 1' $tmp/p.svg"

"$bin" export --help >"$tmp/h" 2>&1
check "--help exits 0 and says how PDFs page" "[ $? -eq 0 ] && grep -q 'one page' $tmp/h"
"$bin" export $unit >/dev/null 2>&1
check "no output file exits 2" "[ $? -eq 2 ]"
"$bin" export $unit -o "$tmp/a.txt" >/dev/null 2>"$tmp/err"
check "unknown extension exits 2" "[ $? -eq 2 ] && grep -q extension $tmp/err"
"$bin" export $unit --width 100 -o "$tmp/n.png" >/dev/null 2>&1
check "--width 100 exits 2" "[ $? -eq 2 ] && [ ! -e $tmp/n.png ]"
"$bin" export $unit --passes 7 -o "$tmp/n.svg" >/dev/null 2>&1
check "--passes 7 exits 2" "[ $? -eq 2 ]"
"$bin" export $unit --plan "$tmp/p.json" "$tmp/p.json" -o "$tmp/n.svg" >/dev/null 2>&1
check "CONFIG and --plan together exit 2" "[ $? -eq 2 ]"
"$bin" export $unit -o "$tmp/nodir/a.png" >/dev/null 2>"$tmp/err"
check "unwritable path exits 1 naming it" "[ $? -eq 1 ] && grep -q 'nodir/a.png' $tmp/err"
check "no temp file is left behind" "[ -z \"\$(ls $tmp | grep tmp)\" ]"
check "... and the path is said once, not 'a.png: a.png:'" \
    "[ \$(grep -o 'nodir/a.png' $tmp/err | wc -l) -eq 1 ]"

# issue 27: a plan over the cap is marked in the picture and said on stderr. Figure 2's 1F1B
# holds 4, 3, 2, 1 activations (M_θ) on devices 0..3: under a 2.5 M_θ cap devices 0 and 1 are
# over, device 0 the furthest at 4.
"$bin" export $unit --memory 2.5 -o "$tmp/oom.svg" >/dev/null 2>"$tmp/err"
check "over the cap still exits 0" "[ $? -eq 0 ]"
check "stderr names the device and its peak and the cap" \
    "grep -q 'warning: device 0 peaks at 4 M_θ, over the 2.5 M_θ cap; 2 of 4 devices over' $tmp/err"
check "the title says so" \
    "grep -q '>OVER THE MEMORY CAP: device 0 peaks at 4 Mθ &gt; 2.5 Mθ (2 of 4 devices over)<' $tmp/oom.svg"
check "the peak bars are drawn, with a part over the cap for devices 0 and 1 only" \
    "[ \$(grep -c '<rect class=\"mem-over' $tmp/oom.svg) -eq 2 ]"
over_w() { grep '<rect class="mem-over' "$1" | sed -n "${2}s/.* width=\"\([0-9.]*\)\".*/\1/p"; }
check "... 1.5 and 0.5 M_θ over: the first part three times the second" \
    "python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - 3 * b) > 0.05)' \$(over_w $tmp/oom.svg 1) \$(over_w $tmp/oom.svg 2)"
"$bin" export $unit --memory 4 -o "$tmp/fit.svg" >/dev/null 2>"$tmp/err"
check "at the cap: no warning, no mark, no bars" \
    "[ ! -s $tmp/err ] && ! grep -q 'OVER' $tmp/fit.svg && ! grep -q 'mem-over' $tmp/fit.svg"
"$bin" export --model GPT3-13B --devices 32 --memory 40G -o "$tmp/13b.svg" >/dev/null 2>"$tmp/err"
check "bytes: the 13B plan's device 0 at 46.19 GiB over 40G, exact bytes" \
    "grep -q 'device 0 peaks at 46.19 GiB ([0-9]* bytes), over the 40.00 GiB (42949672960 bytes) cap' $tmp/err"
# --passes all: every panel gives its step and peak (1F1B's base holds 4 M_θ on device 0, the
# checkpointed steps 1: one stage input per micro-batch at a time); the base panel is marked.
"$bin" export $unit --memory 2.5 --passes all -o "$tmp/allo.svg" >/dev/null 2>"$tmp/err"
check "panels: base step and peak" "grep -q '>base · step 21 t · peak 4 Mθ<' $tmp/allo.svg"
check "panels: prepose step and peak" "grep -q '>prepose · step 22 t · peak 1 Mθ<' $tmp/allo.svg"
check "panels: base marked over the cap, only base" \
    "[ \$(grep -c '>OVER THE 2.5 Mθ CAP: dev 0<' $tmp/allo.svg) -eq 1 ]"
check "panels: stderr names the base step only" \
    "grep -q 'warning: base: device 0' $tmp/err && [ \$(wc -l <$tmp/err) -eq 1 ]"
# --search draws the plan simulate --search simulates: the same step time.
"$bin" export $unit --memory 2.5 --search -o "$tmp/s.svg" >/dev/null 2>&1
check "--search exits 0" "[ $? -eq 0 ]"
st=$("$bin" simulate $unit --memory 2.5 --search 2>/dev/null | sed -n 's/^step time \([0-9.]*\) t.*/\1/p')
check "--search: the title's step is simulate --search's ($st t)" \
    "[ -n '$st' ] && grep -q 'step time $st t' $tmp/s.svg"
"$bin" export $unit --memory 2.5 --passes 0 --search -o "$tmp/s2.svg" >/dev/null 2>&1
check "--passes 0 --search: base, then the search panel" \
    "grep -q '>base · step 21 t' $tmp/s2.svg && grep -q '>search · step $st t' $tmp/s2.svg"
# Progress: the search's bar on stderr only when it is a terminal, and not with --quiet.
"$bin" export --model GPT3-13B --devices 32 --memory 40G --search -o "$tmp/p.svg" >/dev/null 2>"$tmp/err"
check "stderr a file: no progress" "! grep -q 'search \\[' $tmp/err"
if command -v script >/dev/null 2>&1; then
    script -qc "$bin export --model GPT3-13B --devices 32 --memory 40G --search -o $tmp/p.svg" /dev/null >"$tmp/tty" 2>&1
    check "a terminal: the search's bar" "grep -q 'search \\[#*\\.*\\] [0-9]* of [0-9]* schedules' $tmp/tty"
    script -qc "$bin export --model GPT3-13B --devices 32 --memory 40G --search --quiet -o $tmp/p.svg" /dev/null >"$tmp/ttyq" 2>&1
    check "a terminal with --quiet: none" "! grep -q 'search \\[' $tmp/ttyq && grep -q 'wrote ' $tmp/ttyq"
fi
# A checkpointed plan as torch's CSV (issue 40 item 4): its order with the recomputes left to
# the framework's activation checkpointing, whose step is the paper's apply-checkpoint step
# (Figure 2: 28 t) against the plan's after all passes (22 t).
"$bin" export $unit --passes all -o "$tmp/ck.csv" >"$tmp/out" 2>&1
check "a checkpointed plan exports as CSV ($(head -c 300 $tmp/out))" "[ $? -eq 0 ]"
check "its AC settings: torchtitan full" "grep -q 'mode = \"full\"' $tmp/out"
check "its AC settings: Megatron uniform, a stage's layers" \
    "grep -q -- '--recompute-granularity full --recompute-method uniform --recompute-num-layers 32' $tmp/out"
check "the difference stated" "grep -q '4 here kept whole by the plan' $tmp/out && grep -q '12 of the plan.s 12 recomputes run earlier' $tmp/out"
check "both steps: the framework's 28 t, the plan's 22 t" \
    "grep -q \"the framework's 28 t, the plan's 22 t\" $tmp/out"
check "no recompute action in the CSV, the plan's order" \
    "! grep -q 'RC\\|R[0-9]' $tmp/ck.csv && grep -q '^2F0,2F1,2F2,2B0,2B1,2F3,2B2,2B3\$' $tmp/ck.csv"
"$bin" export --model tiny --scheme DualPipeV --devices 2 --microbatches 4 -o "$tmp/dpv.csv" \
    >/dev/null 2>&1
check "DualPipeV's CSV has torch's OVERLAP_F_B where it pairs" \
    "grep -q '^0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,(3F2;0B0)OVERLAP_F_B,' $tmp/dpv.csv"
# FSDP's actions in the CSV (issue 40; docs/fsdp.md "For the torch schedule CSV"): 1F1B on
# pp 2 x dp 2, 2 micro-batches, rank 0 0F0,0F1,0B0,0B1 and rank 1 1F0,1B0,1F1,1B1. torchtitan's
# FSDP under PP keeps a stage gathered over the step: torch's lowering (_add_unshard_reshard,
# _add_reduce_grad) unshards it before the row's first action, reduces its gradients after
# its second B and reshards it after the row.
fl="--devices 4 --dp 2 --model Llama-3.1-8B --device H100-80G --framework torchtitan"
"$bin" export --scheme V --microbatches 2 $fl --fsdp -o "$tmp/f.csv" >/dev/null 2>&1
check "FSDP: UNSHARD, REDUCE_GRAD, RESHARD where torch puts them" \
    "[ \"\$(cat $tmp/f.csv)\" = '0UNSHARD,0F0,0F1,0B0,0B1,0REDUCE_GRAD,0RESHARD
1UNSHARD,1F0,1B0,1F1,1B1,1REDUCE_GRAD,1RESHARD' ]"
"$bin" simulate --scheme V --microbatches 2 $fl --fsdp --json >"$tmp/fa.json" 2>/dev/null
"$bin" simulate "$tmp/f.csv" $fl --fsdp --json >"$tmp/fb.json" 2>/dev/null
check "read back with --fsdp: the same step, peaks and static bytes" \
    "python3 -c 'import json,sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(not (a[\"step_time\"] > 0 and a[\"step_time\"] == b[\"step_time\"] and a[\"devices\"] == b[\"devices\"]))' $tmp/fa.json $tmp/fb.json"
# reshard_after_forward always: gathered before each F and B, freed after each
"$bin" export --scheme V --microbatches 2 $fl --fsdp --fsdp-reshard-after-forward always \
    -o "$tmp/fa.csv" >/dev/null 2>&1
check "FSDP always: an UNSHARD and a RESHARD around every action" \
    "[ \"\$(head -n 1 $tmp/fa.csv)\" = '0UNSHARD,0F0,0RESHARD,0UNSHARD,0F1,0RESHARD,0UNSHARD,0B0,0RESHARD,0UNSHARD,0B1,0REDUCE_GRAD,0RESHARD' ]"
# ZeRO-2: no gathers; the gradients reduce-scattered after every backward
"$bin" export --scheme V --microbatches 2 $fl --zero-stage 2 -o "$tmp/z2.csv" >/dev/null 2>&1
check "ZeRO-2: a REDUCE_GRAD after each B" \
    "[ \"\$(cat $tmp/z2.csv)\" = '0F0,0F1,0B0,0REDUCE_GRAD,0B1,0REDUCE_GRAD
1F0,1B0,1REDUCE_GRAD,1F1,1B1,1REDUCE_GRAD' ]"
# torchtitan's own schedule CSV stays compute-only: its _load_csv refuses FSDP's actions
"$bin" export --scheme ZB-H1 --microbatches 4 $fl --fsdp --format torchtitan -o "$tmp/tt.toml" \
    >/dev/null 2>&1
check "torchtitan's schedule CSV under FSDP: no UNSHARD / RESHARD / REDUCE_GRAD" \
    "[ -s $tmp/tt.schedule.csv ] && ! grep -q 'SHARD\\|REDUCE' $tmp/tt.schedule.csv"
# bad FSDP cells: file:line:column, exit 2
printf '0UNSHARD,0F0,0F1,0B0,0B1\n1UNSHARD3,1F0,1B0,1F1,1B1\n' >"$tmp/b1.csv"
printf 'UNSHARD,0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n' >"$tmp/b2.csv"
printf '0F0,0F1,0B0,0B1\n1F0,1B0,9RESHARD,1F1,1B1\n' >"$tmp/b3.csv"
"$bin" simulate "$tmp/b1.csv" $fl --fsdp >/dev/null 2>"$tmp/e1"
check "0UNSHARD3 (a micro-batch after FSDP's name) refused" \
    "[ $? -eq 2 ] && grep -q 'b1.csv:2:1: .1UNSHARD3. is not a torch action' $tmp/e1"
"$bin" simulate "$tmp/b2.csv" $fl --fsdp >/dev/null 2>"$tmp/e2"
check "UNSHARD (no stage) refused" \
    "[ $? -eq 2 ] && grep -q 'b2.csv:1:1: .UNSHARD. is not a torch action' $tmp/e2"
"$bin" simulate "$tmp/b3.csv" $fl --fsdp >/dev/null 2>"$tmp/e3"
check "9RESHARD on a rank without stage 9 refused" \
    "[ $? -eq 2 ] && grep -q 'b3.csv:2:9: 9RESHARD names stage 9, which rank 1 does not compute' $tmp/e3"

exit $fail
