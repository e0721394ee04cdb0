/* model/cost_cache.c: the per-thread memo of cost_model_build (model/cost_cache.h). A key is
 * the config's bytes (struct config holds values only, and one pointer to calibration tables
 * that are immutable for the process: model/profile.h) and the build's three counts; a config
 * equal in value but not in its padding bytes only misses. A few entries, least recently used
 * out: one candidate's builds are all of one config. */
#include <config.h>
#include "model/cost_cache.h"

#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "util/xalloc.h"

enum { COST_CACHE_ENTRIES = 8 };

struct cost_cache_entry {
    bool used;
    unsigned long last; /* the lookup count at its last use */
    int stages, parts, group;
    struct config cfg;
    struct cost_model model;
};

struct cost_cache {
    int depth; /* opens not yet closed */
    unsigned long clock;
    long hits, misses;
    struct cost_cache_entry entry[COST_CACHE_ENTRIES];
};

static _Thread_local struct cost_cache *tls_cache;

void cost_cache_open(void)
{
    if (tls_cache == NULL)
        tls_cache = xcalloc(1, sizeof *tls_cache);
    tls_cache->depth++;
}

void cost_cache_close(void)
{
    struct cost_cache *k = tls_cache;
    if (k == NULL || --k->depth > 0)
        return;
    for (int i = 0; i < COST_CACHE_ENTRIES; i++)
        if (k->entry[i].used)
            cost_model_fini(&k->entry[i].model);
    free(k);
    tls_cache = NULL;
}

bool cost_cache_is_open(void)
{
    return tls_cache != NULL;
}

static void cost_cache_copy(const struct cost_model *from, struct cost_model *to)
{
    *to = *from;
    to->stage = xcalloc((size_t)from->num_stages, sizeof *to->stage);
    memcpy(to->stage, from->stage, (size_t)from->num_stages * sizeof *to->stage);
}

static bool cost_cache_same(const struct cost_cache_entry *x, const struct config *c,
                            int stages, int parts, int group)
{
    return x->used && x->stages == stages && x->parts == parts && x->group == group &&
           memcmp(&x->cfg, c, sizeof *c) == 0;
}

bool cost_cache_lookup(const struct config *c, int stages, int parts, int group,
                       struct cost_model *out)
{
    struct cost_cache *k = tls_cache;
    if (k == NULL)
        return false;
    k->clock++;
    for (int i = 0; i < COST_CACHE_ENTRIES; i++) {
        struct cost_cache_entry *x = &k->entry[i];
        if (cost_cache_same(x, c, stages, parts, group)) {
            x->last = k->clock;
            cost_cache_copy(&x->model, out);
            k->hits++;
            return true;
        }
    }
    k->misses++;
    return false;
}

void cost_cache_store(const struct config *c, int stages, int parts, int group,
                      const struct cost_model *m)
{
    struct cost_cache *k = tls_cache;
    if (k == NULL)
        return;
    struct cost_cache_entry *x = &k->entry[0];
    for (int i = 0; i < COST_CACHE_ENTRIES; i++) {
        if (!k->entry[i].used) {
            x = &k->entry[i];
            break;
        }
        if (k->entry[i].last < x->last)
            x = &k->entry[i];
    }
    if (x->used)
        cost_model_fini(&x->model);
    x->used = true;
    x->last = k->clock;
    x->stages = stages;
    x->parts = parts;
    x->group = group;
    memcpy(&x->cfg, c, sizeof *c); /* padding too: the key is compared by its bytes */
    cost_cache_copy(m, &x->model);
}

long cost_cache_hits(void)
{
    return tls_cache ? tls_cache->hits : 0;
}

long cost_cache_misses(void)
{
    return tls_cache ? tls_cache->misses : 0;
}
