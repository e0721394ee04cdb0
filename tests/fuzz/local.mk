# tests/fuzz/: a fuzz target per input format (docs/design.md "Conventions"; sqlite fuzzcheck, tmux fuzz/).
# replay_<target> runs LLVMFuzzerTestOneInput over every file of tests/fuzz/corpus/<target>/
# in every `make check`. ./configure --enable-fuzzing CC=clang also builds fuzz_<target>, the
# libFuzzer binaries; `make fuzz FUZZ_SECONDS=600` runs each that long in tests/fuzz/work/
# (new inputs and crash-* files land there: copy a crash into the corpus with its fix).
FUZZ_TARGETS = config plan chrome kineto calibration seqlen mapping chart gzip csv import microcal \
	nccl_tests
FUZZ_TARGETS += launch_megatron launch_toml layout
FUZZ_SECONDS = 60

check_PROGRAMS += tests/fuzz/replay_config tests/fuzz/replay_plan tests/fuzz/replay_chrome \
	tests/fuzz/replay_kineto tests/fuzz/replay_calibration tests/fuzz/replay_seqlen \
	tests/fuzz/replay_mapping tests/fuzz/replay_chart tests/fuzz/replay_gzip tests/fuzz/replay_csv \
	tests/fuzz/replay_import tests/fuzz/replay_microcal tests/fuzz/replay_nccl_tests
TESTS += tests/fuzz/replay_config tests/fuzz/replay_plan tests/fuzz/replay_chrome \
	tests/fuzz/replay_kineto tests/fuzz/replay_calibration tests/fuzz/replay_seqlen \
	tests/fuzz/replay_mapping tests/fuzz/replay_chart tests/fuzz/replay_gzip tests/fuzz/replay_csv \
	tests/fuzz/replay_import tests/fuzz/replay_microcal tests/fuzz/replay_nccl_tests
tests_fuzz_replay_microcal_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_microcal.c tests/fuzz/replay.c
tests_fuzz_replay_microcal_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)
tests_fuzz_replay_microcal_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_fuzz_replay_nccl_tests_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_nccl_tests.c \
	tests/fuzz/replay.c
tests_fuzz_replay_nccl_tests_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
check_PROGRAMS += tests/fuzz/replay_launch_megatron tests/fuzz/replay_launch_toml
TESTS += tests/fuzz/replay_launch_megatron tests/fuzz/replay_launch_toml
FUZZ_LAUNCH_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_launch_common.h
tests_fuzz_replay_launch_megatron_SOURCES = $(FUZZ_LAUNCH_SOURCES) \
	tests/fuzz/fuzz_launch_megatron.c tests/fuzz/replay.c
tests_fuzz_replay_launch_megatron_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_fuzz_replay_launch_toml_SOURCES = $(FUZZ_LAUNCH_SOURCES) tests/fuzz/fuzz_launch_toml.c \
	tests/fuzz/replay.c
tests_fuzz_replay_launch_toml_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# the layout string reader (issue 39 item 2)
check_PROGRAMS += tests/fuzz/replay_layout
TESTS += tests/fuzz/replay_layout
tests_fuzz_replay_layout_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_layout.c tests/fuzz/replay.c
tests_fuzz_replay_layout_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_fuzz_replay_import_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_import.c tests/fuzz/replay.c
tests_fuzz_replay_import_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) $(ZLIB_LIBS) -lm
tests_fuzz_replay_csv_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_csv.c tests/fuzz/replay.c
tests_fuzz_replay_csv_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_fuzz_replay_config_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_config.c tests/fuzz/replay.c
tests_fuzz_replay_config_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) $(ZLIB_LIBS) -lm
tests_fuzz_replay_plan_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_plan.c tests/fuzz/replay.c
tests_fuzz_replay_plan_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) $(ZLIB_LIBS) -lm
FUZZ_TRACE_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_trace.h tests/fuzz/fuzz_trace.c
FUZZ_TRACE_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) \
	$(ZLIB_LIBS) -lm
tests_fuzz_replay_chrome_SOURCES = $(FUZZ_TRACE_SOURCES) tests/fuzz/fuzz_chrome.c \
	tests/fuzz/replay.c
tests_fuzz_replay_chrome_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_replay_kineto_SOURCES = $(FUZZ_TRACE_SOURCES) tests/fuzz/fuzz_kineto.c \
	tests/fuzz/replay.c
tests_fuzz_replay_kineto_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_replay_calibration_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_calibration.c \
	tests/fuzz/replay.c
tests_fuzz_replay_calibration_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)
tests_fuzz_replay_calibration_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_fuzz_replay_seqlen_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_seqlen.c tests/fuzz/replay.c
tests_fuzz_replay_seqlen_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_fuzz_replay_mapping_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_mapping.c \
	tests/fuzz/replay.c
