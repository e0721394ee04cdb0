/* bench/bench_explore.c: the explorer's key latency (issue 27 items 1 and 2): GPT3-13B, V, 32
 * devices at 4,096 micro-batches (and 16,384 with the argument "big"), 120x40. CPU time of a key
 * and the frame it redraws (explore_key + explore_draw, as tui/screen.c does per key), for the
 * keys of the Gantt view: passes (n/p), selection (arrows), zoom and pan, the critical path and
 * the change marks, and an edit (m/M: a new config, its whole pipeline). Goal: every key
 * <= 200 ms. CPU time, not wall: the machine is shared. Arguments: "big" adds 16,384;
 * "quick" times the view keys only (no edit). */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "model/config.h"
#include "model/presets.h"
#include "render/paint_cells.h"
#include "tui/explore.h"
#include "util/err.h"
#include "util/xalloc.h"

/* A key and the key that undoes it (so every repeat starts from the same state). */
struct bench_key {
    const char *name;
    int key, undo;
    bool edit; /* a new config: its pipeline is built again */
};

static const struct bench_key bench_keys[] = {
    {"n (next pass)", 'n', 'p', false},     {"p (previous pass)", 'p', 'n', false},
    {"l (next instruction)", 'l', 'h', false}, {"j (next lane)", 'j', 'k', false},
    {"+ (zoom in)", '+', '0', false},       {"0 (fit)", '0', '+', false},
    {"L (pan)", 'L', 'H', false},           {"c (critical path)", 'c', 'c', false},
    {"* (change marks)", '*', '*', false},  {"m (one micro-batch less)", 'm', 'M', true},
};

/* CPU ms of key k and its frame. */
static double bench_key_once(struct explore *x, struct cells *g, int key)
{
    double c0 = bench_cpu_ms();
    explore_key(x, key);
    explore_draw(x, g);
    return bench_cpu_ms() - c0;
}

static int bench_explore_at(int mbs, bool quick, int runs)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    if (presets_model("GPT3-13B", &c.model, &e) != MT_OK) {
        fprintf(stderr, "bench_explore: %s\n", e.msg);
        return 1;
    }
    c.scheme = SCHEME_V;
    c.num_device = 32;
    c.num_microbatches = mbs;
    c.global_batch_size = mbs * c.micro_batch_size;
    struct explore x;
    double c0 = bench_cpu_ms();
    if (explore_init(&x, &c, NULL, true, &e) != MT_OK) {
        fprintf(stderr, "bench_explore: %s\n", e.msg);
        return 1;
    }
    struct cells *g = cells_new(120, 40, true);
    explore_draw(&x, g);
    printf("explorer, GPT3-13B, V, 32 devices x %d micro-batches, 120x40: open %.0f ms CPU\n",
           mbs, bench_cpu_ms() - c0);
    explore_key(&x, 'n'); /* ckpt shown: n and p stay within the passes */
    explore_draw(&x, g);
    int status = 0;
    double *t = xmalloc((size_t)runs * sizeof *t);
    for (size_t k = 0; k < sizeof bench_keys / sizeof bench_keys[0]; k++) {
        const struct bench_key *b = &bench_keys[k];
        if (quick && b->edit)
            continue;
        int n = b->edit ? 3 : runs;
        for (int i = 0; i < n; i++) {
            t[i] = bench_key_once(&x, g, b->key);
            bench_key_once(&x, g, b->undo);
        }
        double med = bench_median(t, n);
        printf("  %-26s median %8.1f ms   max %8.1f   (%d runs)  goal <= 200 ms: %s\n", b->name,
               med, t[n - 1], n, med <= 200 ? "met" : "MISSED");
        status |= med > 200;
    }
    free(t);
    cells_free(g);
    explore_fini(&x);
    return status;
}

int main(int argc, char **argv)
{
    bool big = false, quick = false;
    for (int i = 1; i < argc; i++) {
        big |= strcmp(argv[i], "big") == 0;
        quick |= strcmp(argv[i], "quick") == 0;
    }
    xalloc_keep_heap(); /* as mario-tui's main() does */
    int status = bench_explore_at(4096, quick, 5);
    if (big)
        status |= bench_explore_at(16384, quick, 3);
    return status;
}
