# tests/lib.sh: what the shell tests share. Each sources it first:
#     . "${top_srcdir:-.}/tests/lib.sh"
# (make check sets top_srcdir; run by hand from the top of the tree it is ".").
# A test ends with `exit $fail`: 0 when every check held, 1 otherwise; 77 is a skip.
fail=0

# check NAME CMD: the shell expression CMD must succeed; if not, prints "FAIL: NAME" and the
# test fails (it goes on, so one run reports every failed check).
check() { if eval "$2"; then :; else echo "FAIL: $1"; fail=1; fi; }

# json FILE EXPR: the Python expression EXPR holds for d, the JSON document in FILE.
json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

# skip WHY...: this test cannot run here; automake counts exit 77 as SKIP. A check that
# already failed wins: a test is not skipped past a failure.
skip() {
    echo "SKIP: $*"
    [ "$fail" = 0 ] && exit 77
    exit 1
}
