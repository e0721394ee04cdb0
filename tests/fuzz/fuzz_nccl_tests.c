/* tests/fuzz/fuzz_nccl_tests.c: the nccl-tests output reader (model/nccl_tests.c, what
 * `profile --from-nccl-tests FILE` reads) on arbitrary bytes, once with the file's own
 * collective and link and once with --collective all_reduce --link network --in-place.
 * Invariants: a refusal is MT_EPARSE or MT_EINVAL with a message that starts with the file
 * name and adds no row; an accepted file gives info.rows rows, each on a line of the file,
 * 2 ranks or more, and rows that build into a table (no duplicate, every figure in range)
 * which answers at each row with its busbw. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "model/microcal.h"
#include "model/nccl_tests.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.nccl.txt"

static void fuzz_nccl_read(const uint8_t *data, size_t size, const struct nccl_tests_opts *o)
{
    struct microcal_builder *b = microcal_builder_new();
    struct nccl_tests_info info;
    struct mt_err e;
    err_clear(&e);
    int rc = nccl_tests_read((const char *)data, size, FUZZ_NAME, o, b, &info, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME, strlen(FUZZ_NAME)) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(microcal_builder_rows(b) == 0, "rows added by a refused file");
        microcal_builder_free(b);
        return;
    }
    FUZZ_CHECK(info.rows > 0 && microcal_builder_rows(b) == (size_t)info.rows, "%d rows, %zu added",
               info.rows, microcal_builder_rows(b));
    FUZZ_CHECK(info.ranks >= 2, "%d ranks", info.ranks);
    FUZZ_CHECK(o->link < 0 || (int)info.link == o->link, "link %d", (int)info.link);
    for (int i = 0; i < info.rows; i++)
        FUZZ_CHECK(info.row_lines[i] >= 1, "row %d on line %d", i, info.row_lines[i]);
    const struct microcal *t = NULL;
    rc = microcal_build(b, &t, NULL, &e);
    FUZZ_CHECK(rc == MT_OK && t != NULL, "accepted rows do not build: %s", e.msg);
    FUZZ_CHECK(t->n_coll == (size_t)info.rows, "%zu table rows", t->n_coll);
    for (size_t i = 0; i < t->n_coll; i++) {
        const struct microcal_coll *c = &t->coll[i];
        double v;
        FUZZ_CHECK(c->coll == info.coll && c->ranks == info.ranks && isfinite(c->busbw_gbps),
                   "row %zu", i);
        FUZZ_CHECK(microcal_busbw(t, c->coll, c->bytes, c->ranks, c->link, &v) &&
                       v == c->busbw_gbps,
                   "row %zu not found at its own size", i);
    }
    nccl_tests_info_fini(&info);
    microcal_builder_free(b);
    microcal_pool_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct nccl_tests_opts plain = {-1, -1, false};
    static const struct nccl_tests_opts asked = {COLL_ALL_REDUCE, LINK_NETWORK, true};
    fuzz_nccl_read(data, size, &plain);
    fuzz_nccl_read(data, size, &asked);
    return 0;
}
