/* model/scheme_registry.h: every pipeline scheme as one record — its names, where it puts
 * the stages, how many a device holds, its backward, its iterations, torch's CSV, and where the
 * tuner and the explorer offer it. Everything that asks "which schemes are there" or "what
 * does this scheme do" reads these records; the generators (code in sim/, which model/ cannot
 * call) sit beside them in sim/schemes/scheme.c's table, one per id, held complete by test_zb. */
#ifndef MT_MODEL_SCHEME_REGISTRY_H
#define MT_MODEL_SCHEME_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "model/config.h"

struct mt_err;

/* How a scheme places its stages on the devices (Algorithm 1 of the paper, sim/core/vpipe.c). */
enum scheme_place {
    SCHEME_PLACE_NONE,    /* Auto: the tuner picks a scheme first */
    SCHEME_PLACE_LINE,    /* stage s on device s */
    SCHEME_PLACE_CHIMERA, /* two pipelines, down (s on s) and up (s on D-1-s): Chimera, DualPipe */
    SCHEME_PLACE_LOOP,    /* stage s on device s mod D: chunks looped over the devices */
    SCHEME_PLACE_V,       /* stages d and 2D-1-d on device d */
};

/* Stages per device. */
enum scheme_chunks {
    SCHEME_CHUNKS_ONE,    /* one (Chimera's two parts are replicas of it) */
    SCHEME_CHUNKS_CONFIG, /* the config's `chunks` (2 to CONFIG_MAX_CHUNKS) */
    SCHEME_CHUNKS_TWO,    /* always two (a V) */
};

/* The backwards of a torch schedule CSV (sim/plan/plan_csv.c): whole (B), split (I and W), or both. */
enum {
    SCHEME_CSV_WHOLE = 1,
    SCHEME_CSV_SPLIT = 2,
    SCHEME_CSV_MIXED = 4,
};

struct scheme_record {
    enum scheme_id id;
    const char *name;       /* "V": how files, figures and the screen spell it */
    const char *aliases[4]; /* other spellings a user may type (case-insensitive), NULL-ended */
    const char *long_name;  /* "Interleaved 1F1B": figure titles */
    const char *note;       /* "interleaved": the --scheme help's word for it, or NULL */
    enum scheme_place place;
    enum scheme_chunks chunks;
    int replicas;           /* pipelines holding each stage: 2 for Chimera, else 1 */
    bool split;             /* the backward is B (input gradient) then W (weight gradient) */
    bool async;             /* no flush: K iterations in a plan, an OS every U backwards */
    bool stash;             /* PipeDream's weight stashing: a copy per version in flight */
    unsigned torch_csv;     /* SCHEME_CSV_* kinds a CSV of this placement is read as this
                             * scheme; 0: never (another scheme names the placement) */
    const char *torch_none; /* why torch's schedule CSV cannot hold this scheme's plans, or
                             * NULL when it can */
    bool in_tuner;          /* among the tuner's candidates (sim/tune/tune.c) */
    bool in_cycle;          /* in the explorer's `s` cycle (tui/explore_edit.c) */
    bool halves;            /* CHIMERA placement: the first N/2 micro-batches go down and the
                             * rest up (DualPipe), not half of each group of D (Chimera) */
    /* The scheme's own limits on a config (pp = pipeline depth, n = micro-batches; the chunks
     * range where chunks is CHUNKS_CONFIG); NULL when there are none. MT_EINVAL naming the
     * field. */
    int (*check)(const struct config *c, int pp, int n, struct mt_err *e);
};

/* The record of id, or NULL for an id out of range. Every id below SCHEME__COUNT has one. */
const struct scheme_record *scheme_registry_get(enum scheme_id id);
/* The record whose name or alias is s (case-insensitive); MT_EINVAL listing the names. */
int scheme_registry_parse(const char *s, enum scheme_id *out, struct mt_err *e);
/* The scheme a torch CSV is read as: the one of placement place that takes CSV kind (one
 * SCHEME_CSV_* bit); false when none does. */
bool scheme_registry_torch(enum scheme_place place, unsigned kind, enum scheme_id *out);
/* Writes the --scheme help (names with their notes, by family, lines separated by '\n', no
 * final '\n') into buf of n bytes. */
void scheme_registry_help(char *buf, size_t n);
/* The scheme's own limits (record.check) for config c. MT_EINVAL. */
int scheme_registry_check(const struct config *c, int pp, int n, struct mt_err *e);

#endif
