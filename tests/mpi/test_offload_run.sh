#!/bin/sh
# tests/mpi/test_offload_run.sh: the executor runs offload (OF/RL, issue 29) on the CPU backend.
# 1F1B on the tiny model, 2 and 4 ranks, 8 micro-batches: the baseline plan (exec_ref plans)
# and the same with an OF after every forward of every device but the last and an RL before
# the RG that precedes its backward (tests/mpi/offload_plan.py; a copy 0.01 of a forward under
# the plan's unit costs, about as fast beside compute as a memcpy is on a CPU).
# A copy changes no value: after two steps the offloading run's losses and every gradient and
# parameter are byte-identical to the baseline's and to the single-process replay of its plan
# (exec_ref replay: one step). Memory, against the simulator run with the executor's byte
# counts (run --json): each device's measured peak within 1 % of the simulated one beside four
# 16 KiB messages (what the simulator does not count: messages in flight, which the baseline
# shows too), the peak activations' drop from the baseline equal to the simulated drop within
# the same four messages, and the host
# memory the copies held at once (the host pool, counted apart) equal to the simulated host
# peak; the last device offloads nothing and holds no host memory.
set -u
bin=${MT_BIN:-./mario-tui}
helper=${top_builddir:-.}/tests/mpi/exec_ref
data=${top_srcdir:-.}/data/corpus.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

for D in 2 4; do
    mkdir "$tmp/p$D"
    "$helper" plans 1F1B $D 8 1 "$tmp/p$D" || { echo "FAIL: plans 1F1B $D"; exit 1; }
    python3 "${top_srcdir:-.}/tests/mpi/offload_plan.py" "$tmp/p$D/base.json" "$tmp/p$D/of.json" ||
        { echo "FAIL: offload_plan.py"; exit 1; }
    for k in base of; do
        mkdir "$tmp/d$D$k"
        "$bin" run "$tmp/p$D/$k.json" --steps 2 --dump "$tmp/d$D$k" --json >"$tmp/j$D$k.json" \
            2>"$tmp/e$D$k"
        rc=$?
        check "D=$D $k: run exits 0" "[ $rc -eq 0 ]"
        [ $rc -eq 0 ] || head -c 600 "$tmp/e$D$k"
    done
    check "D=$D: the offloading run's losses are the baseline's, bit for bit" \
        "cmp -s $tmp/d${D}base/loss $tmp/d${D}of/loss"
    same=yes
    for f in "$tmp/d${D}base"/stage-*; do
        cmp -s "$f" "$tmp/d${D}of/${f##*/}" || same="no (${f##*/})"
    done
    check "D=$D: every gradient and parameter the baseline's, byte for byte: $same" \
        "[ '$same' = yes ]"
    mkdir "$tmp/o$D" "$tmp/r$D"
    "$bin" run "$tmp/p$D/of.json" --steps 1 --dump "$tmp/o$D" >/dev/null 2>&1
    "$helper" replay "$tmp/p$D/of.json" "$data" "$tmp/r$D" || { echo "FAIL: replay"; fail=1; }
    check "D=$D: one step's loss is the replay's of its plan" "cmp -s $tmp/o$D/loss $tmp/r$D/loss"
    : >"$tmp/o$D.all"
    for st in $(ls "$tmp/o$D" | sed -n 's/^stage-\([0-9]*\)\.rank.*grad$/\1/p' | sort -u); do
        cat "$tmp/o$D"/stage-$st.rank-*.grad >>"$tmp/o$D.all"
    done
    check "D=$D: its gradients are the replay's, bit for bit" \
        "'$helper' cmp '$tmp/o$D.all' '$tmp/r$D/grad' 0 >/dev/null"
    python3 - "$tmp/j${D}base.json" "$tmp/j${D}of.json" "D=$D" <<'PY' || fail=1
import json, sys
base, of = (json.load(open(f))["devices"] for f in sys.argv[1:3])
ok = True
for b, o in zip(base, of):
    last = o["device"] == len(of) - 1
    meas = o["peak_memory"]
    sim = o["simulated_static_memory"] + o["simulated_peak_activation_memory"]
    drop_m = b["peak_activation_memory"] - o["peak_activation_memory"]
    drop_s = b["simulated_peak_activation_memory"] - o["simulated_peak_activation_memory"]
    host, host_s = o["peak_host_memory"], o["simulated_host_memory"]
    good = (abs(meas - sim) <= 0.01 * sim + 4 * 16384 and abs(drop_m - drop_s) <= 4 * 16384
            and host == host_s and (host == 0) == last and (drop_s > 0 or last))
    print("%s device %d: peak %.0f KiB measured, %.0f simulated; activations drop %.0f KiB "
          "(simulated %.0f); host %.0f KiB (simulated %.0f)%s"
          % (sys.argv[3], o["device"], meas / 1024, sim / 1024, drop_m / 1024, drop_s / 1024,
             host / 1024, host_s / 1024, "" if good else "  FAIL"))
    ok = ok and good
sys.exit(0 if ok else 1)
PY
done
exit $fail
