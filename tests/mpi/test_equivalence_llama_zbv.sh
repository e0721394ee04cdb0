#!/bin/sh
# tests/mpi/test_equivalence_llama_zbv.sh: tests/mpi/equivalence.sh for ZB-V (split backward)
# on the LLaMA block (the tiny-llama preset; exec_ref runs its twin).
MT_EXEC_MODEL=tiny-llama exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" ZB-V
