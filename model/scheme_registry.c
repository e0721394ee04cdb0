/* model/scheme_registry.c: the scheme records, one per enum scheme_id, in the enum's order
 * (the tuner's candidates and the explorer's cycle come in this order too). A new scheme is a
 * record here, its id in model/config.h, its generator in sim/ (sim/scheme.c's table) and its
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
    NEED(n % 2 == 0, "num_microbatches: Chimera (X) needs an even number of micro-batches "
                     "(got %d)", n);
    return MT_OK;
}

static int check_interleaved(const struct config *c, int pp, int n, struct mt_err *e)
{
    NEED(c->chunks >= 2 && c->chunks <= CONFIG_MAX_CHUNKS,
         "chunks: interleaved 1F1B (W) needs 2 to %d chunks per device (got %d)",
         CONFIG_MAX_CHUNKS, c->chunks);
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

/* Why the asynchronous schemes have no torch CSV: its rows are one flushed iteration. */
#define TORCH_NO_FLUSH                                                                             \
    "its optimizer steps come every U backwards with no flush between iterations, and torch's "   \
    "schedule CSV is one iteration with one step at its end"

static const struct scheme_record scheme_records[SCHEME__COUNT] = {
    [SCHEME_V] = {SCHEME_V, "V", {"1F1B"}, "1F1B", "1F1B", SCHEME_PLACE_LINE, SCHEME_CHUNKS_ONE,
                  1, false, false, false, SCHEME_CSV_WHOLE, NULL, true, true, NULL},
    [SCHEME_X] = {SCHEME_X, "X", {"Chimera"}, "Chimera", "Chimera", SCHEME_PLACE_CHIMERA,
                  SCHEME_CHUNKS_ONE, 2, false, false, false, 0,
                  "Chimera runs every stage on two ranks (its down and up pipelines), and torch's "
                  "schedule CSV has one rank per stage",
                  true, true, check_chimera},
    [SCHEME_W] = {SCHEME_W, "W", {"Interleave", "Interleaved"}, "Interleaved 1F1B", "interleaved",
                  SCHEME_PLACE_LOOP, SCHEME_CHUNKS_CONFIG, 1, false, false, false,
                  SCHEME_CSV_WHOLE, NULL, true, true, check_interleaved},
    [SCHEME_GPIPE] = {SCHEME_GPIPE, "GPipe", {NULL}, "GPipe", NULL, SCHEME_PLACE_LINE,
                      SCHEME_CHUNKS_ONE, 1, false, false, false, 0, NULL, true, true, NULL},
    [SCHEME_AUTO] = {SCHEME_AUTO, "Auto", {NULL}, "Auto (the tuner picks)", "the tuner picks",
                     SCHEME_PLACE_NONE, SCHEME_CHUNKS_ONE, 1, false, false, false, 0,
                     "Auto names no schedule until the tuner picks one", false, false, NULL},
    [SCHEME_ASYNC] = {SCHEME_ASYNC, "Async", {"PipeMare"}, "PipeMare (asynchronous 1F1B)",
                      "PipeMare", SCHEME_PLACE_LINE, SCHEME_CHUNKS_ONE, 1, false, true, false, 0,
                      TORCH_NO_FLUSH, false, true, NULL},
    [SCHEME_PIPEDREAM] = {SCHEME_PIPEDREAM, "PipeDream", {NULL},
                          "PipeDream (asynchronous 1F1B, weight stashing)", NULL,
                          SCHEME_PLACE_LINE, SCHEME_CHUNKS_ONE, 1, false, true, true, 0,
                          TORCH_NO_FLUSH, false, true, NULL},
    [SCHEME_ZBH1] = {SCHEME_ZBH1, "ZB-H1", {"ZBH1", "ZB1P"}, "Zero Bubble H1 (1F1B memory)", NULL,
                     SCHEME_PLACE_LINE, SCHEME_CHUNKS_ONE, 1, true, false, false,
                     SCHEME_CSV_SPLIT | SCHEME_CSV_MIXED, NULL, true, true, NULL},
    [SCHEME_ZBH2] = {SCHEME_ZBH2, "ZB-H2", {"ZBH2"}, "Zero Bubble H2 (about 2x 1F1B memory)",
                     NULL, SCHEME_PLACE_LINE, SCHEME_CHUNKS_ONE, 1, true, false, false, 0, NULL,
                     true, true, NULL},
    [SCHEME_ZBV] = {SCHEME_ZBV, "ZB-V", {"ZBV"}, "Zero Bubble V (two chunks in a V)", NULL, SCHEME_PLACE_V, SCHEME_CHUNKS_TWO,
                    1, true, false, false, SCHEME_CSV_WHOLE | SCHEME_CSV_SPLIT, NULL, true, true,
                    NULL},
    [SCHEME_ZBW] = {SCHEME_ZBW, "ZB-W", {"ZBW", "InterleavedZeroBubble"},
                    "Interleaved Zero Bubble (ZB1P with chunks)", NULL, SCHEME_PLACE_LOOP,
                    SCHEME_CHUNKS_CONFIG, 1, true, false, false,
                    SCHEME_CSV_SPLIT | SCHEME_CSV_MIXED, NULL, true, true, check_zbw},
    [SCHEME_DUALPIPEV] = {SCHEME_DUALPIPEV, "DualPipeV", {NULL},
                          "DualPipeV (DeepSeek, a V with overlapped F and B)", NULL,
                          SCHEME_PLACE_V, SCHEME_CHUNKS_TWO, 1, true, false, false,
                          SCHEME_CSV_MIXED, NULL, true, true, check_dualpipev},
    [SCHEME_ZBV_TORCH] = {SCHEME_ZBV_TORCH, "ZBVZeroBubble", {"ScheduleZBVZeroBubble"},
                          "Zero Bubble V (torch's order)", "torch's ZB-V", SCHEME_PLACE_V,
                          SCHEME_CHUNKS_TWO, 1, true, false, false, 0, NULL, true, true, NULL},
    [SCHEME_VHALF] = {SCHEME_VHALF, "V-Half", {"VHalf"}, "V-Half (1/2 of 1F1B's activations)",
                      "1/2 memory", SCHEME_PLACE_V, SCHEME_CHUNKS_TWO, 1, true, false, false, 0,
                      NULL, true, true, NULL},
    [SCHEME_VMIN] = {SCHEME_VMIN, "V-Min", {"VMin"}, "V-Min (1/3 of 1F1B's activations)",
                     "1/3 memory", SCHEME_PLACE_V, SCHEME_CHUNKS_TWO, 1, true, false, false, 0,
                     NULL, true, true, NULL},
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
    static const char *const heading[] = {"", "no flush between iterations: ", "split backward: ",
                                          ""};
    size_t len = 0;
    buf[0] = '\0';
    for (int f = 0; f < 4; f++) {
        bool first = true;
        for (int id = 0; id < SCHEME__COUNT; id++) {
            const struct scheme_record *r = &scheme_records[id];
            if (scheme_family(r) != f)
                continue;
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s%s%s%s%s",
                                    first && len ? " |\n" : first ? "" : " | ",
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
