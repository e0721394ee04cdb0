/* tui/explore_edit.c: the explorer's live edits (d/D devices, m/M micro-batches, b/B
 * micro-batch size, v/V chunks, s scheme, [/] memory cap (in M_θ under unit costs), i/I u/U
 * async iterations and update interval) as all-or-nothing changes of the config that is drawn
 * (issue 20).
 *
 * An edit never leaves a hidden setting behind: it makes candidate configs from the one on
 * screen, one step further each time (pp 7, 6, 5, ... for d), and keeps the first one the
 * whole pipeline builds from (scheme, validation, Mario's passes). So a value the scheme
 * refuses is stepped over to the nearest one it allows (d on W goes to a pp the micro-batches
 * allow; m on ZB-W to the next whole number of rounds), and when none is found the edit is
 * refused whole: the config, the plan and the header stay as they were and the status line
 * says why. */
#include <config.h>
#include "tui/explore.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/scheme_registry.h"
#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/str.h"

/* How far an edit looks for a value the scheme allows. Refused values fail in
 * config_validate, before any plan is made, so a long search costs little. */
#define EDIT_MAX_TRIES 64

/* Candidate k (k = 1, 2, ...) of an edit from the drawn config: false when there is none. */
typedef bool (*edit_next)(struct config *c, const struct config *from, int k, int dir);
/* The edited value of a config, for the status line ("pp 8 -> 4"). */
typedef void (*edit_show)(const struct config *c, char *buf, size_t n);

/* The names of the schemes the registry marks with what, in its order, joined by sep. */
void explore_scheme_names(enum explore_schemes what, const char *sep, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int id = 0; id < SCHEME__COUNT; id++) {
        const struct scheme_record *r = scheme_registry_get((enum scheme_id)id);
        bool pick = what == SCHEMES_CYCLE   ? r->in_cycle
                    : what == SCHEMES_ASYNC ? r->in_cycle && r->async
                                            : r->in_cycle && r->chunks == SCHEME_CHUNKS_CONFIG;
        if (pick && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? sep : "", r->name);
    }
}

static bool edit_devices(struct config *c, const struct config *from, int k, int dir)
{
    /* a step of one per pipeline: Chimera's two keep an even pp */
    int step = scheme_registry_get(from->scheme)->replicas > 1
                   ? scheme_registry_get(from->scheme)->replicas
                   : 1;
    int group = (from->cluster.dp > 0 ? from->cluster.dp : 1) *
                (from->cluster.tp > 0 ? from->cluster.tp : 1);
    int pp = config_pp(from) + dir * k * step;
    if (pp < 1 || (long)pp * group > CONFIG_MAX_DEVICES)
        return false;
    config_set_pp(c, pp);
    return true;
}

static void show_devices(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d", config_pp(c));
}

/* The k-th micro-batch count from n in direction dir: one by one up to 256 (one more is still
 * a change the Gantt shows), then on the ladder 256, 320, 384, 448, 512, 640, ... (1, 1.25,
 * 1.5, 1.75 times a power of two), so that M at 1,024 micro-batches goes to 1,280, not 1,025
 * (issue 41 item 6); a count between two rungs goes to the next rung. The rungs are
 * multiples of 64, as the interleaved schedules want their micro-batches a multiple of the
 * stages. */
#define EDIT_MB_LADDER 256
static long edit_mb_step(long n, int dir, int k)
{
    for (int i = 0; i < k; i++) {
        if (dir > 0 ? n < EDIT_MB_LADDER : n <= EDIT_MB_LADDER) {
            n += dir;
            continue;
        }
        long p = EDIT_MB_LADDER; /* the power of two with p <= m < 2p, m the rung below or at n */
        while (p * 2 <= n)
            p *= 2;
        long step = p / 4;
        long below = n / step * step; /* n's rung, or the one under it */
        n = dir > 0 ? below + step : (below == n ? n - (n == p ? p / 8 : step) : below);
    }
    return n;
}

static bool edit_mb_count(struct config *c, const struct config *from, int k, int dir)
{
    long n = edit_mb_step(config_microbatches(from), dir, k);
    if (n < 1 || n > CONFIG_MAX_MICROBATCHES)
        return false;
    c->num_microbatches = (int)n;
    c->global_batch_size = (int)n * from->micro_batch_size * from->cluster.dp;
    return true;
}

static void show_mb_count(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d", config_microbatches(c));
}

