#!/bin/sh
# tests/mpi/test_equivalence_vmin.sh: tests/mpi/equivalence.sh for V-Min (split backward, two
# chunks in a V; issue 28).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" V-Min
