# flow/: the workflows below the commands (issue 31): what a command does, callable by tui/ and
# by the tests directly; above exec/ and traces/, below tui/.
noinst_LIBRARIES += libmt_flow.a
libmt_flow_a_SOURCES = flow/compare.c flow/compare.h flow/profile.c flow/profile.h \
	flow/run.c flow/run.h flow/profile_micro.c
libmt_flow_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)

check_PROGRAMS += tests/unit/test_flow
TESTS += tests/unit/test_flow
tests_unit_test_flow_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_flow_LDADD = libmt_flow.a libmt_exec.a libmt_traces.a libmt_sim.a libmt_model.a \
	libmt_util.a $(CJSON_LIBS) $(MPI_LIBS) $(BLAS_LIBS) $(EXEC_CUDA_LIBS) $(ZLIB_LIBS) -lm