tests_fuzz_replay_mapping_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) -lm
tests_fuzz_replay_chart_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_chart.c tests/fuzz/replay.c
tests_fuzz_replay_chart_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CAIRO_LIBS) $(CJSON_LIBS) -lm
tests_fuzz_replay_gzip_SOURCES = $(FUZZ_TRACE_SOURCES) tests/fuzz/fuzz_gzip.c \
	tests/fuzz/replay.c
tests_fuzz_replay_gzip_CPPFLAGS = $(AM_CPPFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_replay_gzip_LDADD = $(FUZZ_TRACE_LDADD)

if ENABLE_FUZZING
check_PROGRAMS += tests/fuzz/fuzz_config tests/fuzz/fuzz_plan tests/fuzz/fuzz_chrome \
	tests/fuzz/fuzz_kineto tests/fuzz/fuzz_calibration tests/fuzz/fuzz_seqlen \
	tests/fuzz/fuzz_mapping tests/fuzz/fuzz_chart tests/fuzz/fuzz_gzip tests/fuzz/fuzz_csv \
	tests/fuzz/fuzz_import tests/fuzz/fuzz_microcal tests/fuzz/fuzz_nccl_tests
tests_fuzz_fuzz_microcal_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_microcal.c
tests_fuzz_fuzz_microcal_CPPFLAGS = $(tests_fuzz_replay_microcal_CPPFLAGS)
tests_fuzz_fuzz_microcal_LDADD = $(tests_fuzz_replay_microcal_LDADD)
tests_fuzz_fuzz_microcal_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_nccl_tests_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_nccl_tests.c
tests_fuzz_fuzz_nccl_tests_LDADD = $(tests_fuzz_replay_nccl_tests_LDADD)
tests_fuzz_fuzz_nccl_tests_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
check_PROGRAMS += tests/fuzz/fuzz_launch_megatron tests/fuzz/fuzz_launch_toml
tests_fuzz_fuzz_launch_megatron_SOURCES = $(FUZZ_LAUNCH_SOURCES) \
	tests/fuzz/fuzz_launch_megatron.c
tests_fuzz_fuzz_launch_megatron_LDADD = $(tests_fuzz_replay_launch_megatron_LDADD)
tests_fuzz_fuzz_launch_megatron_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_launch_toml_SOURCES = $(FUZZ_LAUNCH_SOURCES) tests/fuzz/fuzz_launch_toml.c
tests_fuzz_fuzz_launch_toml_LDADD = $(tests_fuzz_replay_launch_toml_LDADD)
tests_fuzz_fuzz_launch_toml_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
check_PROGRAMS += tests/fuzz/fuzz_layout
tests_fuzz_fuzz_layout_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_layout.c
tests_fuzz_fuzz_layout_LDADD = $(tests_fuzz_replay_layout_LDADD)
tests_fuzz_fuzz_layout_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_import_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_import.c
tests_fuzz_fuzz_import_LDADD = $(tests_fuzz_replay_import_LDADD)
tests_fuzz_fuzz_import_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_csv_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_csv.c
tests_fuzz_fuzz_csv_LDADD = $(tests_fuzz_replay_csv_LDADD)
tests_fuzz_fuzz_csv_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_config_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_config.c
tests_fuzz_fuzz_config_LDADD = $(tests_fuzz_replay_config_LDADD)
tests_fuzz_fuzz_config_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_plan_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_plan.c
tests_fuzz_fuzz_plan_LDADD = $(tests_fuzz_replay_plan_LDADD)
tests_fuzz_fuzz_plan_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_chrome_SOURCES = $(FUZZ_TRACE_SOURCES) tests/fuzz/fuzz_chrome.c
tests_fuzz_fuzz_chrome_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_fuzz_chrome_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_kineto_SOURCES = $(FUZZ_TRACE_SOURCES) tests/fuzz/fuzz_kineto.c
tests_fuzz_fuzz_kineto_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_fuzz_kineto_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_calibration_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_calibration.c
tests_fuzz_fuzz_calibration_CPPFLAGS = $(tests_fuzz_replay_calibration_CPPFLAGS)
tests_fuzz_fuzz_calibration_LDADD = $(tests_fuzz_replay_calibration_LDADD)
tests_fuzz_fuzz_calibration_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_seqlen_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_seqlen.c
tests_fuzz_fuzz_seqlen_LDADD = $(tests_fuzz_replay_seqlen_LDADD)
tests_fuzz_fuzz_seqlen_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_mapping_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_mapping.c
tests_fuzz_fuzz_mapping_LDADD = $(tests_fuzz_replay_mapping_LDADD)
tests_fuzz_fuzz_mapping_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_chart_SOURCES = tests/fuzz/fuzz.h tests/fuzz/fuzz_chart.c
tests_fuzz_fuzz_chart_LDADD = $(tests_fuzz_replay_chart_LDADD)
tests_fuzz_fuzz_chart_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_gzip_SOURCES = $(FUZZ_TRACE_SOURCES) tests/fuzz/fuzz_gzip.c
tests_fuzz_fuzz_gzip_CPPFLAGS = $(tests_fuzz_replay_gzip_CPPFLAGS)
tests_fuzz_fuzz_gzip_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_fuzz_gzip_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)

