/* tests/fuzz/fuzz_layout.c: Megatron-LM's --pipeline-model-parallel-layout string reader
 * (model/pp_layout.c, pp_layout_parse; the config's "pipeline_layout" through
 * model/stage_split.c) on arbitrary bytes. A refusal is MT_EINVAL with a message and a zeroed
 * layout. An accepted layout has 1 .. PP_LAYOUT_MAX_STAGES stages whose layer counts (each
 * >= 0) sum to its t's, E on the first stage alone and L on the last alone; pp_layout_write's
 * string for it reads back to the same stages; and a config holding the string (with that
 * many layers) splits its pipeline of that many stages into the same layers. */
#include <config.h>

#include <stdbool.h>
#include <string.h>

#include "model/config.h"
#include "model/stage_split.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"
#include "util/xalloc.h"

static void fuzz_layout_same(const struct pp_layout *a, const struct pp_layout *b,
                             const char *in, const char *written)
{
    FUZZ_CHECK(a->num_stages == b->num_stages && a->num_layers == b->num_layers,
               "written back as '%s', '%s' reads %d stages / %d layers, not %d / %d", written,
               in, b->num_stages, b->num_layers, a->num_stages, a->num_layers);
    for (int s = 0; s < a->num_stages; s++)
        FUZZ_CHECK(a->layers[s] == b->layers[s] && a->embed[s] == b->embed[s] &&
                       a->loss[s] == b->loss[s],
                   "'%s' written as '%s': stage %d differs", in, written, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= CONFIG_LAYOUT_MAX || memchr(data, '\0', size) != NULL)
        return 0; /* the config holds CONFIG_LAYOUT_MAX - 1 bytes; a C string has no NUL */
    char in[CONFIG_LAYOUT_MAX];
    memcpy(in, data, size);
    in[size] = '\0';
    struct pp_layout l;
    struct mt_err e;
    err_clear(&e);
    memset(&l, 0xA5, sizeof l);
    int rc = pp_layout_parse(in, &l, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.msg[0] != '\0', "a refusal without a message");
        FUZZ_CHECK(l.num_stages == 0 && l.layers == NULL && l.embed == NULL && l.loss == NULL,
                   "layout not zeroed on failure");
        return 0;
    }
    FUZZ_CHECK(l.num_stages >= 1 && l.num_stages <= PP_LAYOUT_MAX_STAGES, "%d stages",
               l.num_stages);
    long sum = 0;
    for (int s = 0; s < l.num_stages; s++) {
        FUZZ_CHECK(l.layers[s] >= 0, "stage %d: %d layers", s, l.layers[s]);
        FUZZ_CHECK(l.embed[s] == (s == 0), "stage %d: embedding %d", s, l.embed[s]);
        FUZZ_CHECK(l.loss[s] == (s == l.num_stages - 1), "stage %d: loss %d", s, l.loss[s]);
        sum += l.layers[s];
    }
    FUZZ_CHECK(sum == l.num_layers, "the stages hold %ld layers, the layout says %d", sum,
               l.num_layers);

    /* written back: at most "t*2147483647|" a stage, and the ends */
    size_t n = (size_t)l.num_stages * 16 + 16;
    char *w = xmalloc(n);
    FUZZ_CHECK(pp_layout_write(l.num_stages, l.layers, l.embed, l.loss, w, n, &e) == MT_OK,
               "'%s' not written: %s", in, e.msg);
    struct pp_layout back;
    FUZZ_CHECK(pp_layout_parse(w, &back, &e) == MT_OK, "'%s' written as '%s' is refused: %s",
               in, w, e.msg);
    fuzz_layout_same(&l, &back, in, w);
    pp_layout_fini(&back);

    /* through the config, as --pipeline-model-parallel-layout sets it */
    static struct config c;
    static bool have_config;
    if (!have_config) {
        config_default(&c);
        have_config = true;
    }
    memcpy(c.pipeline_layout, in, size + 1);
    c.model.num_layers = l.num_layers;
    int *layers = xcalloc((size_t)l.num_stages, sizeof *layers);
    bool *ends = xcalloc(2 * (size_t)l.num_stages, sizeof *ends);
    rc = stage_split_layers(&c, l.num_stages, layers, ends, ends + l.num_stages, &e);
    FUZZ_CHECK(rc == MT_OK, "'%s': the config's split is refused: %s", in, e.msg);
    for (int s = 0; s < l.num_stages; s++)
        FUZZ_CHECK(layers[s] == l.layers[s] && ends[s] == l.embed[s] &&
                       ends[l.num_stages + s] == l.loss[s],
                   "'%s': the config's stage %d holds %d layers, the layout %d", in, s,
                   layers[s], l.layers[s]);
    free(layers);
    free(ends);
    free(w);
    pp_layout_fini(&l);
    return 0;
}
