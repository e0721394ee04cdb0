noinst_LIBRARIES += libmt_sim.a
libmt_sim_a_SOURCES = sim/plan.c sim/plan.h sim/plan_json.c sim/plan_csv.c sim/vpipe.c sim/vpipe.h \
	sim/scheme.c sim/scheme.h sim/scheme_1f1b.c sim/scheme_gpipe.c sim/scheme_zb.c sim/scheme_zbv.c sim/scheme_zbv_authors.c sim/scheme_zbv_greedy.c sim/scheme_zbw.c sim/scheme_chimera.c \
	sim/scheme_interleaved.c sim/simulate.c sim/simulate.h sim/simulate_direct.c sim/simulate_fast.c sim/simulate_internal.h sim/simulate_json.c sim/validate.c sim/validate.h sim/tune.c sim/tune.h sim/tune_json.c \
	sim/pass.c sim/pass.h sim/pass_summary.c sim/pass_json.c sim/pass_checkpoint.c sim/pass_overlap.c sim/pass_redundancy.c \
	sim/pass_prepose.c sim/ckpt_plan.c sim/ckpt_plan.h sim/ckpt_plan_internal.h \
	sim/ckpt_solve.c sim/ckpt_cache.c sim/ckpt_plan_json.c sim/memory.c sim/memory.h \
	sim/critical.c sim/critical.h sim/recv_order.c sim/recv_order.h sim/share.c sim/share.h sim/bound.c sim/bound.h sim/bound_json.c \
	sim/search.c sim/search.h sim/search_internal.h sim/search_sched.c sim/search_local.c sim/search_lns.c sim/search_list.c \
	sim/search_exact.c
libmt_sim_a_SOURCES += sim/scheme_async.c sim/async.c sim/async.h
libmt_sim_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)

# Processor sharing (sim/share.c): hand-worked timelines on fewer cores than ranks.
check_PROGRAMS += tests/unit/test_share
TESTS += tests/unit/test_share
tests_unit_test_share_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm

# Mario's four passes (sim/pass*.c): Figure 2, Table 1's Mario column, properties.
check_PROGRAMS += tests/unit/test_pass
TESTS += tests/unit/test_pass
tests_unit_test_pass_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm

# The lower bound (sim/bound.h): hand-worked unit-cost cases, the memory-time bound's closed
# form, and never above a simulated plan over random shapes.
check_PROGRAMS += tests/unit/test_bound
TESTS += tests/unit/test_bound
tests_unit_test_bound_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# The schedule search (sim/search*.c): Figure 2 and 4 x 8 at 2 M_θ reaching the bound, the
# evaluation against the simulator, the exact search as the oracle (within 2 %), random shapes.
check_PROGRAMS += tests/unit/test_search
TESTS += tests/unit/test_search
tests_unit_test_search_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# ... and end to end: optimize/simulate --search, the bound, --memory in M_θ, tune --search.
TESTS += tests/cli/test_search.sh
EXTRA_DIST += tests/cli/test_search.sh
# The simulator's fast path against its general loop, bit for bit (sim/simulate_fast.c).
check_PROGRAMS += tests/unit/test_sim_fast
TESTS += tests/unit/test_sim_fast
tests_unit_test_sim_fast_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
# The validator's structural errors on hand-edited plans (sim/validate.c).
check_PROGRAMS += tests/unit/test_validate
TESTS += tests/unit/test_validate
tests_unit_test_validate_LDADD = libmt_sim.a libmt_model.a libmt_util.a $(CJSON_LIBS) -lm
