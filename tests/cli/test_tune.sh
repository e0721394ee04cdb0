#!/bin/sh
# tests/cli/test_tune.sh: `mario-tui tune` end to end: the table, --json (best, every
# candidate with its parameters and feasibility, the Pareto front), --plan-out, "Auto" in a
# config, a cap nothing fits (exit 1), bad flags (exit 2).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" tune --devices 8 --global-batch 32 --top 3 >"$tmp/t" 2>&1
check "table exits 0" "[ $? -eq 0 ]"
check "table ranks 3 and names the best" "grep -q '^   3  ' $tmp/t && grep -q '^best: ' $tmp/t"
check "pareto front printed" "grep -q 'pareto front' $tmp/t"

"$bin" tune --devices 8 --global-batch 32 --json --plan-out "$tmp/best.json" >"$tmp/j" 2>&1
check "json exits 0" "[ $? -eq 0 ]"
check "json: best, candidates with parameters, feasibility, pareto" "python3 - $tmp/j <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d['candidates']
keys = ('scheme', 'pp', 'dp', 'micro_batch_size', 'ckpt', 'throughput', 'peak_memory', 'feasible')
assert all(all(k in x for k in keys) for x in c)
ok = [x for x in c if x['feasible']]
assert d['best']['throughput'] == max(x['throughput'] for x in ok)
assert all(x['pp'] * x['dp'] * x['tp'] == 8 for x in c)
assert set(x['tp'] for x in c) == {1, 2, 4, 8}
assert all(('-t%d' % x['tp'] in x['label']) == (x['tp'] > 1) for x in c)
assert any(x['ckpt'] for x in c) and any(not x['ckpt'] for x in c)
assert set(x['scheme'] for x in c) == {'V', 'X', 'W', 'GPipe', 'ZB-H1', 'ZB-H2', 'ZB-V', 'ZB-W', 'DualPipeV',
                                       'ZBVZeroBubble', 'V-Half', 'V-Min'}
assert all(x['throughput'] == 0 for x in c if not x['feasible'])
assert len(d['pareto']) >= 1
PY"
check "the best plan is saved and simulates" "[ -s $tmp/best.json ] && $bin simulate $tmp/best.json >/dev/null"

"$bin" tune --devices 8 --global-batch 32 --memory 4G >"$tmp/oom" 2>"$tmp/err"
rc=$?
check "a cap that rules out the baselines still lists why" "grep -q 'out of memory: device' $tmp/oom"
"$bin" tune --devices 8 --global-batch 32 --memory 100M >/dev/null 2>"$tmp/err"
check "nothing fits: exit 1 with a message" "[ $? -eq 1 ] && grep -q 'no candidate fits' $tmp/err"

printf '{"pipeline_scheme": "Auto", "num_device": 8, "global_batch_size": 32}\n' >"$tmp/auto.json"
"$bin" simulate "$tmp/auto.json" --json >"$tmp/a" 2>&1
check "Auto: simulate runs the tuner's best" \
    "python3 -c 'import json; d=json.load(open(\"$tmp/a\")); assert d[\"scheme\"] in (\"V\",\"X\",\"W\",\"GPipe\",\"ZB-H1\",\"ZB-H2\",\"ZB-V\",\"ZB-W\",\"DualPipeV\")'"
best=$(python3 -c "import json; print(json.load(open('$tmp/j'))['best']['scheme'])")
check "Auto picks the tuner's best scheme ($best)" \
    "python3 -c 'import json; assert json.load(open(\"$tmp/a\"))[\"scheme\"] == \"$best\"'"

"$bin" tune --threads 1 --devices 8 --global-batch 32 --json >"$tmp/j1" 2>&1
"$bin" tune --threads 2 --devices 8 --global-batch 32 --json >"$tmp/j2" 2>&1
check "one thread and two give the same answer" "cmp -s $tmp/j1 $tmp/j2"

