/* model/scheme_registry.c: the scheme records, one per enum scheme_id, in the enum's order
 * (the tuner's candidates and the explorer's cycle come in this order too). A new scheme is a
 * record here, its id in model/config.h, its generator in sim/ (sim/schemes/scheme.c's table) and its
 * tests, which iterate these records.
 *
 * The limits a scheme puts on a config are its check function: Chimera's two pipelines need an
 * even depth and split the micro-batches in halves; interleaving takes the config's chunks. */
#include <config.h>
#include "model/scheme_registry.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return err_set(e, MT_EINVAL, __VA_ARGS__);                                             \
    } while (0)

static int check_chimera(const struct config *c, int pp, int n, struct mt_err *e)
{
    (void)c;
    NEED(pp % 2 == 0, "num_device: Chimera (X) needs an even pipeline depth (pp = %d)", pp);
    NEED(n % 2 == 0,
         "num_microbatches: Chimera (X) needs an even number of micro-batches "
         "(got %d)",
         n);
    return MT_OK;
}

static int check_interleaved(const struct config *c, int pp, int n, struct mt_err *e)
{
    NEED(c->chunks >= 2 && c->chunks <= CONFIG_MAX_CHUNKS,
         "chunks: interleaved 1F1B (W) needs 2 to %d chunks per device (got %d)", CONFIG_MAX_CHUNKS,
         c->chunks);
    NEED(n % pp == 0, "num_microbatches: interleaved 1F1B (W) needs a multiple of pp = %d (got %d)",
         pp, n);
    return MT_OK;
}

static int check_zbw(const struct config *c, int pp, int n, struct mt_err *e)
{
    NEED(c->chunks >= 2 && c->chunks <= CONFIG_MAX_CHUNKS,
         "chunks: interleaved zero bubble (ZB-W) needs 2 to %d chunks per device (got %d)",
         CONFIG_MAX_CHUNKS, c->chunks);
    int rounds = n / pp > 1 ? n / pp : 1; /* torch: micro-batches come in rounds of ~pp */
    NEED(n % rounds == 0,
         "num_microbatches: ZB-W runs rounds of n / (n / pp) micro-batches, so %d must be a "
         "multiple of %d",
         n, rounds);
    return MT_OK;
}

static int check_dualpipev(const struct config *c, int pp, int n, struct mt_err *e)
{
    (void)c;
    NEED(n >= 2 * pp,
         "num_microbatches: DualPipeV needs at least as many micro-batches as stages, 2 pp = "
         "%d (got %d)",
         2 * pp, n);
    return MT_OK;
}

/* deepseek-ai/DualPipe dualpipe.py's step(): an even number of ranks (two halves meeting in
 * the middle) and of micro-batches (a half from each end), at least 2 pp of them. */
static int check_dualpipe(const struct config *c, int pp, int n, struct mt_err *e)
{
    (void)c;
    NEED(pp % 2 == 0, "num_device: DualPipe needs an even pipeline depth (pp = %d)", pp);
    NEED(n % 2 == 0 && n >= 2 * pp,
         "num_microbatches: DualPipe feeds half of the micro-batches from each end and needs an "
         "even number of at least 2 pp = %d (got %d)",
         2 * pp, n);
    return MT_OK;
}

/* Why the asynchronous schemes have no torch CSV: its rows are one flushed iteration. */
#define TORCH_NO_FLUSH                                                                             \
    "its optimizer steps come every U backwards with no flush between iterations, and torch's "    \
    "schedule CSV is one iteration with one step at its end"

/* Fields left out are false, 0 or NULL: placed nowhere, one stage per device, whole backward,
 * flushed, torch CSV writable, no limits of its own. */
