#!/bin/sh
# tests/mpi/test_fault.sh: a rank that dies, hangs or is frozen with SIGSTOP ends the run
# within 10 s, non-zero, with a message naming it, no process left behind, and the trace of
# what ran so far is valid JSON; ranks given different plans, and a plan that would
# deadlock, are refused before any compute. The test hooks (exec/interp.h):
# MT_FAULT_KILL_RANK=r makes rank r raise SIGKILL on itself halfway through step
# MT_FAULT_AT_STEP; MT_FAULT_HANG_RANK=r makes it stop answering there, MT_FAULT_STOP_RANK=r
# raise SIGSTOP (the others then time out after --timeout seconds and name it).
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

# fault KIND RANK SCHEME: runs a 4-rank plan of 6 steps with the hook on step 2
# no rank of the run may outlive it (the ranks' command lines name $tmp)
left_behind() {
    sleep 0.5
    if pgrep -f "$tmp/" >/dev/null; then
        echo "FAIL: processes left behind:"; pgrep -af "$tmp/"; fail=1
        pkill -9 -f "$tmp/"
    fi
}

fault() {
    start=$(date +%s.%N)
    env "MT_FAULT_$1_RANK=$2" MT_FAULT_AT_STEP=2 timeout 60 "$bin" run --model tiny \
        --scheme "$3" --devices 4 --microbatches 8 --steps 6 --timeout 3 \
        --trace-out "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    secs=$(awk "BEGIN { print $(date +%s.%N) - $start }")
    echo "$1 rank $2 ($3): exit $rc after $secs s; $(grep -c . "$tmp/err") lines on stderr:"
    sed 's/^/    /' "$tmp/err"
    check "$1 $2: exits non-zero (got $rc)" "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
    # 10 s with the 3 s timeout; a wait may last 4 of the slowest step (exec/interp.c), which a
    # loaded machine stretches: the bound follows the longest wait the ranks report
    waited=$(grep -o 'nothing within [0-9.]* s' "$tmp/err" | awk '$3 > m { m = $3 } END { print m + 0 }')
    limit=$(awk "BEGIN { print 7 + ($waited > 3 ? $waited : 3) }")
    check "$1 $2: within $limit s (took $secs; longest wait $waited s)" \
        "awk 'BEGIN { exit !($secs < $limit) }'"
    left_behind
    check "$1 $2: the trace is valid JSON with instructions of steps 1 and 2 and says partial" \
        "python3 -c 'import json,sys; d=json.load(open(\"$tmp/t.json\")); ev=[e for e in d[\"traceEvents\"] if e[\"ph\"]==\"X\"]; s=set(e[\"args\"][\"step\"] for e in ev); sys.exit(0 if {0,1} <= s and d[\"otherData\"][\"status\"].startswith(\"partial\") else 1)'"
}

fault KILL 1 V
check "a killed rank is named as killed" "grep -q 'rank 1 (device 1, pid [0-9]*) died during step 2' $tmp/err"
check "only rank 1 is named as died" "[ \$(grep -c 'died during' $tmp/err) -eq 1 ]"
fault KILL 3 X
check "a killed last rank is named" "grep -q 'rank 3 (device 3, pid [0-9]*) died during step 2' $tmp/err"
# A hung rank: those waiting for it time out, and the launcher follows who waited for whom
# (rank 0 may have been waiting for rank 1, itself waiting for rank 2) to the rank that
# waited for nobody and went silent.
hung_named='rank 2 (device 2, pid [0-9]*) stopped answering during step 2'
fault HANG 2 V
check "a hung rank is named as the one the others waited for" "grep -q '$hung_named' $tmp/err"
# (Among our lines: Open MPI's own, e.g. libevent's "[warn] Epoll MOD(1) on fd 25 failed",
# may come first.)
check "it is named before the ranks that gave up waiting" \
    "grep '^mario-tui run:' $tmp/err | grep -v MT_FAULT | head -1 | grep -q '$hung_named'"
fault STOP 2 X
check "a rank frozen by SIGSTOP is named as hung" "grep -q '$hung_named.*hung' $tmp/err"

# Ranks given different plans (an MPMD launch by hand): all refuse before any compute. Within
# 10 s of the tool's own time: what starting two ranks that do nothing costs on this machine
# now (seconds under a loaded CI) is added, so the bound catches a hang, not a slow launcher.
start=$(date +%s.%N)
mpirun --oversubscribe -np 2 "$bin" --version >/dev/null 2>&1
launch=$(awk "BEGIN { print $(date +%s.%N) - $start }")
limit=$(awk "BEGIN { print 10 + $launch }")
"$bin" simulate --model tiny --scheme V --devices 2 --microbatches 4 --plan-out "$tmp/a.json" \
    >/dev/null
"$bin" simulate --model tiny --scheme GPipe --devices 2 --microbatches 4 \
    --plan-out "$tmp/b.json" >/dev/null
start=$(date +%s.%N)
timeout 60 mpirun --oversubscribe -np 1 "$bin" run "$tmp/a.json" : -np 1 "$bin" run \
    "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
secs=$(awk "BEGIN { print $(date +%s.%N) - $start }")
echo "different plans: exit $rc after $secs s:"; sed 's/^/    /' "$tmp/err"
check "different plans: exits non-zero (got $rc)" "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
check "different plans: within $limit s (took $secs; an idle launch $launch s)" \
    "awk 'BEGIN { exit !($secs < $limit) }'"
check "different plans: named" "grep -q 'rank 1 was given a different plan' $tmp/err"
check "different plans: nothing computed" "! grep -q 'loss' $tmp/out"
left_behind

# A plan that would deadlock (device 0 sends micro-batch 0 only after its gradient came
# back): refused before launch, naming what each device waits for.
python3 - "$tmp/a.json" "$tmp/dead.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
d = p["devices"][0]
sa = d.pop(1)
assert sa["op"] == "SA" and sa["mb"] == 0
i = next(k for k, x in enumerate(d) if x["op"] == "RG" and x["mb"] == 0)
d.insert(i + 1, sa)
json.dump(p, open(sys.argv[2], "w"))
PY
start=$(date +%s.%N)
timeout 60 "$bin" run "$tmp/dead.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
secs=$(awk "BEGIN { print $(date +%s.%N) - $start }")
echo "deadlocking plan: exit $rc after $secs s:"; sed 's/^/    /' "$tmp/err"
check "deadlock: exits non-zero (got $rc)" "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
check "deadlock: within $limit s (took $secs; an idle launch $launch s)" \
    "awk 'BEGIN { exit !($secs < $limit) }'"
check "deadlock: names the file and both stalls" \
    "grep -q 'dead.json: deadlock: device 0 stalls .*RG0.* device 1 stalls .*RA0' $tmp/err"
left_behind
exit $fail
