#!/bin/sh
# tests/mpi/test_equivalence_dualpipev.sh: tests/mpi/equivalence.sh for DualPipeV (split
# backward with whole ones, in a V; issue 31).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" DualPipeV
