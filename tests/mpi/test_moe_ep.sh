#!/bin/sh
# tests/mpi/test_moe_ep.sh: the MoE layer's expert-parallel exchange over MPI against the
# single-process reference (tests/mpi/moe_ep.c), with ep 1, 2 and 4 ranks.
set -u
helper=${top_builddir:-.}/tests/mpi/moe_ep
mpirun=${MPIRUN:-mpirun}
fail=0
for np in 1 2 4; do
    if ! "$mpirun" -np $np --allow-run-as-root --oversubscribe "$helper" >"${TMPDIR:-/tmp}/moe_ep.$$" 2>&1; then
        echo "FAIL: ep $np"
        fail=1
    fi
    cat "${TMPDIR:-/tmp}/moe_ep.$$"
done
rm -f "${TMPDIR:-/tmp}/moe_ep.$$"
[ $fail = 0 ] && echo "PASS: the MoE layer at ep 1, 2, 4 equals the reference"
exit $fail
