#!/bin/sh
# tests/mpi/test_equivalence_zbw.sh: tests/mpi/equivalence.sh for ZB-W (split backward, chunks
# looped over the ranks; issue 31).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" ZB-W
