#!/bin/sh
# tests/cli/test_newcomer.sh: what a newcomer and a fuzzer hit (issue 41 items 5, 8, 9): every
# way a cap is given checked alike, bad input exit 2 everywhere (an inconsistent trace, a plan
# that cannot run), one truth between two screens (caps, degrees, peaks), refusals up front.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

# -- item 9: a cap given as the device's memory passes the check memory_per_device passes
printf '{"num_device": 2, "model": "tiny", "cluster": {"memory": 5}}' >"$tmp/cm.json"
"$bin" simulate "$tmp/cm.json" >/dev/null 2>"$tmp/err"
check "cluster.memory 5 is refused (exit 2) naming cluster.memory, 5G offered" \
    "[ $? -eq 2 ] && grep -q 'cluster.memory: 5 B is below' $tmp/err && grep -q 'did you mean 5G' $tmp/err"
printf '{"num_device": 2, "model": "tiny", "memory_per_device": 5}' >"$tmp/cm2.json"
"$bin" simulate "$tmp/cm2.json" >/dev/null 2>"$tmp/err"
check "memory_per_device 5 is refused alike" "[ $? -eq 2 ] && grep -q 'memory_per_device: 5 B' $tmp/err"
"$bin" simulate --model tiny --devices 2 --memory 5 >/dev/null 2>"$tmp/err"
check "--memory 5 is refused alike" "[ $? -eq 2 ] && grep -q -- '--memory: 5 B' $tmp/err"

# -- item 9: an inconsistent trace and a plan that cannot run are bad input (exit 2)
"$bin" simulate --unit-costs 1,2,1 --devices 2 --microbatches 2 --trace-out "$tmp/t.json" \
    --plan-out "$tmp/p.json" >/dev/null 2>&1
python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/t.json"))  # device 1's receive of micro-batch 1 dropped
d["traceEvents"] = [e for e in d["traceEvents"] if not (e.get("name") == "RA1" and e.get("pid") == 1)]
json.dump(d, open(t + "/t-norecv.json", "w"))
p = json.load(open(t + "/p.json"))  # device 0 waits for a gradient before sending: deadlock
l = p["devices"][0]
l.insert(1, l.pop(4))
json.dump(p, open(t + "/p-dead.json", "w"))
PY
"$bin" import "$tmp/t-norecv.json" -o "$tmp/imp.json" >/dev/null 2>"$tmp/err"
check "import of a trace with no matching receive exits 2 naming it" \
    "[ $? -eq 2 ] && grep -q 'no matching RA1 on device 1' $tmp/err"
"$bin" simulate "$tmp/p-dead.json" >/dev/null 2>"$tmp/err"
check "simulate of a deadlocked plan exits 2 naming the stall" \
    "[ $? -eq 2 ] && grep -q 'deadlock: device 0 stalls' $tmp/err"
"$bin" optimize "$tmp/p-dead.json" >/dev/null 2>"$tmp/err"
check "optimize of a deadlocked plan exits 2" "[ $? -eq 2 ]"
"$bin" simulate --model GPT3-13B --devices 4 --memory 10G >/dev/null 2>&1
check "a plan over its cap is still a failure (exit 1), not bad input" "[ $? -eq 1 ]"

# -- item 9: export --search alone: one panel, titled as the picture (no "search" heading)
"$bin" export --model tiny --devices 4 --microbatches 8 --search --quiet --svg "$tmp/s.svg" \
    >/dev/null 2>&1
check "export --search alone: no panel heading" \
    "[ -s $tmp/s.svg ] && ! grep -q 'class=\"heading\"[^>]*>search' $tmp/s.svg"
"$bin" export --model tiny --devices 4 --microbatches 8 --passes 0 --search --quiet \
    --svg "$tmp/s2.svg" >/dev/null 2>&1
check "export --passes 0 --search: the search panel is headed search" \
    "grep -q 'class=\"heading\"[^>]*>search ' $tmp/s2.svg"

# -- item 9 and 5: a command refuses up front, with the figure, what this machine's memory
# cannot hold. The memory left is made small with ulimit -v (an address-space limit the
# estimate reads); under ASan, which reserves terabytes of address space, it cannot be.
big="$tmp/big.json" # the largest plan the tool accepts
printf '{"num_device": 4096, "num_microbatches": 1024, "model": {"preset": "tiny", "num_layers": 100000}}' >"$big"
if (ulimit -v 6000000 && "$bin" --help) >/dev/null 2>&1; then
    for cmd in optimize "simulate --search" "explore --dump-screen" tune; do
        start=$(date +%s)
        (ulimit -v 6000000; "$bin" $cmd "$big" >/dev/null 2>"$tmp/err")
        rc=$?
        took=$(($(date +%s) - start))
        check "$cmd on 4,096 x 1,024 cells under 6 GB: refused up front (exit $rc, ${took} s)" \
            "[ $rc -eq 1 ] && [ $took -lt 10 ] && grep -q 'would need about [0-9.]* GiB of memory for 4096 stages x 1024 micro-batches' $tmp/err && grep -q 'is left (ulimit -v)' $tmp/err"
    done
    (ulimit -v 6000000; "$bin" simulate --model tiny --devices 4 --microbatches 8 >/dev/null 2>&1)
    check "a small plan still runs under 6 GB" "[ $? -eq 0 ]"
    start=$(date +%s)
    (ulimit -v 6000000; "$bin" run --steps 1 >/dev/null 2>"$tmp/err")
    rc=$?
    check "run of the default config under 6 GB: refused up front naming what it needs (exit $rc)" \
        "[ $rc -eq 1 ] && [ \$((\$(date +%s) - $start)) -lt 10 ] && grep -q 'the CPU run needs at least [0-9.]* GiB of host memory (its 8 ranks' $tmp/err"
else
    echo "SKIP (part): ulimit -v cannot be set under this build (ASan)"
fi

exit $fail
