# render/: one pure layout step (layout.c: items, layout_gantt*.c: the figure, layout_lanes.c: its
# rows alone, for the terminal; palette.c) and its painters: SVG written by hand
# (paint_svg.c), PNG and PDF through Cairo (paint_cairo.c, the only user of cairo.h); charts
# (chart.c) and their JSON specs (chart_json.c).
noinst_LIBRARIES += libmt_render.a
libmt_render_a_SOURCES = render/layout.c render/layout.h render/layout_internal.h \
	render/layout_gantt.c render/layout_gantt.h render/layout_gantt_rows.c \
	render/layout_gantt_text.c render/layout_gantt_mem.c render/layout_copy.c render/layout_copy.h render/layout_a2a.c render/layout_a2a.h \
	render/layout_lanes.c render/layout_lanes.h \
	render/palette.c render/palette.h \
	render/paint_svg.c render/paint_svg.h render/paint_cairo.c render/paint_cairo.h \
	render/paint_cells.c render/paint_cells.h render/chart.c render/chart.h \
	render/chart_json.c
libmt_render_a_CPPFLAGS = $(AM_CPPFLAGS) $(CAIRO_CFLAGS) $(CJSON_CFLAGS)

check_PROGRAMS += tests/unit/test_render
TESTS += tests/unit/test_render
tests_unit_test_render_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CAIRO_LIBS) $(CJSON_LIBS) -lm
check_PROGRAMS += tests/unit/test_chart
TESTS += tests/unit/test_chart
tests_unit_test_chart_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CAIRO_LIBS) $(CJSON_LIBS) -lm

# `mario-tui export` end to end (needs the binary; python3 reads PNG/PDF headers).
EXTRA_DIST += tests/cli/test_export.sh
TESTS += tests/cli/test_export.sh
# Offload's copy lane under each device (render/layout_copy.c, issue 29).
check_PROGRAMS += tests/unit/test_layout_copy
TESTS += tests/unit/test_layout_copy
tests_unit_test_layout_copy_LDADD = libmt_render.a libmt_sim.a libmt_model.a libmt_util.a \
	$(CAIRO_LIBS) $(CJSON_LIBS) -lm
