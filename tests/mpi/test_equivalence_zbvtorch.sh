#!/bin/sh
# tests/mpi/test_equivalence_zbvtorch.sh: tests/mpi/equivalence.sh for ZBVZeroBubble (split backward, two
# chunks in a V; issue 28).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" ZBVZeroBubble
