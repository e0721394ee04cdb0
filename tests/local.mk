# tests/: unit tests link only the layers they test; CLI tests drive the binary ($MT_BIN).
EXTRA_DIST += tests/check.h tests/moe_ref.h tests/unit_config.h tests/progress_log.h tests/eval_vs_sim.h tests/lib.sh tests/cli/test_simulate.sh tests/tui/test_explore.sh
check_PROGRAMS += tests/unit/test_sim tests/unit/test_plan_json
TESTS += tests/unit/test_sim tests/unit/test_plan_json tests/cli/test_simulate.sh \
	tests/tui/test_explore.sh
tests_unit_test_sim_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
tests_unit_test_plan_json_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)
tests_unit_test_plan_json_LDADD = libmt_traces.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CJSON_LIBS) -lm
check_PROGRAMS += tests/unit/test_tune
TESTS += tests/unit/test_tune tests/cli/test_tune.sh
EXTRA_DIST += tests/cli/test_tune.sh
tests_unit_test_tune_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 39 item 2: tune --search-split on a split worked by hand
check_PROGRAMS += tests/unit/test_tune_split_search
TESTS += tests/unit/test_tune_split_search
tests_unit_test_tune_split_search_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# Hostile input (issue 9): truncation sweep, every config field, atomic writes, file names.
EXTRA_DIST += tests/cli/test_truncation.sh tests/cli/test_config_fields.sh \
	tests/cli/test_atomic_write.sh tests/cli/test_error_names_file.sh
TESTS += tests/cli/test_truncation.sh tests/cli/test_config_fields.sh \
	tests/cli/test_atomic_write.sh tests/cli/test_error_names_file.sh
# Under ASan, Open MPI's plugins leak at exit by design, are built without frame pointers and
# are unloaded by MPI_Finalize: their leak stacks end in "<unknown module>", which
# tests/lsan.supp cannot match. The slow unwinder (fast_unwind_on_malloc=0) would see them but
# makes every malloc so slow that the fault tests miss their 10 s. So the processes that
# mpirun starts - the ranks, whichever test runs them - get no leak check (ASan and UBSan
# still check every access): Open MPI's mca_base_env_list sets their environment, and every
# other process keeps the leak check. The executor's leaks are checked by its unit tests.
AM_TESTS_ENVIRONMENT += \
	OMPI_MCA_mca_base_env_list="ASAN_OPTIONS=$$ASAN_OPTIONS:detect_leaks=0"; \
	export OMPI_MCA_mca_base_env_list;
# Asynchronous pipelines (issue 11): Async / PipeDream orders, staleness, stashing, passes.
check_PROGRAMS += tests/unit/test_async
TESTS += tests/unit/test_async tests/cli/test_async.sh
EXTRA_DIST += tests/cli/test_async.sh
tests_unit_test_async_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
check_PROGRAMS += tests/unit/test_explore
TESTS += tests/unit/test_explore
tests_unit_test_explore_CPPFLAGS = $(AM_CPPFLAGS) $(NCURSES_CFLAGS)
tests_unit_test_explore_LDADD = libmt_tui.a libmt_flow.a libmt_render.a libmt_traces.a libmt_sim.a \
	libmt_model.a libmt_util.a $(NCURSES_LIBS) $(CAIRO_LIBS) $(CJSON_LIBS) -lm
# Input-aware checkpointing (issue 12): lengths files and seq_length forms, bytes and FLOPs as
# functions of s (the executor's layer bytes against its counting allocator: libmt_exec.a's
# model and allocator link without MPI), selective memory, the planner, its cache, the predictor.
check_PROGRAMS += tests/unit/test_inputs
TESTS += tests/unit/test_inputs
tests_unit_test_inputs_LDADD = libmt_sim.a libmt_model.a libmt_exec.a libmt_util.a \
	$(CJSON_LIBS) $(BLAS_LIBS) -lm
# `mario-tui plan-inputs` and the explorer's bucket list end to end, bad input (issue 12).
EXTRA_DIST += tests/cli/test_plan_inputs.sh
TESTS += tests/cli/test_plan_inputs.sh
# Golden figures (issue 16): simulate / optimize / tune / plan-inputs / compare / export outputs
# recorded before the architecture refactor, compared byte for byte.
TESTS += tests/golden/run.sh
EXTRA_DIST += tests/golden/run.sh tests/golden/cases.txt tests/golden/expected \
	tests/golden/data
