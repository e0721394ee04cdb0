#!/bin/sh
# tests/mpi/test_run_cli.sh: `mario-tui run` as a user meets it: --help, usage errors (exit
# 2), plans the executor refuses before any compute (on the launcher, and on every rank when
# started under mpirun directly), the summary and --json, and a trace whose instructions
# carry the same (device, op, mb, part, stage) keys as the simulator's trace of the plan.
set -u
bin=${MT_BIN:-./mario-tui}
# make check exports these (Makefile.am); also when the script is run by hand as root
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" run --help >"$tmp/h" 2>&1
check "--help exits 0 and lists the flags" "[ \$? -eq 0 ] && grep -q -- '--backend' $tmp/h && grep -q MT_FAULT_KILL_RANK $tmp/h"
"$bin" run --bogus >/dev/null 2>&1
check "unknown flag exits 2" "[ \$? -eq 2 ]"
"$bin" run --model tiny --devices 2 --backend tpu >/dev/null 2>"$tmp/err"
check "unknown backend exits 2" "[ \$? -eq 2 ] && grep -q 'cpu, cuda, nccl' $tmp/err"
"$bin" run --model tiny --devices 4 --np 2 >/dev/null 2>"$tmp/err"
check "--np that does not fit the plan exits 2 naming both" \
    "[ \$? -eq 2 ] && grep -q 'needs 4 MPI ranks (pp 4 x dp 1), the job has 2' $tmp/err"
# the executor's blocks are GPT's and LLaMA's, each exactly: a GELU block with grouped-query
# attention is neither, and is refused naming the part
cat >"$tmp/gqa.json" <<'EOF'
{"pipeline_scheme": "V", "global_batch_size": 4, "micro_batch_size": 1, "num_device": 2,
 "model": {"preset": "tiny", "num_key_value_heads": 2}}
EOF
"$bin" run "$tmp/gqa.json" >/dev/null 2>"$tmp/err"
check "a GPT block with GQA is refused" \
    "[ \$? -eq 2 ] && grep -q \"GELU block is GPT's.*grouped-query attention\" $tmp/err"
# the LLaMA block runs: tiny-llama, one step, under the same launcher
"$bin" run --model tiny-llama --devices 2 --microbatches 2 --steps 1 >"$tmp/llama" 2>"$tmp/err"
check "a LLaMA model runs (tiny-llama)" "[ \$? -eq 0 ] && grep -q 'tiny-llama, V' $tmp/llama"

# under mpirun directly, every rank refuses a plan that needs another number of ranks
mpirun --oversubscribe -np 2 "$bin" run --model tiny --devices 4 --steps 1 >/dev/null 2>"$tmp/err"
rc=$?
check "under mpirun: a mismatch exits non-zero ($rc)" "[ $rc -ne 0 ]"
check "under mpirun: every rank refuses" \
    "grep -q 'rank 0: the plan needs 4 MPI ranks' $tmp/err && grep -q 'rank 1: the plan needs 4 MPI ranks' $tmp/err"

# a plan that lost an optimizer step is refused before anything runs
"$bin" simulate --model tiny --devices 2 --microbatches 4 --plan-out "$tmp/p.json" >/dev/null
python3 - "$tmp/p.json" "$tmp/bad.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["devices"][1] = [i for i in p["devices"][1] if i["op"] != "OS"]
json.dump(p, open(sys.argv[2], "w"))
PY
"$bin" run "$tmp/bad.json" >/dev/null 2>"$tmp/err"
check "a plan without OS on a device exits 2 naming it" \
    "[ \$? -eq 2 ] && grep -q 'device 1 part 0: 0 optimizer steps' $tmp/err"

# the summary and --json
"$bin" run "$tmp/p.json" --steps 3 >"$tmp/out" 2>"$tmp/err"
check "summary run exits 0 ($(head -c 300 $tmp/err))" "[ \$? -eq 0 ]"
check "summary names measured and simulated peaks" \
    "grep -q 'peak act measured' $tmp/out && grep -q 'peak act simulated' $tmp/out && grep -q 'over 3 steps' $tmp/out"
"$bin" run "$tmp/p.json" --steps 3 --json --trace-out "$tmp/run.json" >"$tmp/j" 2>"$tmp/err"
check "json run exits 0" "[ \$? -eq 0 ]"
check "json has loss per step, step_time and peak_memory per device" \
    "python3 -c 'import json,sys; d=json.load(open(\"$tmp/j\")); sys.exit(0 if len(d[\"loss\"])==3 and d[\"step_time\"]>0 and len(d[\"peak_memory\"])==2 and len(d[\"devices\"])==2 and d[\"error\"] is None else 1)'"

# measured and simulated traces have the same instruction keys (one step of each)
"$bin" simulate "$tmp/p.json" --trace-out "$tmp/sim.json" >/dev/null
python3 - "$tmp/sim.json" "$tmp/run.json" <<'PY'
import json, sys
def keys(path, step):
    ev = json.load(open(path))["traceEvents"]
    return sorted((e["pid"], e["args"]["op"], e["args"]["mb"], e["args"]["part"],
                   e["args"]["stage"]) for e in ev if e["ph"] == "X"
                  and e["args"].get("step", 0) == step)
sim, run = keys(sys.argv[1], 0), keys(sys.argv[2], 0)
last = keys(sys.argv[2], 2)
d = json.load(open(sys.argv[2]))
print("trace keys: simulated %d instructions, measured %d in step 1 and %d in step 3; %d memory "
      "samples; status %s" % (len(sim), len(run), len(last),
      sum(1 for e in d["traceEvents"] if e["ph"] == "C" and e["name"] == "memory"),
      d["otherData"]["status"]))
sys.exit(0 if sim == run == last and d["otherData"]["source"] == "measured"
         and len(d["otherData"]["loss"]) == 3 else 1)
PY
check "measured trace keys equal the simulated plan's" "[ \$? -eq 0 ]"
exit $fail
