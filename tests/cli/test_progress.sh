#!/bin/sh
# tests/cli/test_progress.sh: long commands show progress on stderr only when it is a terminal,
# and never with -q/--quiet (issue 27 item 2). tune's grid for GPT3-13B on 32 devices takes
# seconds (its bar appears after half a second); optimize's passes at 2,048 micro-batches take
# about a second (the pass running appears after 0.2 s); export --search's bar is in
# test_export.sh.
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
"$bin" optimize $big --microbatches 2048 >"$tmp/oout" 2>"$tmp/oerr"
check "optimize into files: the table, no progress" "grep -q '^prepose ' $tmp/oout && ! grep -q 'passes' $tmp/oerr"
command -v script >/dev/null 2>&1 || skip "script(1) not installed: no terminal to draw on"
script -qc "$bin tune $big --top 1" /dev/null >"$tmp/tty" 2>&1
check "tune on a terminal: the bar" "grep -q 'tuning \\[#*\\.*\\] [0-9]*/[0-9]* candidates' $tmp/tty"
script -qc "$bin tune $big --top 1 --quiet" /dev/null >"$tmp/q" 2>&1
check "tune --quiet on a terminal: the table, no bar" "grep -q 'best: ' $tmp/q && ! grep -q 'tuning \\[' $tmp/q"
script -qc "$bin tune $big --top 1 -q" /dev/null >"$tmp/q1" 2>&1
check "tune -q: the same" "grep -q 'best: ' $tmp/q1 && ! grep -q 'tuning \\[' $tmp/q1"
script -qc "$bin optimize $big --microbatches 2048" /dev/null >"$tmp/otty" 2>&1
check "optimize on a terminal: the pass running, then the table on a cleared line" \
    "grep -q \"optimize: Mario's passes: [a-z]*\" $tmp/otty && grep -q '^.*prepose .*x ' $tmp/otty"
script -qc "$bin optimize $big --microbatches 2048 --quiet" /dev/null >"$tmp/oq" 2>&1
check "optimize --quiet on a terminal: the table, no progress" \
    "grep -q 'prepose ' $tmp/oq && ! grep -q 'passes:' $tmp/oq"
# --offload: the schedule search's bar, then the offload search's, named apart (1F1B 32 x 128,
# unit costs at 2.05 M_θ: each phase runs most of a second)
script -qc "$bin optimize --unit-costs 1,2,1,1,0.5 --devices 32 --microbatches 128 --memory 2.05 --search --offload" \
    /dev/null >"$tmp/off" 2>&1
check "optimize --search --offload on a terminal: the offload search's bar after the search's" \
    "grep -q 'optimize: search \[' $tmp/off && grep -q 'optimize: offload search \[#*\.*\] [0-9]* of [0-9]* schedules' $tmp/off"
exit $fail