"$bin" tune --top 0 >/dev/null 2>&1
check "--top 0 exits 2" "[ $? -eq 2 ]"
"$bin" tune --bogus >/dev/null 2>&1
check "unknown flag exits 2" "[ $? -eq 2 ]"
"$bin" tune --help | grep -q -- '--max-mbs'
check "--help lists the flags" "[ $? -eq 0 ]"
# Unit costs are per micro-batch whatever its size: the grid keeps the config's size, and
# --microbatches 8 means 8 x mbs x dp samples per iteration, so 1F1B on 4 devices steps
# (N + D - 1)(F + B) = 11 x 3 = 33 t for 8 samples (it used to pick N = 1 x mbs 128)
"$bin" tune --unit-costs 1,2,1 --devices 4 --microbatches 8 --json >"$tmp/u.json" 2>&1
check "unit costs: every candidate keeps micro-batch size 1" \
    "json $tmp/u.json 'all(c[\"micro_batch_size\"] == 1 for c in d[\"candidates\"])'"
check "unit costs: V-4-1 is 8 micro-batches, 33 t, 8/33 samples/t" \
    "json $tmp/u.json 'any(c[\"label\"] == \"V-4-1\" and c[\"step_time\"] == 33 and abs(c[\"throughput\"] - 8 / 33) < 1e-12 for c in d[\"candidates\"])'"
# --scheme S[,S...] keeps those schemes (issue 27); --help lists every scheme the grid tries
"$bin" tune --devices 8 --global-batch 32 --scheme V,ZB-V --json >"$tmp/f.json" 2>&1
check "--scheme V,ZB-V: only V and ZB-V candidates, both there" \
    "json $tmp/f.json 'set(c[\"scheme\"] for c in d[\"candidates\"]) == {\"V\", \"ZB-V\"}'"
check "--scheme V,ZB-V: the same V-4-1 figures as the whole grid" \
    "python3 -c 'import json; a=[c for c in json.load(open(\"$tmp/f.json\"))[\"candidates\"] if c[\"label\"]==\"V-4-1\"]; b=[c for c in json.load(open(\"$tmp/j\"))[\"candidates\"] if c[\"label\"]==\"V-4-1\"]; assert a and a==b'"
"$bin" tune --scheme V,Bogus >/dev/null 2>"$tmp/err"
check "--scheme with a bad name exits 2 naming it" "[ $? -eq 2 ] && grep -q Bogus $tmp/err"
"$bin" tune --help >"$tmp/h"
check "--help lists every scheme the grid tries" \
    "grep -q 'Schemes: V, X, W, GPipe, ZB-H1, ZB-H2, ZB-V, ZB-W, DualPipeV' $tmp/h"
# the ckpt column says mario as the explorer does; iter is per iteration of the global batch
"$bin" tune --devices 8 --global-batch 32 --top 200 >"$tmp/all" 2>&1
check "ckpt column: off / mario, never on" \
    "grep -Eq '^ +[0-9]+  [^ ]+ +mario ' $tmp/all && ! grep -Eq '^ +[0-9]+  [^ ]+ +on ' $tmp/all"
check "iter explained under the table" "grep -q '^iter (s): one iteration of the global batch of 32' $tmp/t"
check "the label explained under the table, -tT included" \
    "grep -q '^config: scheme-pp-mbs (micro-batch size), then xC for C chunks .* -tT for tensor parallelism T where T > 1' $tmp/t"
check "json: iteration_time = global batch / throughput for each that fits" \
    "json $tmp/j 'all(abs(c[\"iteration_time\"] * c[\"throughput\"] - 32) < 1e-9 for c in d[\"candidates\"] if c[\"feasible\"])'"
# tp is a plan dimension (issue 26): GPT-3 13B's shape on 32 x A100-40G lists tp > 1; --tp T
# keeps that degree; the table has a tp column
"$bin" tune --model GPT3-13B --devices 32 --json --max-mbs 2 --ckpt-only >"$tmp/tp.json" 2>&1
check "GPT3-13B x 32: candidates with tp > 1, each pp x dp x tp = 32" \
    "json $tmp/tp.json 'any(c[\"tp\"] > 1 for c in d[\"candidates\"]) and all(c[\"pp\"] * c[\"dp\"] * c[\"tp\"] == 32 for c in d[\"candidates\"])'"
