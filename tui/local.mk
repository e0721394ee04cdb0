noinst_LIBRARIES += libmt_tui.a
libmt_tui_a_SOURCES = tui/cmd.h tui/cmd.c tui/cmd_options.c tui/cmd_plan.c tui/cmd_simulate.c tui/cmd_simulate.h tui/cmd_simulate_print.c tui/cmd_costs.c tui/cmd_costs.h tui/cmd_costs_json.c tui/cmd_optimize.c tui/cmd_tune.c tui/cmd_explore.c tui/explore.c tui/explore.h \
	tui/keys.c tui/explore_edit.c tui/explore_offload.c tui/explore_mouse.c tui/explore_trace.c tui/explore_wait.c tui/explore_build.c tui/screen.c tui/screen.h tui/view_frame.c tui/view_gantt.c tui/view_copy.c tui/view_inspect.c \
	tui/view_tune.c tui/view_help.c tui/view_buckets.c tui/view_units.c tui/curses_compat.h tui/cmd_export.c \
	tui/cmd_run.c tui/cmd_plan_inputs.c
libmt_tui_a_SOURCES += tui/cmd_compare.c tui/cmd_profile.c tui/cmd_import.c tui/cmd_profile_micro.c \
	tui/cmd_profile_micro.h
libmt_tui_a_SOURCES += tui/cmd_import_args.c tui/export_launch.c
libmt_tui_a_SOURCES += tui/cmd_chart.c tui/cmd_models.c tui/cmd_progress.c
libmt_tui_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS) $(NCURSES_CFLAGS)

bin_PROGRAMS += mario-tui
mario_tui_SOURCES = tui/main.c
mario_tui_LDADD = libmt_tui.a libmt_flow.a libmt_exec.a libmt_render.a libmt_traces.a libmt_sim.a libmt_model.a \
	libmt_util.a $(NCURSES_LIBS) $(CAIRO_LIBS) $(CJSON_LIBS) $(MPI_LIBS) $(BLAS_LIBS) \
	$(EXEC_CUDA_LIBS) -lm
mario_tui_LDADD += $(ZLIB_LIBS)

# `mario-tui optimize` end to end (Figure 2 in the table and --json, --lmbs, exit statuses).
EXTRA_DIST += tests/cli/test_optimize.sh
TESTS += tests/cli/test_optimize.sh

# docs/paper-comparison.md: the paper's Table 5 simulated beside its numbers.
EXTRA_DIST += scripts/paper_comparison.sh docs/paper-comparison.md
paper-comparison: mario-tui$(EXEEXT)
	MT_BIN='$(abs_top_builddir)/mario-tui' $(SHELL) '$(top_srcdir)/scripts/paper_comparison.sh' \
		'$(top_srcdir)/docs/paper-comparison.md'
.PHONY: paper-comparison

# docs/async.md: asynchronous pipelines (PipeMare, PipeDream) beside the synchronous schemes.
EXTRA_DIST += scripts/async_doc.sh docs/async.md
async-doc: mario-tui$(EXEEXT)
	MT_BIN='$(abs_top_builddir)/mario-tui' $(SHELL) '$(top_srcdir)/scripts/async_doc.sh' \
		'$(top_srcdir)/docs/async.md'
.PHONY: async-doc

# docs/input-aware.md: input-aware checkpointing, simulated, and the length sample (issue 12).
EXTRA_DIST += scripts/input_aware_doc.sh scripts/make_lengths.sh docs/input-aware.md \
	examples/gpt3-1.6b-inputs.json \
	data/lengths.txt
input-aware-doc: mario-tui$(EXEEXT)
	MT_BIN='$(abs_top_builddir)/mario-tui' $(SHELL) '$(top_srcdir)/scripts/input_aware_doc.sh' \
		'$(top_srcdir)/docs/input-aware.md'
.PHONY: input-aware-doc

# The manual page (issue 20): written by hand, installed in man1 and in the dist tarball;
# tests/cli/test_man.sh checks it names every command and option that --help lists.
dist_man_MANS = mario-tui.1
TESTS += tests/cli/test_man.sh
EXTRA_DIST += tests/cli/test_man.sh

# Launchers in and out (issue 40): import-args, export --format, tune --emit, launch files as CONFIG.
EXTRA_DIST += tests/cli/test_launch.sh tests/data/launch/megatron_llama3_8b.sh \
	tests/data/launch/megatron_gpt3_175b.sh tests/data/launch/megatron_cmdline.txt \
	tests/data/launch/torchtitan_llama3_8b.toml tests/data/launch/torchtitan_llama3_70b_pp.toml \
	tests/data/launch/torchtitan_llama3_405b_zbv.toml tests/data/launch/megatron_deepseek_v3.sh \
	tests/data/launch/megatron_qwen3_30b_a3b.sh tests/data/launch/torchtitan_deepseek_v3_16b.toml
TESTS += tests/cli/test_launch.sh
