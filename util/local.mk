noinst_LIBRARIES += libmt_util.a
libmt_util_a_SOURCES = util/err.c util/err.h util/xalloc.c util/xalloc.h util/str.c util/str.h \
	util/json.c util/json.h util/sysmem.c util/sysmem.h
# util/json.c is the one util file that reads JSON (cJSON): every input format goes through it.
libmt_util_a_CPPFLAGS = $(AM_CPPFLAGS) $(CJSON_CFLAGS)
