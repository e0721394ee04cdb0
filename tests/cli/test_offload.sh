#!/bin/sh
# tests/cli/test_offload.sh: offload (OF/RL, issue 29) end to end on 1F1B, D = 4, N = 8, unit
# costs 1,2,1,1 and O = 0.5 (a copy half a forward long): under 2 M_θ per device optimize
# --search reaches 34 t with checkpointing alone and --offload the no-checkpoint 33 t
# ((N + D - 1)(F + B)); its plan saved, simulated again (host memory reported), refused by
# torch's CSV and by Mario's passes (run runs it: tests/mpi/test_offload_run.sh); a slow link
# (O = 4) changes nothing; a host cap below what the plan offloads is reported naming
# host_memory_per_node; bad --host-gbps and a sixth unit cost exit 2 naming the flag.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
cfg="--scheme 1F1B --devices 4 --microbatches 8 --memory 2"

"$bin" optimize $cfg --unit-costs 1,2,1,1,0.5 --search >"$tmp/c" 2>&1
check "checkpointing alone: the search at 34 t" "grep -qE '^search +34\\.000 ' $tmp/c"
"$bin" optimize $cfg --unit-costs 1,2,1,1,0.5 --search --offload --plan-out "$tmp/p.json" \
    >"$tmp/o" 2>&1
check "optimize --search --offload exits 0" "[ $? -eq 0 ]"
check "with offload: the search at 33 t, gap 0" "grep -qE '^search +33\\.000 .* 0\\.0%' $tmp/o"
check "the summary counts the offloaded forwards" \
    "grep -qE 'search: faster.*; [0-9]+ forwards offloaded to host memory \\(OF/RL\\)' $tmp/o"
"$bin" simulate "$tmp/p.json" >"$tmp/s" 2>&1
check "the saved plan simulates at 33 t" "[ $? -eq 0 ] && grep -q '^step time 33 t' $tmp/s"
check "simulate reports the host memory it offloads" \
    "grep -qE '^host memory \\(offloaded, peak per device\\): [0-9.]+ M_θ' $tmp/s"
"$bin" simulate "$tmp/p.json" --json >"$tmp/j" 2>&1
check "json: host_memory on the devices that offload" \
    "json $tmp/j 'd[\"step_time\"] == 33 and d[\"devices\"][0][\"host_memory\"] > 0'"
"$bin" simulate $cfg --unit-costs 1,2,1,1,0.5 --search --offload >"$tmp/s2" 2>&1
check "simulate --search --offload: 33 t" "grep -q '^step time 33 t' $tmp/s2"
"$bin" simulate "$tmp/p.json" --plan-out "$tmp/p.csv" >"$tmp/csv" 2>&1
check "torch CSV refuses OF/RL naming the instruction" \
    "[ $? -ne 0 ] && grep -qE 'instruction [0-9]+ \\(OF[0-9]+, stage [0-9]+\\).*no spelling for offload \\(OF/RL\\)' $tmp/csv"
"$bin" optimize "$tmp/p.json" >"$tmp/pass" 2>&1
check "Mario's passes refuse an offloading plan" \
    "[ $? -ne 0 ] && grep -q \"Mario's passes take plans without offload (OF/RL)\" $tmp/pass"
python3 -c "import json; d=json.load(open('$tmp/p.json'))
d['config']['cluster']['host_memory_per_node'] = 1
json.dump(d, open('$tmp/h.json', 'w'))"
"$bin" simulate "$tmp/h.json" >"$tmp/h" 2>&1
check "a host cap under the plan's offload: exit 1 naming host_memory_per_node" \
    "[ $? -eq 1 ] && grep -q 'over its host memory (host_memory_per_node' $tmp/h"

"$bin" optimize $cfg --unit-costs 1,2,1,1,4 --search --offload >"$tmp/slow" 2>&1
check "a slow link (O = 4): no offload, the checkpointing search's 34 t" \
    "grep -qE '^search +34\\.000 ' $tmp/slow && ! grep -q 'offloaded' $tmp/slow"

"$bin" simulate --host-gbps 0 >"$tmp/b1" 2>&1
check "--host-gbps 0: exit 2 naming the flag" "[ $? -eq 2 ] && grep -q -- '--host-gbps' $tmp/b1"
"$bin" simulate --unit-costs 1,2,1,1,1,1 >"$tmp/b2" 2>&1
check "six unit costs: exit 2 naming the flag" "[ $? -eq 2 ] && grep -q -- '--unit-costs' $tmp/b2"
"$bin" simulate --unit-costs 1,2,1,1,0 >"$tmp/b3" 2>&1
check "O = 0: exit 2, O must be > 0" "[ $? -eq 2 ] && grep -q 'O must be > 0' $tmp/b3"
"$bin" simulate --device H100-80G --plan-out "$tmp/h100.json" >/dev/null 2>&1
"$bin" simulate --device H100-80G --host-gbps 25 --plan-out "$tmp/h25.json" >/dev/null 2>&1
check "the H100 preset's host link (50 GB/s) is not written; --host-gbps 25 is" \
    "json $tmp/h100.json '\"host_gbps\" not in d[\"config\"][\"cluster\"]' &&
     json $tmp/h25.json 'd[\"config\"][\"cluster\"][\"host_gbps\"] == 25'"
exit $fail
