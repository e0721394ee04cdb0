#!/bin/sh
# tests/mpi/test_equivalence_zbh1.sh: tests/mpi/equivalence.sh for ZB-H1 (split backward, issue 17).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" ZB-H1
