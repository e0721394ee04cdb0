noinst_LIBRARIES += libmt_sim.a
# sim/ by part, one folder each (docs/design.md "sim/ inside"):
libmt_sim_a_SOURCES =
# plan/: the plan IR, its files (JSON, torch CSV) and validation
libmt_sim_a_SOURCES += sim/plan/plan.c sim/plan/plan.h sim/plan/plan_json.c sim/plan/plan_csv.c sim/plan/plan_csv.h sim/plan/plan_csv_fsdp.c sim/plan/validate.c sim/plan/validate.h sim/plan/footprint.c sim/plan/footprint.h
# schemes/: one generator per scheme record (model/scheme_registry.c)
libmt_sim_a_SOURCES += sim/schemes/scheme.c sim/schemes/scheme.h sim/schemes/scheme_1f1b.c sim/schemes/scheme_gpipe.c sim/schemes/scheme_zb.c sim/schemes/scheme_zbv.c sim/schemes/scheme_zbv_authors.c sim/schemes/scheme_zbv_greedy.c sim/schemes/slot_peak.c sim/schemes/slot_peak.h sim/schemes/scheme_zbw.c sim/schemes/scheme_chimera.c sim/schemes/scheme_interleaved.c sim/schemes/scheme_async.c
# core/: the virtual pipeline, memory model, simulator paths, receive order, bound, critical path, async figures
libmt_sim_a_SOURCES += sim/core/vpipe.c sim/core/vpipe.h sim/core/simulate.c sim/core/simulate.h sim/core/simulate_direct.c sim/core/simulate_fast.c sim/core/simulate_internal.h sim/core/simulate_json.c sim/core/memory.c sim/core/memory.h sim/core/critical.c sim/core/critical.h sim/core/recv_order.c sim/core/recv_order.h sim/core/share.c sim/core/share.h sim/core/bound.c sim/core/bound.h sim/core/bound_json.c sim/core/jackson.c sim/core/jackson.h sim/core/async.c sim/core/async.h sim/core/overlap.c sim/core/overlap.h
# passes/: Mario's four passes (§5.1)
libmt_sim_a_SOURCES += sim/passes/pass.c sim/passes/pass.h sim/passes/pass_summary.c sim/passes/pass_json.c sim/passes/pass_checkpoint.c sim/passes/pass_overlap.c sim/passes/pass_redundancy.c sim/passes/pass_prepose.c
# search/: the schedule search under a memory cap
libmt_sim_a_SOURCES += sim/search/search.c sim/search/search.h sim/search/search_internal.h sim/search/search_sched.c sim/search/search_local.c sim/search/search_lns.c sim/search/search_list.c sim/search/search_exact.c
libmt_sim_a_SOURCES += sim/search/search_periodic.c sim/search/search_repair.c
# tune/: the tuner (§5.3)
libmt_sim_a_SOURCES += sim/tune/tune.c sim/tune/tune.h sim/tune/tune_json.c
libmt_sim_a_SOURCES += sim/tune/tune_split.c sim/tune/tune_split.h
libmt_sim_a_SOURCES += sim/tune/tune_expert.c
# inputs/: the input-aware checkpointing planner (Mimose)
libmt_sim_a_SOURCES += sim/inputs/ckpt_plan.c sim/inputs/ckpt_plan.h sim/inputs/ckpt_plan_internal.h sim/inputs/ckpt_solve.c sim/inputs/ckpt_cache.c sim/inputs/ckpt_plan_json.c
libmt_sim_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)

# Processor sharing (sim/core/share.c): hand-worked timelines on fewer cores than ranks.
check_PROGRAMS += tests/unit/test_share
TESTS += tests/unit/test_share
tests_unit_test_share_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm

# Mario's four passes (sim/passes/): Figure 2, Table 1's Mario column, properties.
check_PROGRAMS += tests/unit/test_pass
TESTS += tests/unit/test_pass
tests_unit_test_pass_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm

# The lower bound (sim/core/bound.h): hand-worked unit-cost cases, the memory-time bound's closed
# form, and never above a simulated plan over random shapes.
check_PROGRAMS += tests/unit/test_bound
TESTS += tests/unit/test_bound
tests_unit_test_bound_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# Jackson's preemptive schedule (the bound's device term): hand-worked cases, random integer
# instances against a slot-by-slot run of the same rule, the stable sort it leaves behind.
check_PROGRAMS += tests/unit/test_jackson
TESTS += tests/unit/test_jackson
tests_unit_test_jackson_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# The schedule search (sim/search/): Figure 2 and 4 x 8 at 2 M_θ reaching the bound, the
# evaluation against the simulator, the exact search as the oracle (within 2 %), random shapes.
check_PROGRAMS += tests/unit/test_search
TESTS += tests/unit/test_search
tests_unit_test_search_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# Its repair, incremental, against the walk after each checkpoint it replaced (issue 27).
check_PROGRAMS += tests/unit/test_search_repair
TESTS += tests/unit/test_search_repair
tests_unit_test_search_repair_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# ... and end to end: optimize/simulate --search, the bound, --memory in M_θ, tune --search.
TESTS += tests/cli/test_search.sh
EXTRA_DIST += tests/cli/test_search.sh
# The simulator's fast path against its general loop, bit for bit (sim/core/simulate_fast.c).
check_PROGRAMS += tests/unit/test_sim_fast
TESTS += tests/unit/test_sim_fast
tests_unit_test_sim_fast_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# The validator's structural errors on hand-edited plans (sim/plan/validate.c).
check_PROGRAMS += tests/unit/test_validate
TESTS += tests/unit/test_validate
tests_unit_test_validate_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# Offload (issue 29): OF/RL on the copy lanes, worked by hand under unit costs; the search's
# third lever (keep, checkpoint, offload).
libmt_sim_a_SOURCES += sim/search/search_offload.c sim/search/search_offload.h \
	sim/core/bound_offload.c
check_PROGRAMS += tests/unit/test_offload
TESTS += tests/unit/test_offload
tests_unit_test_offload_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# The search that chooses offload: its evaluator bit for bit, the issue's check, its budget.
check_PROGRAMS += tests/unit/test_offload_search
TESTS += tests/unit/test_offload_search
tests_unit_test_offload_search_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
TESTS += tests/cli/test_offload.sh
EXTRA_DIST += tests/cli/test_offload.sh
