/* tests/fuzz/fuzz_mapping.c: the trace mapping file (`compare --map FILE`: traces/mapping_json.c
 * reads it, traces/mapping.c compiles its rules) on arbitrary bytes, then the rules tried on
 * event names as the Kineto reader tries them (fuzz_kineto runs whole traces through a
 * mapping; this target spends its time on the file itself).
 * Invariants: a refusal is MT_EPARSE or MT_EINVAL with a message that starts with the file
 * name and leaves *out NULL; an accepted mapping has at most MAPPING_MAX_RULES rules and known
 * options, and every hit gives a plan op and fields that are -1 (not given) or a number >= 0. */
#include <config.h>

#include <string.h>

#include "sim/plan/plan.h"
#include "tests/fuzz/fuzz.h"
#include "traces/mapping.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.map.json"

/* Event names and categories of PyTorch profiler traces and of our own. */
static const char *const fuzz_mapping_names[][2] = {
    {"fwd_mb0", "user_annotation"},
    {"fwd_mb12", "user_annotation"},
    {"bwd_mb3", "user_annotation"},
    {"FW mb 1 stage 2 part 0", NULL},
    {"ProfilerStep#4", "user_annotation"},
    {"ncclKernel_AllReduce_RING_LL_Sum_float", "kernel"},
    {"ncclDevKernel_SendRecv", "kernel"},
    {"aten::mm", "cpu_op"},
    {"void at::native::vectorized_elementwise_kernel<4>", "kernel"},
    {"RC_mb7_s1", "gpu_user_annotation"},
    {"step 99999999999 dev 4294967296 mb -1", NULL},
    {"", NULL},
    {"0123456789", ""},
};

static void fuzz_mapping_try(const struct mapping *m)
{
    const struct mapping_opts *o = mapping_opts(m);
    FUZZ_CHECK(mapping_rules(m) >= 0 && mapping_rules(m) <= MAPPING_MAX_RULES, "%d rules",
               mapping_rules(m));
    FUZZ_CHECK(o->device >= MAPPING_DEVICE_AUTO && o->device <= MAPPING_DEVICE_FILE &&
                   o->align >= MAPPING_ALIGN_AUTO && o->align <= MAPPING_ALIGN_EVENT,
               "device %d, align %d", (int)o->device, (int)o->align);
    for (size_t i = 0; i < sizeof fuzz_mapping_names / sizeof fuzz_mapping_names[0]; i++) {
        const char *name = fuzz_mapping_names[i][0], *cat = fuzz_mapping_names[i][1];
        struct mapping_hit h;
        if (mapping_match(m, name, cat, &h)) {
            FUZZ_CHECK(h.op >= 0 && h.op < OP__COUNT, "'%s': op %d", name, h.op);
            int f[5] = {h.mb, h.part, h.stage, h.device, h.step};
            for (int k = 0; k < 5; k++)
                FUZZ_CHECK(f[k] >= -1, "'%s': field %d is %d", name, k, f[k]);
        }
        bool align = mapping_is_align_event(m, name);
        FUZZ_CHECK(!align || o->align == MAPPING_ALIGN_EVENT, "'%s' aligns without an event", name);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mapping *m = (struct mapping *)&m; /* must become NULL on failure */
    struct mt_err e;
    err_clear(&e);
    int rc = mapping_load_string((const char *)data, size, FUZZ_NAME, &m, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.code == rc, "code %d but the message says %d", rc, e.code);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME ":", strlen(FUZZ_NAME ":")) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(m == NULL, "*out not NULL on failure");
        return 0;
    }
    FUZZ_CHECK(m != NULL, "no mapping");
    fuzz_mapping_try(m);
    mapping_free(m);
    return 0;
}