/* Micro-batch size halves or doubles at a fixed global batch: the batch the plan runs
 * (config_global_batch, N x mbs x dp after --microbatches N), not the config's default one. */
static bool edit_mb_size(struct config *c, const struct config *from, int k, int dir)
{
    int mbs = from->micro_batch_size, global = config_global_batch(from);
    int dp = from->cluster.dp > 0 ? from->cluster.dp : 1;
    for (int i = 0; i < k; i++)
        mbs = dir > 0 ? mbs * 2 : mbs / 2;
    /* a global batch that mbs x dp does not divide is left to validation, which says so */
    if (mbs < 1 || (long)mbs * dp > global)
        return false;
    c->micro_batch_size = mbs;
    c->global_batch_size = global;
    c->num_microbatches = 0;
    return true;
}

static void show_mb_size(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d", c->micro_batch_size);
}

static bool edit_chunks(struct config *c, const struct config *from, int k, int dir)
{
    int v = from->chunks + dir * k;
    if (v < 1 || v > CONFIG_MAX_CHUNKS)
        return false;
    c->chunks = v;
    return true;
}

static void show_chunks(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d", c->chunks);
}

/* The scheme cycle: the registry's schemes marked for it, in its order. */
static bool edit_scheme(struct config *c, const struct config *from, int k, int dir)
{
    enum scheme_id cycle[SCHEME__COUNT];
    int n = 0, i = 0;
    for (int id = 0; id < SCHEME__COUNT; id++)
        if (scheme_registry_get((enum scheme_id)id)->in_cycle)
            cycle[n++] = (enum scheme_id)id;
    if (k >= n)
        return false;
    while (i < n && cycle[i] != from->scheme)
        i++;
    c->scheme = cycle[((i + dir * k) % n + n) % n];
    if (!config_scheme_async(c->scheme)) { /* a synchronous plan holds one iteration */
        c->iterations = 1;
        c->update_interval = 1;
    } else if (c->iterations == 1) { /* show the steady state between iterations */
        c->iterations = 3;
    }
    return true;
}

static void show_scheme(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%s", config_scheme_name(c->scheme));
}

static bool edit_iterations(struct config *c, const struct config *from, int k, int dir)
{
    int v = from->iterations + dir * k;
    if (v < 1 || v > CONFIG_MAX_ITERATIONS)
        return false;
    c->iterations = v;
    return true;
}

static void show_iterations(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d", c->iterations);
}

static bool edit_update(struct config *c, const struct config *from, int k, int dir)
{
    int v = from->update_interval + dir * k;
    if (v < 1 || v > config_microbatches(from))
        return false;
    c->update_interval = v;
    return true;
}

static void show_update(const struct config *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d", c->update_interval);
}

/* Under unit costs the cap is in M_θ (`--memory 1.05`, issue 18): steps of 0.25 M_θ, so that
 * 1.05 reaches docs/search.md's 2.05 in four. */
#define EDIT_CAP_UNIT_STEP 0.25

/* The cap in whole MiB: x 1.25 and / 1.25 never leave a fraction of a byte (a saved plan's
 * cap of 42949672960.00003 after [ and ]). */
static bool edit_cap(struct config *c, const struct config *from, int k, int dir)
{
    if (k > 1)
        return false;
    if (from->unit.enabled) { /* in M_θ, to the millionth (no 1.3000000000000003) */
        double v = round((from->memory_per_device + dir * EDIT_CAP_UNIT_STEP) * 1e6) / 1e6;
        if (v < 0.05)
            return false;
        c->memory_per_device = v;
        return true;
    }
    double cap = from->memory_per_device > 0 ? from->memory_per_device
                                             : from->cluster.device.mem_bytes;
    const double mib = 1024.0 * 1024.0;
    double v = round(cap * (dir > 0 ? 1.25 : 1 / 1.25) / mib) * mib;
    if (v < mib)
        return false;
    c->memory_per_device = v;
    return true;
}

static void show_cap(const struct config *c, char *buf, size_t n)
{
    if (c->unit.enabled)
        snprintf(buf, n, "%.4g M_θ", c->memory_per_device);
    else
        str_format_bytes(c->memory_per_device, buf, n);
}