# issue 16 (h5-json): util/json.h, the one strict JSON reader, and the positions every
# reader's semantic errors carry (plan, its config, calibration, mapping, chart, config).
check_PROGRAMS += tests/unit/test_json
TESTS += tests/unit/test_json tests/cli/test_json_positions.sh
tests_unit_test_json_LDADD = libmt_util.a $(CJSON_LIBS) -lm
EXTRA_DIST += tests/cli/test_json_positions.sh tests/data/bad/plan-mb-string.json \
	tests/data/bad/plan-config-dp.json tests/data/bad/calibration-term-string.json \
	tests/data/bad/mapping-stage-fraction.json tests/data/bad/chart-value-string.json
# issue 16: the critical path out of the explorer (sim/core/critical.h).
check_PROGRAMS += tests/unit/test_critical
TESTS += tests/unit/test_critical
tests_unit_test_critical_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 16: the launcher's post-mortem out of tui/ (exec/postmortem.h), on synthetic spools.
check_PROGRAMS += tests/unit/test_postmortem
TESTS += tests/unit/test_postmortem
tests_unit_test_postmortem_LDADD = libmt_exec.a libmt_util.a
# issue 16: includes point one way; each third-party library behind its module.
TESTS += tests/check_layers.sh
EXTRA_DIST += tests/check_layers.sh
# issue 41 item 10: every file a test reads is in the tarball (see tests/check_dist.sh).
TESTS += tests/check_dist.sh
EXTRA_DIST += tests/check_dist.sh tests/data/pippy-4stage-skewed.json
# The documents (tests/check_docs.sh loads every JSON block in them; the rest ship as the manual).
EXTRA_DIST += docs/accuracy-large.md docs/accuracy.md docs/benchmarks.md docs/commands.md \
	docs/cost-model.md docs/design.md docs/offload.md docs/search.md docs/traces.md \
	docs/zero-bubble.md docs/fidelity.md docs/launchers.md docs/long-context.md docs/moe.md docs/fp8.md docs/fsdp.md
# issue 16: util/ (errors, sizes and numbers, positions, UTF-8, atomic files, allocation).
check_PROGRAMS += tests/unit/test_check
TESTS += tests/unit/test_check
check_PROGRAMS += tests/unit/test_util
TESTS += tests/unit/test_util
tests_unit_test_util_LDADD = libmt_util.a $(CJSON_LIBS) -lm
# issue 16: every command's --help made from its option table and naming each option, its
# usage errors (exit 2, one message), and the presets model/presets.c has (presets_*_names).
check_PROGRAMS += tests/unit/test_cmd_help
TESTS += tests/unit/test_cmd_help
tests_unit_test_cmd_help_LDADD = libmt_tui.a libmt_flow.a libmt_exec.a libmt_render.a libmt_traces.a \
	libmt_sim.a libmt_model.a libmt_util.a $(NCURSES_LIBS) $(CAIRO_LIBS) $(CJSON_LIBS) \
	$(MPI_LIBS) $(BLAS_LIBS) $(EXEC_CUDA_LIBS) $(ZLIB_LIBS) -lm
# issue 16: the one option parser of the command line (tui/cmd_options.c) on a made-up table.
check_PROGRAMS += tests/unit/test_cmd_options
TESTS += tests/unit/test_cmd_options
tests_unit_test_cmd_options_LDADD = libmt_tui.a libmt_flow.a libmt_render.a libmt_traces.a libmt_sim.a \
	libmt_model.a libmt_util.a $(CJSON_LIBS) $(ZLIB_LIBS) -lm

# issue 16 (h1-pairing): send/receive pairing on hand-worked placements and built plans
check_PROGRAMS += tests/unit/test_vpipe
TESTS += tests/unit/test_vpipe
tests_unit_test_vpipe_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm

