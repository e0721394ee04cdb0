#!/bin/sh
# tests/mpi/test_equivalence_llama_v.sh: tests/mpi/equivalence.sh for V on the LLaMA block
# (the tiny-llama preset: RMSNorm, SwiGLU, RoPE, 4 heads on 2 K/V heads; exec_ref runs its twin).
MT_EXEC_MODEL=tiny-llama exec "${top_srcdir:-.}/tests/mpi/equivalence.sh" V