fuzz: $(FUZZ_TARGETS:%=tests/fuzz/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p tests/fuzz/work/$$t || exit 1; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s (tests/fuzz/work/$$t)"; \
	  ./tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -dict=$(srcdir)/tests/fuzz/fuzz_$$t.dict -artifact_prefix=tests/fuzz/work/ \
	    tests/fuzz/work/$$t $(srcdir)/tests/fuzz/corpus/$$t || exit 1; \
	done
else
fuzz:
	@echo "fuzz targets need ./configure --enable-fuzzing CC=clang" >&2; exit 1
endif
.PHONY: fuzz

EXTRA_DIST += tests/fuzz/README.md tests/fuzz/corpus $(FUZZ_TARGETS:%=tests/fuzz/fuzz_%.dict)

# Parse-only targets (issue 41 item 9): each reader whose invariant target simulates what it
# read (config, plan, chrome, kineto: ~800 execs/s) built again with -DFUZZ_PARSE_ONLY, the
# reader's invariants alone, so that the parsers get >= 10 M executions in a campaign. They
# replay their reader's corpus (tests/fuzz/replay.c).
FUZZ_PARSE_TARGETS = config_parse plan_parse chrome_parse kineto_parse
check_PROGRAMS += tests/fuzz/replay_config_parse tests/fuzz/replay_plan_parse \
	tests/fuzz/replay_chrome_parse tests/fuzz/replay_kineto_parse
TESTS += tests/fuzz/replay_config_parse tests/fuzz/replay_plan_parse \
	tests/fuzz/replay_chrome_parse tests/fuzz/replay_kineto_parse
FUZZ_PARSE_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_PARSE_ONLY
tests_fuzz_replay_config_parse_SOURCES = $(tests_fuzz_replay_config_SOURCES)
tests_fuzz_replay_config_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_replay_config_parse_LDADD = $(tests_fuzz_replay_config_LDADD)
tests_fuzz_replay_plan_parse_SOURCES = $(tests_fuzz_replay_plan_SOURCES)
tests_fuzz_replay_plan_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_replay_plan_parse_LDADD = $(tests_fuzz_replay_plan_LDADD)
tests_fuzz_replay_chrome_parse_SOURCES = $(tests_fuzz_replay_chrome_SOURCES)
tests_fuzz_replay_chrome_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_replay_chrome_parse_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_replay_kineto_parse_SOURCES = $(tests_fuzz_replay_kineto_SOURCES)
tests_fuzz_replay_kineto_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_replay_kineto_parse_LDADD = $(FUZZ_TRACE_LDADD)
if ENABLE_FUZZING
check_PROGRAMS += tests/fuzz/fuzz_config_parse tests/fuzz/fuzz_plan_parse \
	tests/fuzz/fuzz_chrome_parse tests/fuzz/fuzz_kineto_parse
tests_fuzz_fuzz_config_parse_SOURCES = $(tests_fuzz_fuzz_config_SOURCES)
tests_fuzz_fuzz_config_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_fuzz_config_parse_LDADD = $(tests_fuzz_replay_config_LDADD)
tests_fuzz_fuzz_config_parse_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_plan_parse_SOURCES = $(tests_fuzz_fuzz_plan_SOURCES)
tests_fuzz_fuzz_plan_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_fuzz_plan_parse_LDADD = $(tests_fuzz_replay_plan_LDADD)
tests_fuzz_fuzz_plan_parse_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_chrome_parse_SOURCES = $(tests_fuzz_fuzz_chrome_SOURCES)
tests_fuzz_fuzz_chrome_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_fuzz_chrome_parse_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_fuzz_chrome_parse_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
tests_fuzz_fuzz_kineto_parse_SOURCES = $(tests_fuzz_fuzz_kineto_SOURCES)
tests_fuzz_fuzz_kineto_parse_CPPFLAGS = $(FUZZ_PARSE_CPPFLAGS)
tests_fuzz_fuzz_kineto_parse_LDADD = $(FUZZ_TRACE_LDADD)
tests_fuzz_fuzz_kineto_parse_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LIBS)
endif
# `make fuzz-parse FUZZ_SECONDS=600`: the parse-only targets in turn, on their readers' corpora.
fuzz-parse: $(FUZZ_PARSE_TARGETS:%=tests/fuzz/fuzz_%)
	@for t in $(FUZZ_PARSE_TARGETS); do r=$${t%_parse}; \
	  mkdir -p tests/fuzz/work/$$t || exit 1; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s (tests/fuzz/work/$$t)"; \
	  ./tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -dict=$(srcdir)/tests/fuzz/fuzz_$$r.dict -artifact_prefix=tests/fuzz/work/ \
	    tests/fuzz/work/$$t $(srcdir)/tests/fuzz/corpus/$$r || exit 1; \
	done
.PHONY: fuzz-parse
