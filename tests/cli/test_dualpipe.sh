#!/bin/sh
# tests/cli/test_dualpipe.sh: DualPipe and the expert all-to-alls' lane from the command line
# (issue 38 item 4): the hand-worked DualPipe case of tests/unit/test_dualpipe.c (2 ranks, 4
# micro-batches, unit costs 2,4,2,1,1,1: 22 t with its F&B pairs, 24 t with the same order
# unpaired, a plan file without "paired"); a MoE plan (Mixtral-8x7B, ep 8, DualPipeV) hides
# all-to-alls in its pairs only and leaves its warm-up's exposed; a dense plan has no lane;
# DualPipe's limits and the flag's are refused naming the key; `--scheme` help lists DualPipe.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
U="--scheme DualPipe --unit-costs 2,4,2,1,1,1 --devices 2 --microbatches 4"

"$bin" simulate $U --json --plan-out "$tmp/p.json" >"$tmp/j" 2>&1
check "DualPipe 2x4 paired: 22 t" "json $tmp/j 'd[\"step_time\"] == 22'"
check "4 t hidden, 12 t exposed" \
    "json $tmp/j 'd[\"all_to_all\"][\"hidden\"] == 4 and d[\"all_to_all\"][\"exposed\"] == 12'"
check "device 0: FW3.1 hid 1 t behind BW0.0" \
    "json $tmp/j '{\"device\": 0, \"instruction\": \"FW3.1\", \"behind\": \"BW0.0\", \"hidden\": 1, \"hidden_bytes\": 0, \"exposed\": 0} in d[\"all_to_all\"][\"pairs\"]'"
sed 's/,"paired":1//g' "$tmp/p.json" >"$tmp/u.json"
"$bin" simulate "$tmp/u.json" --json >"$tmp/ju" 2>&1
check "the same order unpaired: 24 t, nothing hidden" \
    "json $tmp/ju 'd[\"step_time\"] == 24 and d[\"all_to_all\"][\"hidden\"] == 0'"
"$bin" simulate $U >"$tmp/t" 2>&1
check "the text report names the lane" "grep -q 'expert all-to-all 4 t hidden in F&B pairs, 12 t exposed' $tmp/t"

M="--model Mixtral-8x7B --device H100-80G --pp 4 --dp 8 --ep 8 --microbatches 16 --memory 1T"
"$bin" simulate $M --scheme DualPipeV --json >"$tmp/m" 2>&1
check "Mixtral ep 8 DualPipeV: all-to-alls hidden in pairs, some exposed" \
    "json $tmp/m 'd[\"all_to_all\"][\"hidden\"] > 0 and d[\"all_to_all\"][\"exposed\"] > 0 and d[\"all_to_all\"][\"hidden_bytes\"] > 0'"
check "the warm-up's first forward (FW0.0) hides nothing on any device" \
    "json $tmp/m 'all(x[\"instruction\"] != \"FW0.0\" for x in d[\"all_to_all\"][\"pairs\"])'"
check "every device hides some and shows some" \
    "json $tmp/m 'all(x[\"all_to_all_hidden\"] > 0 and x[\"all_to_all_exposed\"] > 0 for x in d[\"devices\"])'"
"$bin" simulate $M --scheme ZB-V --json >"$tmp/z" 2>&1
check "ZB-V pairs nothing: every all-to-all exposed" \
    "json $tmp/z 'd[\"all_to_all\"][\"hidden\"] == 0 and d[\"all_to_all\"][\"exposed\"] > 0'"
"$bin" simulate --scheme DualPipe --devices 4 --microbatches 8 --json >"$tmp/d" 2>&1
check "a dense model has no lane" "json $tmp/d '\"all_to_all\" not in d'"

"$bin" simulate --scheme DualPipe --devices 4 --microbatches 6 >"$tmp/e" 2>&1
check "DualPipe under 2 pp micro-batches: exit 2" "test $? = 2"
check "... naming num_microbatches" "grep -q 'num_microbatches: DualPipe' $tmp/e"
"$bin" simulate --scheme DualPipe --devices 3 --microbatches 6 >"$tmp/e" 2>&1
check "DualPipe at an odd pp: exit 2" "test $? = 2 && grep -q 'num_device: DualPipe needs an even' $tmp/e"
"$bin" simulate $M --scheme V --overlap-moe-expert-parallel-comm >"$tmp/e" 2>&1
check "the overlap flag under 1F1B is refused, naming the key" \
    "test $? = 2 && grep -q 'overlap_moe_expert_parallel_comm' $tmp/e"
"$bin" simulate $M --scheme W --chunks 2 --overlap-moe-expert-parallel-comm --json >"$tmp/w" 2>&1
check "interleaved 1F1B with the flag hides all-to-alls" "json $tmp/w 'd[\"all_to_all\"][\"hidden\"] > 0'"
"$bin" simulate --help >"$tmp/h" 2>&1
check "--scheme help lists DualPipe" "grep -q 'DualPipe (2x parameters)' $tmp/h"
check "--help names the overlap flag" "grep -q -- '--overlap-moe-expert-parallel-comm' $tmp/h"
exit $fail