check_PROGRAMS += tests/unit/test_torch_csv
TESTS += tests/unit/test_torch_csv
tests_unit_test_torch_csv_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
check_PROGRAMS += tests/unit/test_zb tests/unit/test_recv_order
TESTS += tests/unit/test_recv_order
tests_unit_test_recv_order_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
TESTS += tests/unit/test_zb tests/cli/test_zb.sh
EXTRA_DIST += tests/cli/test_zb.sh
tests_unit_test_zb_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 38 item 4 (h-dualpipe): DualPipe's order against its authors' step(), its 2x parameters,
# and the expert all-to-alls hidden in F&B pairs (hand-worked unit-cost times).
check_PROGRAMS += tests/unit/test_dualpipe
TESTS += tests/unit/test_dualpipe
tests_unit_test_dualpipe_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
TESTS += tests/cli/test_dualpipe.sh
EXTRA_DIST += tests/cli/test_dualpipe.sh scripts/dualpipe_reference_order.py
# issue 27 (h-vgreedy): the V-Half / V-Min builder's slot timeline against a plain walk.
check_PROGRAMS += tests/unit/test_slot_peak
TESTS += tests/unit/test_slot_peak
tests_unit_test_slot_peak_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 16/20 (h-paint): the terminal painter of render/'s layout, cell by cell against 1F1B
# and GPipe worked out by hand (21, 10 and 7 columns), with and without UTF-8.
check_PROGRAMS += tests/unit/test_paint_cells
TESTS += tests/unit/test_paint_cells
tests_unit_test_paint_cells_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CAIRO_LIBS) $(CJSON_LIBS) -lm
# issue 27: the explorer's rows made straight from a plan (render/layout_lanes.c): a plan
# worked out by hand, and the same rows and cells as read from layout_build's figure for every
# scheme, offload, async iterations and a measured row out of order.
check_PROGRAMS += tests/unit/test_layout_lanes
TESTS += tests/unit/test_layout_lanes
tests_unit_test_layout_lanes_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CAIRO_LIBS) $(CJSON_LIBS) -lm
# issue 27: the critical path's colour apart from every op fill, under simulated colour-vision
# deficiencies and on 256-, 16- and 8-colour terminals.
check_PROGRAMS += tests/unit/test_palette
TESTS += tests/unit/test_palette
tests_unit_test_palette_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a -lm
# issue 20: the explorer as a person sees it: edits, OOM, units, layout, colours, traces, mouse.
TESTS += tests/tui/test_edits.sh tests/tui/test_oom.sh tests/tui/test_small.sh tests/tui/test_layout.sh \
	tests/tui/test_dark.sh tests/tui/test_traces.sh tests/tui/test_mouse.sh
EXTRA_DIST += tests/tui/sgr.py tests/tui/test_edits.sh tests/tui/test_oom.sh tests/tui/test_small.sh tests/tui/test_layout.sh \
	tests/tui/test_dark.sh tests/tui/test_traces.sh tests/tui/test_mouse.sh
# issues 18 and 19 in the explorer: the bound and the search step; the replayed row.
TESTS += tests/tui/test_search.sh tests/tui/test_replay.sh tests/tui/test_offload.sh
EXTRA_DIST += tests/tui/test_search.sh tests/tui/test_replay.sh tests/tui/test_offload.sh
# issue 27: the explorer's screen in priority order at 80x24, 120x40 and 200x50; Esc stops a
# long tuner run or build within 0.5 s and keeps what ran; CLI progress only on a terminal.
TESTS += tests/tui/test_screen.sh tests/tui/test_cancel.sh tests/cli/test_progress.sh
TESTS += tests/tui/test_edit_behind.sh
EXTRA_DIST += tests/tui/test_edit_behind.sh
EXTRA_DIST += tests/tui/test_screen.sh tests/tui/test_cancel.sh tests/cli/test_progress.sh
# ... and the explorer's Gantt drawn by it (what --dump-screen prints), cell by cell.
check_PROGRAMS += tests/unit/test_view_gantt
TESTS += tests/unit/test_view_gantt
tests_unit_test_view_gantt_CPPFLAGS = $(AM_CPPFLAGS) $(NCURSES_CFLAGS)
tests_unit_test_view_gantt_LDADD = libmt_tui.a libmt_flow.a libmt_render.a libmt_traces.a libmt_sim.a \
	libmt_model.a libmt_util.a $(NCURSES_LIBS) $(CAIRO_LIBS) $(CJSON_LIBS) $(ZLIB_LIBS) -lm
# issue 26 item 9: the analytic time model against the paper's measured Table 5 (MAPE <= 10 %).
TESTS += tests/cli/test_paper_table5.sh
EXTRA_DIST += tests/cli/test_paper_table5.sh tests/data/paper_table5.tsv
# issue 37 item 7: published measured runs scored by scripts/fidelity.py (docs/fidelity.md).
TESTS += tests/cli/test_fidelity.sh
EXTRA_DIST += tests/cli/test_fidelity.sh scripts/fidelity.py data/fidelity/README.md \
	data/fidelity/megatron_lm.tsv data/fidelity/llama3_paper.tsv data/fidelity/nemo.tsv \
	data/fidelity/torchtitan.tsv data/fidelity/cpu_runs.tsv data/fidelity/cpu_calibration.json