static const struct scheme_record scheme_records[SCHEME__COUNT] = {
    [SCHEME_V] = {.id = SCHEME_V,
                  .name = "V",
                  .aliases = {"1F1B"},
                  .long_name = "1F1B",
                  .note = "1F1B",
                  .place = SCHEME_PLACE_LINE,
                  .replicas = 1,
                  .torch_csv = SCHEME_CSV_WHOLE,
                  .in_tuner = true,
                  .in_cycle = true},
    [SCHEME_X] = {.id = SCHEME_X,
                  .name = "X",
                  .aliases = {"Chimera"},
                  .long_name = "Chimera",
                  .note = "Chimera",
                  .place = SCHEME_PLACE_CHIMERA,
                  .replicas = 2,
                  .torch_none = "Chimera runs every stage on two ranks (its down and up "
                                "pipelines), and torch's schedule CSV has one rank per stage",
                  .in_tuner = true,
                  .in_cycle = true,
                  .check = check_chimera},
    [SCHEME_W] = {.id = SCHEME_W,
                  .name = "W",
                  .aliases = {"Interleave", "Interleaved"},
                  .long_name = "Interleaved 1F1B",
                  .note = "interleaved",
                  .place = SCHEME_PLACE_LOOP,
                  .chunks = SCHEME_CHUNKS_CONFIG,
                  .replicas = 1,
                  .torch_csv = SCHEME_CSV_WHOLE,
                  .in_tuner = true,
                  .in_cycle = true,
                  .check = check_interleaved},
    [SCHEME_GPIPE] = {.id = SCHEME_GPIPE,
                      .name = "GPipe",
                      .long_name = "GPipe",
                      .place = SCHEME_PLACE_LINE,
                      .replicas = 1,
                      .in_tuner = true,
                      .in_cycle = true},
    [SCHEME_AUTO] = {.id = SCHEME_AUTO,
                     .name = "Auto",
                     .long_name = "Auto (the tuner picks)",
                     .note = "the tuner picks",
                     .place = SCHEME_PLACE_NONE,
                     .replicas = 1,
                     .torch_none = "Auto names no schedule until the tuner picks one"},
    [SCHEME_ASYNC] = {.id = SCHEME_ASYNC,
                      .name = "Async",
                      .aliases = {"PipeMare"},
                      .long_name = "PipeMare (asynchronous 1F1B)",
                      .note = "PipeMare",
                      .place = SCHEME_PLACE_LINE,
                      .replicas = 1,
                      .async = true,
                      .torch_none = TORCH_NO_FLUSH,
                      .in_cycle = true},
    [SCHEME_PIPEDREAM] = {.id = SCHEME_PIPEDREAM,
                          .name = "PipeDream",
                          .long_name = "PipeDream (asynchronous 1F1B, weight stashing)",
                          .place = SCHEME_PLACE_LINE,
                          .replicas = 1,
                          .async = true,
                          .stash = true,
                          .torch_none = TORCH_NO_FLUSH,
                          .in_cycle = true},
    [SCHEME_ZBH1] = {.id = SCHEME_ZBH1,
                     .name = "ZB-H1",
                     .aliases = {"ZBH1", "ZB1P"},
                     .long_name = "Zero Bubble H1 (1F1B memory)",
                     .place = SCHEME_PLACE_LINE,
                     .replicas = 1,
                     .split = true,
                     .torch_csv = SCHEME_CSV_SPLIT | SCHEME_CSV_MIXED,
                     .in_tuner = true,
                     .in_cycle = true},
    [SCHEME_ZBH2] = {.id = SCHEME_ZBH2,
                     .name = "ZB-H2",
                     .aliases = {"ZBH2"},
                     .long_name = "Zero Bubble H2 (about 2x 1F1B memory)",
                     .place = SCHEME_PLACE_LINE,
                     .replicas = 1,
                     .split = true,
                     .in_tuner = true,
                     .in_cycle = true},
    [SCHEME_ZBV] = {.id = SCHEME_ZBV,
                    .name = "ZB-V",
                    .aliases = {"ZBV"},
                    .long_name = "Zero Bubble V (two chunks in a V)",
                    .place = SCHEME_PLACE_V,
                    .chunks = SCHEME_CHUNKS_TWO,
                    .replicas = 1,
                    .split = true,
                    .torch_csv = SCHEME_CSV_WHOLE | SCHEME_CSV_SPLIT,
                    .in_tuner = true,
                    .in_cycle = true},
    [SCHEME_ZBW] = {.id = SCHEME_ZBW,
                    .name = "ZB-W",
                    .aliases = {"ZBW", "InterleavedZeroBubble"},
                    .long_name = "Interleaved Zero Bubble (ZB1P with chunks)",
                    .place = SCHEME_PLACE_LOOP,
                    .chunks = SCHEME_CHUNKS_CONFIG,
                    .replicas = 1,
                    .split = true,
                    .torch_csv = SCHEME_CSV_SPLIT | SCHEME_CSV_MIXED,
                    .in_tuner = true,
                    .in_cycle = true,
                    .check = check_zbw},
    [SCHEME_DUALPIPEV] = {.id = SCHEME_DUALPIPEV,
                          .name = "DualPipeV",
                          .long_name = "DualPipeV (DeepSeek, a V with overlapped F and B)",
                          .place = SCHEME_PLACE_V,
                          .chunks = SCHEME_CHUNKS_TWO,
                          .replicas = 1,
                          .split = true,
                          .torch_csv = SCHEME_CSV_MIXED,
                          .in_tuner = true,
                          .in_cycle = true,
                          .check = check_dualpipev},
    [SCHEME_ZBV_TORCH] = {.id = SCHEME_ZBV_TORCH,
                          .name = "ZBVZeroBubble",
                          .aliases = {"ScheduleZBVZeroBubble"},
                          .long_name = "Zero Bubble V (torch's order)",
                          .note = "torch's ZB-V",
                          .place = SCHEME_PLACE_V,
                          .chunks = SCHEME_CHUNKS_TWO,
                          .replicas = 1,
                          .split = true,
                          .in_tuner = true,
                          .in_cycle = true},
    [SCHEME_VHALF] = {.id = SCHEME_VHALF,
                      .name = "V-Half",
                      .aliases = {"VHalf"},
                      .long_name = "V-Half (1/2 of 1F1B's activations)",
                      .note = "1/2 memory",
                      .place = SCHEME_PLACE_V,
                      .chunks = SCHEME_CHUNKS_TWO,
                      .replicas = 1,
                      .split = true,
                      .in_tuner = true,
                      .in_cycle = true},
    [SCHEME_VMIN] = {.id = SCHEME_VMIN,
                     .name = "V-Min",
                     .aliases = {"VMin"},
                     .long_name = "V-Min (1/3 of 1F1B's activations)",
                     .note = "1/3 memory",
                     .place = SCHEME_PLACE_V,
                     .chunks = SCHEME_CHUNKS_TWO,
                     .replicas = 1,
                     .split = true,
                     .in_tuner = true,
                     .in_cycle = true},
    [SCHEME_DUALPIPE] = {.id = SCHEME_DUALPIPE,
                         .name = "DualPipe",
                         .long_name = "DualPipe (DeepSeek-V3, both directions, overlapped F and B)",
                         .note = "2x parameters",
                         .place = SCHEME_PLACE_CHIMERA,
                         .replicas = 2,
                         .split = true,
                         .halves = true,
                         .torch_none = "DualPipe runs every stage on two ranks (its two "
                                       "directions), and torch's schedule CSV has one rank per "
                                       "stage",
                         .in_cycle = true,
                         .check = check_dualpipe},
};

