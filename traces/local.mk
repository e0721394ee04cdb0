noinst_LIBRARIES += libmt_traces.a
libmt_traces_a_SOURCES = traces/chrome.c traces/chrome.h
# Readers, alignment, accuracy and calibration (issue 8).
libmt_traces_a_SOURCES += traces/scan.c traces/scan.h traces/trace.c traces/trace.h \
	traces/chrome_read.c traces/chrome_read.h traces/kineto.c traces/kineto.h traces/actions.c traces/actions.h \
	traces/mapping.c traces/mapping_json.c traces/mapping.h traces/align.c traces/align.h \
	traces/accuracy.c traces/accuracy.h traces/accuracy_json.c traces/calibrate.c traces/calibrate.h traces/calibrate_json.c \
	traces/replay.c traces/replay.h traces/import.c traces/import.h \
	traces/formats.c traces/formats.h
libmt_traces_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS) $(ZLIB_CFLAGS)

check_PROGRAMS += tests/unit/test_traces
TESTS += tests/unit/test_traces
tests_unit_test_traces_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_traces_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) $(ZLIB_LIBS) -lm

check_PROGRAMS += tests/unit/test_replay tests/unit/test_import
TESTS += tests/unit/test_replay tests/unit/test_import
tests_unit_test_import_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_import_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) $(ZLIB_LIBS) -lm
tests_unit_test_replay_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_replay_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) $(ZLIB_LIBS) -lm

# compare and --calibration end to end (test_compare: no executor); profile and the accuracy
# script's quick subset on the CPU executor (skipped without mpirun)
EXTRA_DIST += tests/cli/test_compare.sh tests/cli/test_profile.sh tests/cli/test_accuracy.sh \
	tests/cli/test_replay.sh tests/cli/test_import.sh scripts/accuracy.sh \
	scripts/accuracy_report.py
TESTS += tests/cli/test_compare.sh tests/cli/test_profile.sh tests/cli/test_accuracy.sh \
	tests/cli/test_replay.sh tests/cli/test_import.sh
