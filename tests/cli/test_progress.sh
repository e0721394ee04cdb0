#!/bin/sh
# tests/cli/test_progress.sh: long commands show progress on stderr only when it is a terminal,
# and never with -q/--quiet (issue 27 item 2). tune's grid for GPT3-13B on 32 devices takes
# seconds (its bar appears after half a second); export --search's bar is in test_export.sh.
# A terminal is script(1)'s pseudo-terminal; without script the terminal half is skipped.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"
big="--model GPT3-13B --devices 32"

"$bin" tune $big --top 1 >"$tmp/out" 2>"$tmp/err"
check "tune into files: the table, no bar" "grep -q '^best: ' $tmp/out && ! grep -q 'tuning \\[' $tmp/err"
command -v script >/dev/null 2>&1 || skip "script(1) not installed: no terminal to draw on"
script -qc "$bin tune $big --top 1" /dev/null >"$tmp/tty" 2>&1
check "tune on a terminal: the bar" "grep -q 'tuning \\[#*\\.*\\] [0-9]*/[0-9]* candidates' $tmp/tty"
script -qc "$bin tune $big --top 1 --quiet" /dev/null >"$tmp/q" 2>&1
check "tune --quiet on a terminal: the table, no bar" "grep -q 'best: ' $tmp/q && ! grep -q 'tuning \\[' $tmp/q"
script -qc "$bin tune $big --top 1 -q" /dev/null >"$tmp/q1" 2>&1
check "tune -q: the same" "grep -q 'best: ' $tmp/q1 && ! grep -q 'tuning \\[' $tmp/q1"
exit $fail
