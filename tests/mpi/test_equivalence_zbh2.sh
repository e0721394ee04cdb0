#!/bin/sh
# tests/mpi/test_equivalence_zbh2.sh: tests/mpi/equivalence.sh for ZB-H2 (split backward, W at
# the tail; issue 31).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" ZB-H2
