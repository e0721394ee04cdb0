#!/bin/sh
# tests/cli/test_man.sh: the manual page, mario-tui.1 (issue 20, item 9): it has a section
# for every command `mario-tui --help` lists and names every option each command's --help
# lists; it renders without warnings where man(1) is installed; the build installs it and
# puts it in the dist tarball.
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
page="$src/mario-tui.1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$src/tests/lib.sh"

check "the page exists" "[ -s $page ]"
# roff writes '-' as '\-': the page's text with that undone
sed 's/\\-/-/g' "$page" >"$tmp/page"
"$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }' >"$tmp/cmds"
check "--help lists the thirteen commands" "[ \$(wc -l <$tmp/cmds) -eq 13 ]"
for c in $(cat "$tmp/cmds"); do
    check "a section for $c" "grep -q '^\\.SS \"$c ' $tmp/page"
    "$bin" "$c" --help 2>&1 | grep -oE '^  (-[a-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u >"$tmp/opts"
    for o in $(cat "$tmp/opts"); do
        [ "$o" = "--help" ] && continue
        check "$c $o in the page" "grep -q -- '$o' $tmp/page"
    done
done
check "every explorer key of the help in the page" "grep -q 'Edits are all or nothing' $tmp/page && grep -q 'Mouse' $tmp/page"
check "the exit statuses" "grep -q '^\\.SH EXIT STATUS' $tmp/page"
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=all -l "$page" >"$tmp/out" 2>"$tmp/warn"
    check "man renders it" "grep -q 'MARIO-TUI(1)' $tmp/out"
    check "without warnings" "[ ! -s $tmp/warn ] || { cat $tmp/warn; false; }"
    rendered=yes
fi
# installed and distributed: the automake variable that does both
check "dist_man_MANS names it" "grep -q '^dist_man_MANS = mario-tui.1' $src/tui/local.mk"
# the render checks did not run: every other check held, but the test says SKIP, not PASS
[ "${rendered:-no}" = yes ] || skip "no man(1) or groff: the page's rendering is unchecked"
exit $fail
