#!/bin/sh
# tests/cli/test_accuracy.sh: scripts/accuracy.sh --quick in every `make check` (issue 8: the
# accuracy script runs in CI on a small subset of configs): a profile, 8 configs (V and GPipe,
# base and optimized, 2 and 4 ranks) run on the CPU executor and compared with and without the
# calibration. The figures are printed into the log, not asserted as timings (this machine
# may be busy); what is asserted is that every config ran and that the calibrated peak memory,
# which the executor's counting allocator makes deterministic, is within 1 %.
# Skips (77) without mpirun.
set -u
top=${top_srcdir:-.}
MT_BIN=${MT_BIN:-./mario-tui}
export MT_BIN
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

sh "$top/scripts/accuracy.sh" --quick "$tmp/accuracy.md" 2>"$tmp/err"
rc=$?
check "accuracy.sh --quick exits 0 ($(tail -c 300 $tmp/err))" "[ $rc -eq 0 ]"
sed -n '/^## Summary/,/^## Per config/p' "$tmp/accuracy.md"
check "every config ran" "! grep -q 'Runs that failed' $tmp/accuracy.md"
python3 - "$tmp/accuracy.md" <<'PY' || fail=1
import sys
rows = [l.split("|") for l in open(sys.argv[1]) if l.startswith("| all |")]
if not rows:
    print("FAIL: no summary row"); sys.exit(1)
mem = float(rows[0][6].strip().rstrip("%").strip())
print("calibrated peak-memory MAPE %.2f %%" % mem)
if not mem < 1.0:
    print("FAIL: calibrated peak-memory MAPE %.2f %% is over 1 %%" % mem); sys.exit(1)
PY

[ $fail -eq 0 ] && echo "test_accuracy: all passed"
exit $fail
