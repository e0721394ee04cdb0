# exec/: the executor (issue 7). The CPU model (OpenBLAS), its counting allocator and its
# byte-level dataset; the interpreter, MPI communication, trace capture and the launcher.
# The CUDA backend (cuBLAS + kernels) and NCCL are added when configure finds them.
noinst_LIBRARIES += libmt_exec.a
libmt_exec_a_SOURCES = exec/xformer.h exec/xformer_cpu.c exec/xformer_llama.h exec/xformer_llama.c exec/xformer_gpt.h exec/xformer_gpt.c \
	exec/xformer_moe.h exec/xformer_moe.c exec/moe_comm_mpi.c exec/moe_sim.c exec/memcount.h exec/memcount.c \
	exec/dataset.h exec/dataset.c exec/check.h exec/check.c exec/backend.h exec/backend_cpu.c \
	exec/copy_cpu.h exec/copy_cpu.c \
	exec/comm.h exec/comm_mpi.c exec/capture.h exec/capture.c exec/interp.h exec/interp.c exec/fault.h exec/fault.c exec/interp_check.c \
	exec/interp_internal.h exec/interp_weights.c exec/interp_offload.c exec/run_json.c \
	exec/copy_cuda.h exec/launch.h exec/launch.c exec/input_aware.h exec/input_aware.c exec/postmortem.h \
	exec/postmortem.c exec/microbench.h exec/microbench.c
libmt_exec_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS) $(MPI_CFLAGS) \
	-DMT_PKGDATADIR='"$(pkgdatadir)"' -DMT_SRCDATADIR='"$(abs_top_srcdir)/data"' \
	-DMT_MPIRUN='"$(MPIRUN)"' $(CUDA_CPPFLAGS) $(NCCL_CPPFLAGS)

EXTRA_DIST += data/corpus.txt data/README
pkgdata_DATA = data/corpus.txt

# The CUDA backend, when configure found CUDA (+ NCCL): the model's CUDA twin is compiled by
# nvcc into its own library (no per-target flags, so the suffix rule applies, as autotools projects with CUDA do);
# libmt_exec.a comes again after it for the CPU code it calls. The architectures come from
# configure's --with-cuda-arch (NVCC_ARCH).
NVCCFLAGS = -O2 -std=c++17 $(NVCC_ARCH) -Xcompiler -Wall
SUFFIXES = .cu
.cu.o:
	$(AM_V_CC)$(NVCC) $(NVCCFLAGS) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) \
		-c -o $@ $<
if HAVE_CUDA
libmt_exec_a_SOURCES += exec/backend_cuda.c
noinst_LIBRARIES += libmt_exec_cuda.a
libmt_exec_cuda_a_SOURCES = exec/xformer_cuda.cu exec/copy_cuda.cu exec/microbench_cuda.cu
if HAVE_NCCL
libmt_exec_a_SOURCES += exec/comm_nccl.c exec/microbench_nccl.c
EXEC_CUDA_LIBS = libmt_exec_cuda.a libmt_exec.a libmt_util.a $(CUDA_LIBS) $(NCCL_LIBS) \
	$(MPI_LIBS) $(BLAS_LIBS) -lstdc++ -lm
else
EXEC_CUDA_LIBS = libmt_exec_cuda.a libmt_exec.a libmt_util.a $(CUDA_LIBS) $(MPI_LIBS) \
	$(BLAS_LIBS) -lstdc++ -lm
endif
else
EXEC_CUDA_LIBS =
endif

check_PROGRAMS += tests/unit/test_xformer
TESTS += tests/unit/test_xformer
tests_unit_test_xformer_LDADD = libmt_exec.a libmt_util.a $(BLAS_LIBS) -lm
check_PROGRAMS += tests/unit/test_xformer_llama
TESTS += tests/unit/test_xformer_llama
tests_unit_test_xformer_llama_LDADD = libmt_exec.a libmt_util.a $(BLAS_LIBS) -lm
check_PROGRAMS += tests/unit/test_xformer_moe
TESTS += tests/unit/test_xformer_moe
tests_unit_test_xformer_moe_LDADD = libmt_exec.a libmt_util.a $(BLAS_LIBS) -lm
check_PROGRAMS += tests/unit/test_copy_cpu
TESTS += tests/unit/test_copy_cpu
tests_unit_test_copy_cpu_LDADD = libmt_exec.a libmt_util.a $(BLAS_LIBS) -lm

# tests/mpi/: the executor end to end under mpirun (the scripts use $(MT_BIN) and exec_ref).
check_PROGRAMS += tests/mpi/exec_ref
tests_mpi_exec_ref_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
tests_mpi_exec_ref_LDADD = libmt_exec.a libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) \
	$(BLAS_LIBS) -lm
check_PROGRAMS += tests/mpi/moe_ep
tests_mpi_moe_ep_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS) $(MPI_CFLAGS)
tests_mpi_moe_ep_LDADD = libmt_exec.a libmt_util.a $(MPI_LIBS) $(BLAS_LIBS) -lm
MPI_TESTS = tests/mpi/test_moe_ep.sh tests/mpi/test_moe_schedules.sh tests/mpi/test_run_cli.sh tests/mpi/test_train.sh tests/mpi/test_fault.sh \
	tests/mpi/test_equivalence_v.sh tests/mpi/test_equivalence_x.sh \
	tests/mpi/test_equivalence_llama_v.sh tests/mpi/test_equivalence_llama_w.sh \
	tests/mpi/test_equivalence_llama_zbv.sh \
	tests/mpi/test_equivalence_w.sh tests/mpi/test_equivalence_gpipe.sh \
	tests/mpi/test_async_async.sh tests/mpi/test_async_pipedream.sh \
	tests/mpi/test_input_aware.sh tests/mpi/test_equivalence_zbh1.sh \
	tests/mpi/test_equivalence_zbv.sh tests/mpi/test_equivalence_zbh2.sh \
	tests/mpi/test_equivalence_zbw.sh tests/mpi/test_equivalence_dualpipev.sh \
	tests/mpi/test_equivalence_zbvtorch.sh tests/mpi/test_equivalence_vhalf.sh \
	tests/mpi/test_equivalence_vmin.sh tests/mpi/test_offload_run.sh
TESTS += $(MPI_TESTS)
EXTRA_DIST += $(MPI_TESTS) tests/mpi/equivalence.sh tests/mpi/async_equivalence.sh \
	tests/mpi/offload_plan.py

# tests/gpu/: the CUDA backend where a GPU is present; SKIP (77) otherwise.
check_PROGRAMS += tests/gpu/test_xformer_cuda
tests_gpu_test_xformer_cuda_LDADD = libmt_exec.a libmt_util.a $(EXEC_CUDA_LIBS) $(BLAS_LIBS) -lm
TESTS += tests/gpu/test_xformer_cuda tests/gpu/test_run_gpu.sh tests/gpu/test_offload_gpu.sh
EXTRA_DIST += tests/gpu/test_run_gpu.sh tests/gpu/test_offload_gpu.sh
