#!/bin/sh
# tests/mpi/test_equivalence_vhalf.sh: tests/mpi/equivalence.sh for V-Half (split backward, two
# chunks in a V; issue 28).
exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" V-Half