"$bin" tune --devices 8 --global-batch 32 --tp 2 --json >"$tmp/tp2.json" 2>&1
check "--tp 2 keeps tp 2 only" "json $tmp/tp2.json 'set(c[\"tp\"] for c in d[\"candidates\"]) == {2}'"
check "the table's tp column" "grep -Eq '^rank  config +ckpt +dp +tp ' $tmp/all"
# --offload (issue 29): the searches may offload. 1F1B 4 x 8, unit costs F 1, B 2, RC 1, O 0.5
# (moving one M_θ each way), cap 2 M_θ: the search alone reaches 34 t, with offload 33 t, the
# step of no checkpointing at all ((8 + 4 - 1) x 3); optimize --search --offload says the same.
off="--unit-costs 1,2,1,0,0.5 --devices 4 --microbatches 8 --memory 2 --scheme V --search --json"
"$bin" tune $off >"$tmp/s.json" 2>&1
"$bin" tune $off --offload >"$tmp/o.json" 2>&1
check "tune --search --offload: 33 t against 34 t without offload" \
    "json $tmp/s.json 'abs(d[\"best\"][\"iteration_time\"] - 34) < 1e-9' && json $tmp/o.json 'abs(d[\"best\"][\"iteration_time\"] - 33) < 1e-9'"
"$bin" tune --offload >"$tmp/e" 2>&1
check "--offload without --search: exit 2 naming it" "[ $? -eq 2 ] && grep -q -- '--offload: .*--search' $tmp/e"
# Issue 41: each flag given pins its dimension; sequence parallelism (where tp > 1) and the
# distributed optimizer (where dp > 1) are searched off and on.
q="--devices 8 --global-batch 32 --scheme V --max-mbs 2 --threads 2 --json"
"$bin" tune $q --dp 2 >"$tmp/dp.json" 2>&1
check "--dp 2 keeps dp 2 only" "json $tmp/dp.json 'set(c[\"dp\"] for c in d[\"candidates\"]) == {2}'"
"$bin" tune $q --micro-batch-size 2 >"$tmp/mbs.json" 2>&1
check "--micro-batch-size 2 keeps 2 only" \
    "json $tmp/mbs.json 'set(c[\"micro_batch_size\"] for c in d[\"candidates\"]) == {2}'"
"$bin" tune $q --pp 2 >"$tmp/pp.json" 2>&1
check "--pp 2 keeps pp 2 only, below --min-pp's 4" \
    "json $tmp/pp.json 'set(c[\"pp\"] for c in d[\"candidates\"]) == {2}'"
"$bin" tune $q --pp 2 --dp 2 --tp 2 >"$tmp/pdt.json" 2>&1
check "--pp 2 --dp 2 --tp 2: 8 GPUs, one geometry" \
    "json $tmp/pdt.json 'set((c[\"pp\"], c[\"dp\"], c[\"tp\"]) for c in d[\"candidates\"]) == {(2, 2, 2)}'"
