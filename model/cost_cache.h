/* model/cost_cache.h: a memo of cost_model_build (model/cost.h) for a thread that builds the
 * costs of the same configs many times over: the tuner's worker builds one candidate's costs
 * for its plan, its simulation, its bound and each of Mario's passes (about ten builds of one
 * config), and its next candidates often differ in the scheme only. A build is a pure function
 * of the config's bytes and its three counts, so a hit returns a copy of the stages built
 * before, the same to the bit; nothing outside an open cache changes. Per thread (no locks):
 * the tuner opens one on each of its threads for the run (sim/tune/tune.c). */
#ifndef MT_MODEL_COST_CACHE_H
#define MT_MODEL_COST_CACHE_H

#include <stdbool.h>

struct config;
struct cost_model;

/* This thread caches its builds from now until the matching close (opens nest). */
void cost_cache_open(void);
/* Frees what the thread cached (at the outermost close); its builds compute again. */
void cost_cache_close(void);
/* Whether this thread has a cache open. */
bool cost_cache_is_open(void);
/* With a cache open and a build of (c, stages, parts, group) in it: *out becomes a copy of it
 * (cost_model_fini frees it) and true; else false. */
bool cost_cache_lookup(const struct config *c, int stages, int parts, int group,
                       struct cost_model *out);
/* Keeps a copy of m as the build of (c, stages, parts, group) when a cache is open (the least
 * recently used entry makes room). */
void cost_cache_store(const struct config *c, int stages, int parts, int group,
                      const struct cost_model *m);
/* This thread's hits and misses since its cache was opened (tests: the memo is used). */
long cost_cache_hits(void);
long cost_cache_misses(void);

#endif