const struct scheme_record *scheme_registry_get(enum scheme_id id)
{
    return (unsigned)id < SCHEME__COUNT ? &scheme_records[id] : NULL;
}

int scheme_registry_parse(const char *s, enum scheme_id *out, struct mt_err *e)
{
    for (int id = 0; id < SCHEME__COUNT; id++) {
        const struct scheme_record *r = &scheme_records[id];
        bool hit = strcasecmp(r->name, s) == 0;
        for (int a = 0; !hit && a < 4 && r->aliases[a] != NULL; a++)
            hit = strcasecmp(r->aliases[a], s) == 0;
        if (hit) {
            *out = r->id;
            return MT_OK;
        }
    }
    char names[256] = "";
    size_t len = 0;
    for (int id = 0; id < SCHEME__COUNT; id++)
        if (scheme_records[id].place != SCHEME_PLACE_NONE)
            len += (size_t)snprintf(names + len, len < sizeof names ? sizeof names - len : 0,
                                    "%s%s", len ? ", " : "", scheme_records[id].name);
    return err_set(e, MT_EINVAL, "unknown scheme '%s' (expected %s or %s)", s, names,
                   scheme_records[SCHEME_AUTO].name);
}

bool scheme_registry_torch(enum scheme_place place, unsigned kind, enum scheme_id *out)
{
    for (int id = 0; id < SCHEME__COUNT; id++)
        if (scheme_records[id].place == place && (scheme_records[id].torch_csv & kind)) {
            *out = scheme_records[id].id;
            return true;
        }
    return false;
}

/* The help's families, one line each: which records a line holds and how it begins. */
static int scheme_family(const struct scheme_record *r)
{
    return r->place == SCHEME_PLACE_NONE ? 3 : r->split ? 2 : r->async ? 1 : 0;
}

void scheme_registry_help(char *buf, size_t n)
{
    static const char *const heading[] = {"",
                                          "no flush between iterations: ", "split backward: ", ""};
    size_t len = 0;
    buf[0] = '\0';
    for (int f = 0; f < 4; f++) {
        bool first = true;
        for (int id = 0; id < SCHEME__COUNT; id++) {
            const struct scheme_record *r = &scheme_records[id];
            if (scheme_family(r) != f)
                continue;
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s%s%s%s%s",
                                    first && len ? " |\n"
                                    : first      ? ""
                                                 : " | ",
                                    first ? heading[f] : "", r->name, r->note ? " (" : "",
                                    r->note ? r->note : "", r->note ? ")" : "");
            first = false;
        }
    }
}

int scheme_registry_check(const struct config *c, int pp, int n, struct mt_err *e)
{
    const struct scheme_record *r = scheme_registry_get(c->scheme);
    return r != NULL && r->check != NULL ? r->check(c, pp, n, e) : MT_OK;
}
