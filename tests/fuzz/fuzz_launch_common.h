/* tests/fuzz/fuzz_launch_common.h: what the two launch targets check (fuzz_launch_megatron.c,
 * fuzz_launch_toml.c). A refusal is MT_EINVAL (MT_ENOMEM only past a limit) with a message
 * that starts with the file name and leaves the config untouched; an accepted launch is a
 * config that validates, whose JSON loads back, and whose launch text (where the framework
 * runs it) reads back to the same config, its model's name aside (a preset's name follows
 * the vocabulary padding the text chose) and to the same recompute settings. --devices is
 * 64 for inputs of even length. */
#ifndef MT_TESTS_FUZZ_LAUNCH_COMMON_H
#define MT_TESTS_FUZZ_LAUNCH_COMMON_H

#include <string.h>

#include "model/config.h"
#include "model/launch.h"
#include "model/launch_internal.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"

typedef int (*fuzz_launch_reader)(const char *, size_t, const char *,
                                  const struct launch_read_opts *, struct config *,
                                  struct launch_info *, struct mt_err *);

/* The JSON after its "model" key with the model's name line left out. */
static char *fuzz_launch_shape(const struct config *c)
{
    char *json = config_to_json(c);
    FUZZ_CHECK(json != NULL, "config_to_json returned NULL");
    char *m = strstr(json, "\"model\"");
    FUZZ_CHECK(m != NULL, "no model in the JSON");
    char *nl = strchr(m, '\n'), *end = nl ? strchr(nl + 1, '\n') : NULL;
    if (end != NULL && (strstr(nl, "\"preset\"") == nl + 5 || strstr(nl, "\"name\"") == nl + 5))
        memmove(nl, end, strlen(end) + 1);
    memmove(json, m, strlen(m) + 1);
    return json;
}

static void fuzz_launch(const uint8_t *data, size_t size, const char *name,
                        fuzz_launch_reader read, enum launch_kind kind)
{
    struct config c, before;
    struct launch_info info;
    struct mt_err e;
    struct launch_read_opts o = {size % 2 == 0 ? 64 : 0};
    err_clear(&e);
    memset(&c, 0xA5, sizeof c);
    before = c;
    int rc = read((const char *)data, size, name, &o, &c, &info, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EINVAL || rc == MT_ENOMEM, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(strncmp(e.msg, name, strlen(name)) == 0, "message without the file: %s",
                   e.msg);
        FUZZ_CHECK(memcmp(&c, &before, sizeof c) == 0, "config written on failure");
        return;
    }
    FUZZ_CHECK(config_validate(&c, &e) == MT_OK, "accepted but invalid: %s", e.msg);
    char *json = config_to_json(&c);
    struct config d;
    FUZZ_CHECK(config_load_string(json, strlen(json), "rt.json", &d, &e) == MT_OK,
               "its JSON does not load: %s\n%s", e.msg, json);
    free(json);
    if (launch_expressible(kind, &c, NULL, &e) != MT_OK || launch_needs_csv(kind, &c))
        return;
    char *text = NULL;
    struct launch_ac ac = info.ac;
    struct launch_write_opts wo = {.recompute = info.recompute, .ac = &ac};
    FUZZ_CHECK(launch_write(kind, &c, &wo, &text, &e) == MT_OK, "write: %s", e.msg);
    struct launch_read_opts none = {0};
    rc = read(text, strlen(text), "written", &none, &d, &info, &e);
    FUZZ_CHECK(rc == MT_OK, "the written launch does not read back: %s\n%s", e.msg, text);
    FUZZ_CHECK(info.recompute == wo.recompute && info.ac.granularity == ac.granularity &&
                   info.ac.method == ac.method && info.ac.num_layers == ac.num_layers &&
                   strcmp(info.ac.modules, ac.modules) == 0,
               "the recompute settings changed: %d %d %d '%s' -> %d %d %d '%s'\n%s",
               ac.granularity, ac.method, ac.num_layers, ac.modules, info.ac.granularity,
               info.ac.method, info.ac.num_layers, info.ac.modules, text);
    char *a = fuzz_launch_shape(&c), *b = fuzz_launch_shape(&d);
    FUZZ_CHECK(strcmp(a, b) == 0 && c.scheme == d.scheme && c.num_device == d.num_device &&
                   c.chunks == d.chunks && c.global_batch_size == d.global_batch_size &&
                   c.micro_batch_size == d.micro_batch_size,
               "the round trip changed the config:\n%s\n---\n%s\n---\n%s", a, b, text);
    free(a);
    free(b);
    free(text);
}

#endif