/* Tries candidates 1, 2, ... of an edit until one builds; the status line says what happened. */
static int edit_apply(struct explore *x, const char *name, edit_next next, edit_show show,
                      int dir)
{
    const struct config from = x->cfg;
    char was[48], now[48], skipped[160] = "", first_why[400] = "";
    show(&from, was, sizeof was);
    int refused = 0;
    for (int k = 1; k <= EDIT_MAX_TRIES; k++) {
        struct config c = from;
        if (!next(&c, &from, k, dir))
            break;
        struct mt_err e = {0};
        if (explore_apply(x, &c, &e) == MT_OK) {
            show(&c, now, sizeof now);
            if (refused == 0)
                snprintf(x->status, sizeof x->status, "%s %s -> %s", name, was, now);
            else
                snprintf(x->status, sizeof x->status, "%s %s -> %s (%s refused: %s)", name, was,
                         now, skipped, first_why);
            x->status_err = false;
            explore_status_oom(x, false);
            return R_REDRAW;
        }
        if (x->wait_stopped) { /* Esc while it built: no next value, the plan shown stays */
            snprintf(x->status, sizeof x->status, "%s stays %s: the build was stopped by Esc",
                     name, was);
            x->status_err = false;
            return R_STATUS;
        }
        char v[48];
        show(&c, v, sizeof v);
        size_t len = strlen(skipped);
        if (refused < 6 && len + strlen(v) + 3 < sizeof skipped)
            snprintf(skipped + len, sizeof skipped - len, "%s%s", refused ? ", " : "", v);
        else if (refused == 6 && len + 6 < sizeof skipped)
            snprintf(skipped + len, sizeof skipped - len, ", ...");
        if (refused++ == 0)
            snprintf(first_why, sizeof first_why, "%.399s", e.msg);
    }
    if (refused == 0)
        snprintf(x->status, sizeof x->status, "%s stays %s: it is at its limit", name, was);
    else
        snprintf(x->status, sizeof x->status, "%s stays %s: %s refused (%s)", name, was, skipped,
                 first_why);
    x->status_err = true;
    return R_REDRAW;
}

int explore_edit(struct explore *x, enum explore_edit what, int dir)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return R_NONE;
    const char *sname = config_scheme_name(x->cfg.scheme);
    switch (what) {
    case EDIT_DEVICES:
        return edit_apply(x, "pp", edit_devices, show_devices, dir);
    case EDIT_MB_COUNT:
        return edit_apply(x, "micro-batches", edit_mb_count, show_mb_count, dir);
    case EDIT_MB_SIZE:
        return edit_apply(x, "micro-batch size", edit_mb_size, show_mb_size, dir);
    case EDIT_CHUNKS:
        if (!config_scheme_uses_chunks(x->cfg.scheme)) {
            char chunks[160];
            explore_scheme_names(SCHEMES_CHUNKS, " and ", chunks, sizeof chunks);
            snprintf(x->status, sizeof x->status,
                     "v/V: %s has no chunks to change (%s take 2 to %d per device; the V "
                     "schemes always 2)",
                     sname, chunks, CONFIG_MAX_CHUNKS);
            x->status_err = true;
            return R_REDRAW;
        }
        return edit_apply(x, "chunks", edit_chunks, show_chunks, dir);
    case EDIT_SCHEME:
        return edit_apply(x, "scheme", edit_scheme, show_scheme, dir);
    case EDIT_CAP:
        if (x->cfg.unit.enabled && !(x->cfg.memory_per_device > 0)) {
            snprintf(x->status, sizeof x->status,
                     "[/]: no cap to change: unit costs count memory in M_θ and have none "
                     "unless given (--memory 1.05)");
            x->status_err = true;
            return R_REDRAW;
        }
        return edit_apply(x, "cap", edit_cap, show_cap, dir);
    case EDIT_ITERATIONS:
    case EDIT_UPDATE:
        if (!config_scheme_async(x->cfg.scheme)) {
            char async[160];
            explore_scheme_names(SCHEMES_ASYNC, ", ", async, sizeof async);
            snprintf(x->status, sizeof x->status,
                     "%s: %s is synchronous: only the asynchronous schemes (s: %s) span several "
                     "iterations or update every U micro-batches",
                     what == EDIT_ITERATIONS ? "i/I" : "u/U", sname, async);
            x->status_err = true;
            return R_REDRAW;
        }
        if (what == EDIT_ITERATIONS)
            return edit_apply(x, "iterations", edit_iterations, show_iterations, dir);
        return edit_apply(x, "update interval", edit_update, show_update, dir);
    }
    return R_NONE;
}
