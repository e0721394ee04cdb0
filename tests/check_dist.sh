#!/bin/sh
# tests/check_dist.sh: every file a test reads is in the release tarball (issue 41 item 10).
# `make distcheck` finds a missing file only by failing in the unpacked tarball, minutes later;
# this reads the paths the tests name (tests/, bench/: $src/tests/data/x.json, "%s/examples/...",
# a golden case's examples/...), keeps those that exist in the source tree, and checks that each
# is in automake's DISTFILES (itself or a folder above it), as `make print-distfiles` lists them.
# Prints each missing path and exits 1; 0 when every file a test reads is distributed.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
dist=$(mktemp) || exit 1
trap 'rm -f "$dist"' EXIT
# DISTFILES names files relative to the build folder, some as $(srcdir)/x: strip the prefix.
${MAKE:-make} -s -C "$build" print-distfiles | sed "s|^$src/||; s|^\./||; s|/*$||" | sort -u >"$dist"
[ -s "$dist" ] || { echo "FAIL: make print-distfiles listed nothing"; exit 1; }
cd "$src" || exit 1
fail=0
named=$(find tests bench -type f \( -name '*.sh' -o -name '*.c' -o -name '*.h' -o -name '*.py' \
    -o -name '*.txt' \) | sort | xargs grep -hoE \
    '(tests|examples|data|docs|traces|scripts|bench)/[A-Za-z0-9_./-]*[A-Za-z0-9_]' | sort -u)
# A folder a test reads (a corpus, the goldens) stands for every file in it; tests/check_docs.sh
# reads every docs/*.md and README.md by a pattern the scan above cannot see.
for p in $(for n in $named docs/*.md README.md; do
    if [ -d "$n" ]; then find "$n" -type f; elif [ -e "$n" ]; then echo "$n"; fi
done | sort -u); do
    # what a build in the source folder leaves beside the tests (a test program, its log) is
    # made, not read from the tarball
    case $p in *.log | *.trs | *.o) continue ;; esac
    [ "$(head -c 4 "$p" | od -An -c | tr -d ' ')" = '177ELF' ] && continue
    q=$p
    found=0
    while :; do
        if grep -qxF "$q" "$dist"; then found=1; break; fi
        case $q in */*) q=${q%/*} ;; *) break ;; esac
    done
    if [ "$found" = 0 ]; then
        echo "FAIL: $p is read by a test but not distributed (add it to EXTRA_DIST)"
        fail=1
    fi
done
exit $fail
