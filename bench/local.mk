# bench/: speed goals live here, not in the tests. `make bench` builds and runs them all.
EXTRA_DIST += bench/bench.h
EXTRA_PROGRAMS = bench/bench_sim
bench_bench_sim_SOURCES = bench/bench_sim.c
bench_bench_sim_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_render
bench_bench_render_SOURCES = bench/bench_render.c
bench_bench_render_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a $(CAIRO_LIBS) \
	$(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_passes
bench_bench_passes_SOURCES = bench/bench_passes.c
bench_bench_passes_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_exec
bench_bench_exec_SOURCES = bench/bench_exec.c
bench_bench_exec_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
bench_bench_exec_LDADD = libmt_exec.a libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) \
	$(MPI_LIBS) $(BLAS_LIBS) $(EXEC_CUDA_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_tune
bench_bench_tune_SOURCES = bench/bench_tune.c
bench_bench_tune_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_async
bench_bench_async_SOURCES = bench/bench_async.c
bench_bench_async_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_inputs
bench_bench_inputs_SOURCES = bench/bench_inputs.c
bench_bench_inputs_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_trace
bench_bench_trace_SOURCES = bench/bench_trace.c
bench_bench_trace_CPPFLAGS = $(AM_CPPFLAGS) $(ZLIB_CFLAGS)
bench_bench_trace_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) \
	$(ZLIB_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_search
bench_bench_search_SOURCES = bench/bench_search.c
bench_bench_search_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_scale
bench_bench_scale_SOURCES = bench/bench_scale.c
bench_bench_scale_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_PROGRAMS += bench/bench_explore
bench_bench_explore_SOURCES = bench/bench_explore.c
bench_bench_explore_CPPFLAGS = $(AM_CPPFLAGS) $(NCURSES_CFLAGS)
bench_bench_explore_LDADD = libmt_tui.a libmt_flow.a libmt_render.a libmt_traces.a libmt_sim.a \
	libmt_model.a libmt_util.a $(NCURSES_LIBS) $(CAIRO_LIBS) $(CJSON_LIBS) $(ZLIB_LIBS) -lm
CLEANFILES += $(EXTRA_PROGRAMS)

BENCH_BINS = bench/bench_sim bench/bench_tune bench/bench_render bench/bench_passes bench/bench_exec \
	bench/bench_async bench/bench_inputs bench/bench_trace bench/bench_search bench/bench_scale bench/bench_explore
bench: $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; ./$$b || exit 1; done
.PHONY: bench
