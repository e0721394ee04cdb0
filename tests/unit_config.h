/* tests/unit_config.h: the config the unit tests start from: the built-in default with the
 * paper's unit costs (F, B, RC in units of one device's share of the layers, free p2p, memory
 * in M_theta), so that times and peaks can be worked out by hand. */
#ifndef MT_TESTS_UNIT_CONFIG_H
#define MT_TESTS_UNIT_CONFIG_H

#include "model/config.h"
#include "model/scheme_registry.h"

static inline struct config test_unit_config(enum scheme_id scheme, int D, int N, double f,
                                             double b, double rc)
{
    struct config c;
    config_default(&c);
    c.scheme = scheme;
    c.num_device = D;
    c.num_microbatches = N;
    c.unit.enabled = true;
    c.unit.f = f;
    c.unit.b = b;
    c.unit.rc = rc;
    return c;
}

/* The schemes a test iterates, from the registry in its order: every synchronous one (one
 * iteration per plan: not Async, PipeDream or Auto), or only those that split the backward when
 * split_only. Returns how many it wrote into out[SCHEME__COUNT]. */
static inline int test_sync_schemes(enum scheme_id *out, bool split_only)
{
    int n = 0;
    for (int id = 0; id < SCHEME__COUNT; id++) {
        const struct scheme_record *r = scheme_registry_get((enum scheme_id)id);
        if (r->place != SCHEME_PLACE_NONE && !r->async && (!split_only || r->split))
            out[n++] = r->id;
    }
    return n;
}

/* Shapes config c so that scheme c->scheme takes it, as the random tests draw them: an even
 * depth and micro-batch count for two pipelines per stage, chunks = 2 and N a multiple of D
 * where the config's chunks are the stages per device. *D and *N are updated. */
static inline void test_fit_scheme(struct config *c, int *D, int *N, int rounds)
{
    const struct scheme_record *r = scheme_registry_get(c->scheme);
    if (r->replicas == 2) {
        *D += *D % 2;
        *N += *N % 2;
    }
    if (r->chunks == SCHEME_CHUNKS_CONFIG) {
        c->chunks = 2;
        *N = *D * rounds;
    }
}

#endif
