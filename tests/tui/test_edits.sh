#!/bin/sh
# tests/tui/test_edits.sh: the explorer's live edits are all or nothing (issue 20, item 2):
# a refused edit leaves no hidden setting behind, a value the scheme refuses is stepped over
# to the nearest one it allows, and the header always names the config that is drawn.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

frame() { # frame NAME KEYS [flags...]: the default config after KEYS, 120x40
    name=$1 keys=$2
    shift 2
    "$bin" explore "$@" --dump-screen --size 120x40 --keys "$keys" >"$tmp/$name" 2>&1
}
title() { sed -n 1p "$tmp/$1"; }
status() { tail -n 1 "$tmp/$1"; }
lanes() { grep -c '^dev [0-9]' "$tmp/$1"; }

# m: 127 micro-batches; B (size 2) cannot split 127 and is refused whole; d then works.
frame mBd 'mBd'
check "mBd: header pp 7, N 127 x mbs 1" "title mBd | grep -q '  V  pp 7 x dp 1  N 127 x mbs 1 '"
check "mBd: seven lanes drawn" "[ \$(lanes mBd) -eq 7 ]"
check "mBd: status names the edit" "status mBd | grep -q '^pp 8 -> 7\$'"
frame mB 'mB'
check "mB: refused, size stays 1" "title mB | grep -q 'N 127 x mbs 1 '"
check "mB: says why" "status mB | grep -q '^micro-batch size stays 1: 2, 4, 8, 16, 32, 64 refused (global_batch_size: 127 is not a multiple'"
# s from V at 127 micro-batches: X (odd N) and W (N not a multiple of 8) are stepped over.
frame ms 'ms'
check "ms: s skips X and W to GPipe" "title ms | grep -q ' GPipe  pp 8 dp 1  N 127 mbs 1 '"
check "ms: and says so" "status ms | grep -q '^scheme V -> GPipe (X, W refused: num_microbatches: Chimera (X) needs an even number'"
# The sequence: after it the header is the drawn scheme, and s goes on from it.
frame seq 'mBssbbVs'
check "mBssbbVs: PipeDream drawn and named" "title seq | grep -q '  PipeDream K 3 U 1  pp 8 dp 1  N 127 mbs 1 '"
check "mBssbbVs: the last s went from Async" "status seq | grep -q '^scheme Async -> PipeDream\$'"
frame bV 'bbV' --scheme Async
check "b at size 1 says it is at its limit" "frame b b && status b | grep -q '^micro-batch size stays 1: it is at its limit'"
check "V on Async says it has no chunks" "status bV | grep -q '^v/V: Async has no chunks to change'"
# W: d goes to a pp the 128 micro-batches allow (7, 6, 5 do not divide them), then 2, 1.
frame wd 'd' --scheme W
check "W d: pp 8 -> 4" "title wd | grep -q '  W v2  pp 4 x dp 1  N 128 ' && [ \$(lanes wd) -eq 0 ] && [ \$(grep -c '^d[0-3]\.[01]' $tmp/wd) -eq 8 ]"
check "W d: names what it stepped over" "status wd | grep -q '^pp 8 -> 4 (7, 6, 5 refused: num_microbatches: interleaved 1F1B (W) needs a multiple of pp = 7'"
frame wdddd 'dddd' --scheme W
check "W dddd: 4, 2, 1, then stays 1" "title wdddd | grep -q ' W v2  pp 1 dp 1 ' && status wdddd | grep -q '^pp stays 1: it is at its limit'"
# W m: the next multiple of pp (120), as the rounds of ZB-W at pp 4 (124).
frame wm 'm' --scheme W
check "W m: 128 -> 120" "title wm | grep -q 'N 120 x mbs 1' && status wm | grep -q '^micro-batches 128 -> 120 (127, 126, 125, 124, 123, 122, ... refused'"
frame zdm 'dm' --scheme ZB-W
check "ZB-W dm: pp 4, 124 micro-batches" "title zdm | grep -q '  ZB-W v2  pp 4 x dp 1  N 124 x mbs 1 '"
# [ and ]: the cap in whole MiB, so a saved plan's cap is a whole number of bytes.
frame cap "[]e$tmp/cap.json\\n"
check "[ ]: cap 32 GiB then 40 GiB" "title cap | grep -q 'A100-40G 40G  step'"
check "[ ]: exported cap is whole (not 42949672960.00003)" "json $tmp/cap.json \"d['config']['memory_per_device'] == '40GiB'\""
frame cap2 "[[[e$tmp/cap2.json\\n"
# 40 / 1.25 = 32 GiB, / 1.25 = 26214.4 MiB -> 26214, / 1.25 = 20971.2 -> 20971 MiB
check "[[[: the cap in whole MiB" "json $tmp/cap2.json \"d['config']['memory_per_device'] == '20971MiB'\""
exit $fail
