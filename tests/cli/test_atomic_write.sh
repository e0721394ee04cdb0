#!/bin/sh
# tests/cli/test_atomic_write.sh: writes are atomic (issue 9): every file the CLI writes goes
# to a temporary file that is renamed over the target (util/str.c str_write_file_atomic), so
# a write that fails or is killed half-way leaves an existing good file as it was. For each
# writer that exists (simulate --plan-out/--trace-out, optimize and tune --plan-out, export
# -o .svg/.pdf/.png), over an existing good file:
#   - the file system refuses the write half-way (RLIMIT_FSIZE with SIGXFSZ ignored: EFBIG):
#     exit 1, a message naming the file, the good file intact, no temporary file left;
#   - the process is killed half-way (RLIMIT_FSIZE, SIGXFSZ): the good file intact;
#   - the directory is not writable (as root, run as nobody; SKIP where that cannot be);
#   - the directory does not exist: exit 1 naming the file;
#   - the write succeeds: the good file is replaced by a whole new one, nothing left over.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
checked=0
. "${top_srcdir:-.}/tests/lib.sh"

# has CMD FLAG: the command exists and its --help mentions FLAG.
has() { "$bin" "$1" --help 2>/dev/null | grep -q -e "$2"; }

# writer NAME EXT CMD ARGS... -- the output path is appended last as "FLAG FILE" by $flag.
try() { # name ext flag cmd args...
    name=$1 ext=$2 flag=$3
    shift 3
    d="$tmp/$name"
    mkdir -p "$d"
    out="$d/out.$ext"
    printf 'GOOD %s\n' "$name" >"$out"
    cp "$out" "$d/expect"
    checked=$((checked + 1))

    # Half-way, refused: every write past 512 bytes fails with EFBIG.
    sh -c 'trap "" XFSZ; ulimit -f 1; exec "$@"' sh "$bin" "$@" "$flag" "$out" \
        >/dev/null 2>"$d/err"
    rc=$?
    check "$name: a refused write exits 1 (got $rc: $(head -c 200 "$d/err"))" "[ $rc -eq 1 ]"
    check "$name: a refused write names the file" "grep -q \"$out\" \"$d/err\""
    check "$name: a refused write keeps the good file" "cmp -s \"$out\" \"$d/expect\""
    check "$name: a refused write leaves no temporary file" \
        "[ -z \"\$(ls \"$d\" | grep -v -e '^out\\.$ext\$' -e '^expect\$' -e '^err\$')\" ]"

    # Half-way, killed by SIGXFSZ (a temporary file may stay; the target may not change).
    sh -c 'ulimit -f 1; exec "$@"' sh "$bin" "$@" "$flag" "$out" >/dev/null 2>&1
    rc=$?
    check "$name: killed half-way (status $rc)" "[ $rc -ne 0 ]"
    check "$name: a killed write keeps the good file" "cmp -s \"$out\" \"$d/expect\""
    rm -f "$d"/out."$ext".tmp.*

    # A directory that cannot be written (root writes anyway: as root, the command runs as
    # nobody; with no way to, the case is skipped and the test says SKIP, not PASS).
    if [ -n "$as_user" ] || [ "$(id -u)" -ne 0 ]; then
        chmod a-w "$d"
        $as_user "$bin" "$@" "$flag" "$out" >/dev/null 2>"$tmp/err.$name"
        rc=$?
        chmod u+w "$d"
        check "$name: an unwritable directory exits 1 (got $rc)" "[ $rc -eq 1 ]"
        check "$name: an unwritable directory names the file" "grep -q \"$out\" \"$tmp/err.$name\""
        check "$name: an unwritable directory keeps the good file" "cmp -s \"$out\" \"$d/expect\""
    else
        skipped="$skipped $name"
    fi

    # A directory that does not exist.
    "$bin" "$@" "$flag" "$d/no/such/dir/out.$ext" >/dev/null 2>"$d/err"
    rc=$?
    check "$name: a missing directory exits 1 (got $rc)" "[ $rc -eq 1 ]"
    check "$name: a missing directory names the file" \
        "grep -q \"$d/no/such/dir/out.$ext\" \"$d/err\""

    # Success replaces the good file whole.
    "$bin" "$@" "$flag" "$out" >/dev/null 2>"$d/err"
    rc=$?
    check "$name: the write succeeds (got $rc: $(head -c 200 "$d/err"))" "[ $rc -eq 0 ]"
    check "$name: the new file replaced the good one" \
        "[ -s \"$out\" ] && ! cmp -s \"$out\" \"$d/expect\""
    check "$name: no temporary file after success" "! ls \"$d\" | grep -q '\\.tmp\\.'"
    case $ext in
    json) check "$name: the new file is whole JSON" \
        "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \"$out\"" ;;
    esac
}

# Root is not stopped by permissions: run the unwritable-directory case as nobody (setpriv),
# in a tree nobody can enter and read.
as_user= skipped=
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    chmod 755 "$tmp"
    nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
    $nobody "$bin" --version >/dev/null 2>&1 && as_user=$nobody
fi
small="--unit-costs 1,2,1 --devices 4 --microbatches 8"
try simulate-plan json --plan-out simulate $small
try simulate-trace json --trace-out simulate $small
has optimize --plan-out && try optimize-plan json --plan-out optimize $small
has tune --plan-out && try tune-plan json --plan-out tune --model tiny --devices 4 --global-batch 8
if has export --output; then
    try export-svg svg -o export $small
    try export-pdf pdf -o export $small
    try export-png png -o export $small
fi
echo "$checked writers checked"
# every writer above exists: a --help that stopped naming its flag must not skip it silently
check "all 7 writers were tried (got $checked)" "[ $checked -eq 7 ]"
[ -n "$skipped" ] && skip "root, and no setpriv to run as nobody: unwritable directory untried for$skipped"
exit $fail
