#!/bin/sh
# tests/mpi/test_equivalence_zbv.sh: tests/mpi/equivalence.sh for ZB-V (split backward, issue 17).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" ZB-V
