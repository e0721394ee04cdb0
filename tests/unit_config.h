/* tests/unit_config.h: the config the unit tests start from: the built-in default with the
 * paper's unit costs (F, B, RC in units of one device's share of the layers, free p2p, memory
 * in M_theta), so that times and peaks can be worked out by hand. */
#ifndef MT_TESTS_UNIT_CONFIG_H
#define MT_TESTS_UNIT_CONFIG_H

#include "model/config.h"

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

#endif
