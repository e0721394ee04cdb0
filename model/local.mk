noinst_LIBRARIES += libmt_model.a
libmt_model_a_SOURCES = model/config.c model/config.h model/config_parallel.c model/config_zero.c model/config_json.c \
	model/config_hf_json.c model/config_hf_moe_json.c model/config_hf.h model/config_write_json.c model/seqlen_json.c \
	model/presets.c model/presets.h model/presets_json.c model/cost.c model/cost.h model/cost_ops.h model/cost_overhead.c \
	model/cost_cache.c model/cost_cache.h \
	model/ops.c model/ops.h model/ops_build.c model/ops_recompute.c model/ops_build_cp.c model/ops_shape.h model/ops_build_moe.c \
	model/ops_build_mla.c model/ops_build_fsdp.c model/moe.c model/moe.h model/price.c model/price.h model/framework.c model/framework.h \
	model/seqlen.c model/seqlen.h model/memfit.c model/memfit.h
libmt_model_a_SOURCES += model/fp8.c model/fp8.h model/ops_build_fp8.c
libmt_model_a_SOURCES += model/scheme_registry.c model/scheme_registry.h
libmt_model_a_SOURCES += model/stage_split.c model/stage_split.h model/pp_layout.c
libmt_model_a_SOURCES += model/profile.c model/profile_json.c model/profile.h model/xformer_layout.h \
	model/microcal.c model/microcal.h model/microcal_json.c model/nccl_tests.c model/nccl_tests.h
libmt_model_a_SOURCES += model/launch.c model/launch.h model/launch_internal.h \
	model/launch_shell_lex.c model/launch_shell_expand.c \
	model/launch_shell_cond.c model/launch_shell_run.c model/launch_shell.h \
	model/launch_megatron.c model/launch_megatron_flags.c model/launch_megatron_flags.h \
	model/launch_torchtitan.c model/launch_toml.c model/launch_toml.h \
	model/launch_write.c \
	model/launch_moe.c
libmt_model_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)

check_PROGRAMS += tests/unit/test_microcal
TESTS += tests/unit/test_microcal
tests_unit_test_microcal_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_DIST += tests/data/nccl-tests/all_reduce_perf-h100x8.txt \
	tests/data/nccl-tests/all_gather_perf-h100x16-2nodes.txt \
	tests/data/nccl-tests/all_gather_perf-2.13-a100x16.txt \
	tests/data/nccl-tests/reduce_scatter_perf-h100x8-mpi.txt \
	tests/data/nccl-tests/alltoall_perf-h100x8.txt tests/data/nccl-tests/sendrecv_perf-h100x2.txt \
	tests/data/nccl-tests/README tests/data/nccl-tests/make_samples.py

# The config loader: examples, bad inputs, and a unit test that reads both from $(srcdir).
check_PROGRAMS += tests/unit/test_config
TESTS += tests/unit/test_config
tests_unit_test_config_SOURCES = tests/unit/test_config.c
tests_unit_test_config_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
EXTRA_DIST += examples/gpt3-1.6b-v.json examples/gpt3-13b-x32.json \
	examples/llama2-13b-w.json examples/tiny-cpu.json examples/hf-gpt2-config.json \
	tests/data/bad/empty.json tests/data/bad/malformed.json tests/data/bad/odd-x.json \
	tests/data/bad/stages.json tests/data/bad/top-array.json tests/data/bad/unknown-key.json

# The device model, the framework profiles and the device presets (model/price.h, framework.h).
check_PROGRAMS += tests/unit/test_price
TESTS += tests/unit/test_price
tests_unit_test_price_SOURCES = tests/unit/test_price.c
tests_unit_test_price_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# The launch readers and writers (model/launch.h): Megatron-LM scripts, torchtitan TOMLs.
check_PROGRAMS += tests/unit/test_launch
TESTS += tests/unit/test_launch
tests_unit_test_launch_SOURCES = tests/unit/test_launch.c
tests_unit_test_launch_LDADD = libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