# The training stack (issue 26): attention, SP, TP communication, bytes per parameter.
check_PROGRAMS += tests/unit/test_ops
TESTS += tests/unit/test_ops
tests_unit_test_ops_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 37 item 7: what Megatron-LM's overlap flags hide (model/cost.c), worked by hand.
check_PROGRAMS += tests/unit/test_overlap
TESTS += tests/unit/test_overlap
tests_unit_test_overlap_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 37: the tuner's memo of the cost model gives the bytes a build without it gives.
check_PROGRAMS += tests/unit/test_cost_cache
TESTS += tests/unit/test_cost_cache
tests_unit_test_cost_cache_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# issue 38: mixtures of experts, MLA, the expert groups (model/moe.h).
check_PROGRAMS += tests/unit/test_moe
TESTS += tests/unit/test_moe
tests_unit_test_moe_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
check_PROGRAMS += tests/unit/test_stack
TESTS += tests/unit/test_stack tests/cli/test_stack.sh tests/cli/test_costs.sh
EXTRA_DIST += tests/cli/test_stack.sh tests/cli/test_costs.sh
tests_unit_test_stack_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# Devices people have and the framework profile (issue 37 items 3, 5).
TESTS += tests/cli/test_devices.sh
EXTRA_DIST += tests/cli/test_devices.sh
# The stages' layers (model/stage_split.c), Megatron's layout string (model/pp_layout.c) and the
# split search (sim/tune/tune_split.c): the default rule against today's for every (layers,
# stages) to 128 x 64, Megatron's own examples, random strings against a restatement of its
# parser, round trips, the first/last and account-for flags, torchtitan's weights, the keys,
# the search against brute force.
check_PROGRAMS += tests/unit/test_stage_split
TESTS += tests/unit/test_stage_split
tests_unit_test_stage_split_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# Issue 41: published Hugging Face configs of each family (tests/data/hf/README names them).
# test_hf_params.sh checks their whole parameter counts against the published ones (the op
# builder, model/ops_build.c, prices each family's parts; its header gives each formula).
EXTRA_DIST += tests/cli/test_hf_params.sh tests/data/hf/README tests/data/hf/DeepSeek-V3.json \
	tests/data/hf/Llama-3.1-8B.json tests/data/hf/Mistral-7B-v0.1.json \
	tests/data/hf/Mistral-7B-v0.3.json tests/data/hf/Mixtral-8x7B-v0.1.json \
	tests/data/hf/OLMo-2-1124-7B.json tests/data/hf/Phi-3-mini-4k-instruct.json \
	tests/data/hf/Qwen2.5-32B.json tests/data/hf/Qwen2.5-7B.json tests/data/hf/Qwen3-30B-A3B.json \
	tests/data/hf/Qwen3-8B.json tests/data/hf/gemma-2-9b.json tests/data/hf/gemma-7b.json \
	tests/data/hf/phi-4.json tests/data/hf/DeepSeek-V2-Lite.json \
	tests/data/hf/Qwen3-235B-A22B.json tests/data/hf/Mixtral-8x22B-v0.1.json
TESTS += tests/cli/test_hf_params.sh
# Context parallelism (issue 39 item 1): pairs, K/V bytes per mode, GPUs = tp x cp x pp x dp.
check_PROGRAMS += tests/unit/test_cp
TESTS += tests/unit/test_cp
tests_unit_test_cp_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# FP8 training (issue 39 item 4): dtypes, time ratios, quantize and kept bytes per recipe.
check_PROGRAMS += tests/unit/test_fp8
TESTS += tests/unit/test_fp8
tests_unit_test_fp8_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
TESTS += tests/cli/test_fp8.sh
EXTRA_DIST += tests/cli/test_fp8.sh
# ZeRO stages and FSDP under PP (issue 39 item 3): ZeRO's bytes, the per-unit collectives, a
# stage's memory and step by hand, the keys' round trip.
check_PROGRAMS += tests/unit/test_fsdp
TESTS += tests/unit/test_fsdp
tests_unit_test_fsdp_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
TESTS += tests/cli/test_fsdp.sh
EXTRA_DIST += tests/cli/test_fsdp.sh
# issue 41: what a newcomer and a fuzzer hit (caps, exit statuses, one truth between screens).
TESTS += tests/cli/test_newcomer.sh tests/check_docs.sh
EXTRA_DIST += tests/cli/test_newcomer.sh tests/check_docs.sh