"$bin" tune $q --pp 3 >"$tmp/e" 2>&1
check "--pp 3 of 8 GPUs: exit 2 naming the pin" "[ $? -eq 2 ] && grep -q 'pp 3 (as given)' $tmp/e"
"$bin" tune $q >"$tmp/st.json" 2>&1
check "sp searched where tp > 1 only, the optimizer where dp > 1 only" "json $tmp/st.json '
set((c[\"tp\"] > 1, c[\"sequence_parallel\"]) for c in d[\"candidates\"]) == {(False, False), (True, False), (True, True)} and
set((c[\"dp\"] > 1, c[\"distributed_optimizer\"]) for c in d[\"candidates\"]) == {(False, False), (True, False), (True, True)} and
all(c[\"label\"].endswith(\"-sp\") or c[\"label\"].endswith(\"-sp-do\") for c in d[\"candidates\"] if c[\"sequence_parallel\"])'"
"$bin" tune $q --sequence-parallel --no-distributed-optimizer >"$tmp/pin.json" 2>&1
check "--sequence-parallel pins it on, --no-distributed-optimizer off" "json $tmp/pin.json '
all(c[\"sequence_parallel\"] and not c[\"distributed_optimizer\"] for c in d[\"candidates\"])'"
"$bin" tune $q --sequence-parallel --no-sequence-parallel >"$tmp/e" 2>&1
check "--sequence-parallel with --no-sequence-parallel: exit 2" "[ $? -eq 2 ]"
# A mixture of experts with ep pinned: the expert fold (ep x etp dividing tp x dp) is each
# candidate's to meet, not the one-device check's (it refused every MoE tune before)
"$bin" tune --json --threads 1 --model Mixtral-8x7B --device H100-80G --devices 64 --ep 8 \
    --scheme V >"$tmp/moe.json" 2>"$tmp/moe.err"
check "MoE tune with --ep 8 ranks candidates" \
    "python3 -c 'import json,sys; d=json.load(open(\"$tmp/moe.json\")); sys.exit(0 if any(c[\"feasible\"] for c in d[\"candidates\"]) else 1)'"
"$bin" tune --model Mixtral-8x7B --device H100-80G --devices 64 --ep 3 >/dev/null 2>"$tmp/moe3.err"
check "MoE tune with an ep that does not divide the experts: exit 2, named" \
    "[ \$? -eq 2 ] && grep -q 'cluster.ep: 3 does not divide' $tmp/moe3.err"

# ep and etp are grid dimensions (issue 38 item 5): without --ep each divisor of the 8 experts
# the stage folds is tried, --max-ep caps it, --ep pins it; every candidate's ep x etp divides
# its tp x dp
"$bin" tune --json --threads 1 --model Mixtral-8x7B --device H100-80G --devices 64 --scheme V \
    --max-mbs 1 --pp 8 >"$tmp/moe_ep.json" 2>"$tmp/moe_ep.err"
check "MoE tune searches ep 1, 2, 4, 8 and etp tp and 1" \
    "python3 -c 'import json,sys; c=json.load(open(\"$tmp/moe_ep.json\"))[\"candidates\"]; \
sys.exit(0 if {k[\"ep\"] for k in c}=={1,2,4,8} and all((k[\"tp\"]*k[\"dp\"])%(k[\"ep\"]*k[\"etp\"])==0 and k[\"etp\"] in (1,k[\"tp\"]) for k in c) and any(k[\"etp\"]==1 and k[\"tp\"]>1 for k in c) else 1)'"
"$bin" tune --json --threads 1 --model Mixtral-8x7B --device H100-80G --devices 64 --scheme V \
    --max-mbs 1 --pp 8 --max-ep 2 >"$tmp/moe_ep2.json" 2>&1
check "--max-ep 2: no ep above 2" \
    "python3 -c 'import json,sys; c=json.load(open(\"$tmp/moe_ep2.json\"))[\"candidates\"]; sys.exit(0 if {k[\"ep\"] for k in c}=={1,2} else 1)'"
"$bin" tune --json --threads 1 --model Mixtral-8x7B --device H100-80G --devices 64 --scheme V \
    --max-mbs 1 --pp 8 --ep 4 --etp 1 >"$tmp/moe_ep4.json" 2>&1
check "--ep 4 --etp 1 pin both" \
    "python3 -c 'import json,sys; c=json.load(open(\"$tmp/moe_ep4.json\"))[\"candidates\"]; sys.exit(0 if c and all(k[\"ep\"]==4 and k[\"etp\"]==1 for k in c) else 1)'"
"$bin" tune --json --threads 1 --device H100-80G --devices 8 --scheme V --max-mbs 1 \
    >"$tmp/dense_ep.json" 2>&1
check "a dense model's candidates carry no ep" \
    "python3 -c 'import json,sys; c=json.load(open(\"$tmp/dense_ep.json\"))[\"candidates\"]; sys.exit(0 if c and all(\"ep\" not in k for k in c) else 1)'"

exit $fail
