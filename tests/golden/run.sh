#!/bin/sh
# tests/golden/run.sh: every case of tests/golden/cases.txt run and compared byte for byte with
# tests/golden/expected/NAME (numbers are printed with 17 significant digits, so "byte for
# byte" is "to the last bit"). Wall-clock fields (plan_ms_*, setup_ms) are blanked first.
# `run.sh --update` rewrites the expected files (only for a change meant to move figures).
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
dir=$src/tests/golden
update=0
[ "${1:-}" = "--update" ] && update=1
abs=$(cd "$src" && pwd) # a config's lengths file is printed with its absolute path
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the compare case's inputs: an X plan (A100-40G) and the trace of the same plan on an H100
"$bin" simulate --scheme X --devices 4 --microbatches 8 --plan-out "$tmp/px.json" >/dev/null &&
"$bin" simulate --scheme X --devices 4 --microbatches 8 --device H100-80G \
    --trace-out "$tmp/tx.json" >/dev/null || { echo "FAIL: golden inputs"; exit 1; }
blank='s/"\(plan_ms_mean\|plan_ms_max\|setup_ms\)":[^,}]*/"\1": "-"/g'
fail=0 n=0
while read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    args=$(printf '%s' "$args" | sed "s|{D}|$dir/data|g; s|{E}|$src/examples|g; s|{T}|$tmp|g")
    file=
    case "$args" in *' => '*) file=${args##* => }; args=${args% => *} ;; esac
    # shellcheck disable=SC2086
    "$bin" $args >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    [ -n "$file" ] && cp "$file" "$tmp/stdout" 2>/dev/null
    { echo "exit $rc"; sed "$blank; s|$tmp|{T}|g; s|$dir/data|{D}|g; s|$src/examples|{E}|g; s|$abs/|{S}/|g" \
        "$tmp/stdout"; echo "stderr:"; sed "s|$tmp|{T}|g" "$tmp/stderr"; } >"$tmp/got"
    if [ "$update" = 1 ]; then
        cp "$tmp/got" "$dir/expected/$name"
    elif ! cmp -s "$tmp/got" "$dir/expected/$name"; then
        echo "FAIL: $name: mario-tui $args"
        diff "$dir/expected/$name" "$tmp/got" | head -20
        fail=1
    fi
done <"$dir/cases.txt"
[ "$update" = 1 ] && { echo "updated $n golden files"; exit 0; }
[ "$fail" = 0 ] && echo "PASS: $n golden cases identical"
exit $fail
