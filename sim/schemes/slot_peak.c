/* sim/schemes/slot_peak.c: the activation peak of a unit-slot timeline under point changes.
 *
 * Walking the slots, the state is (owed, cur): Ws owed and chunks held. A forward adds one to
 * cur, a W takes one, a backward adds one to owed; with implied Ws a free slot with owed > 0
 * takes one from both. A run of slots is summarised as a function of the owed it starts with
 * (x >= 0), in five integers:
 *   owed after     = max(x + a, c)            (c >= max(a, 0))
 *   cur change     = s + max(a, c - x)
 *   largest prefix = max(p1, p2 - x)           (cur's largest value within the run, relative)
 * Two runs L then R join into s = sL + sR, a = aL + aR, c = max(cL + aR, cR),
 * p1 = max(p1L, sL + aL + p1R), p2 = max(p2L, sL + max(cL + p1R, p2R)): R starts with
 * u = max(x + aL, cL) owed, and L's change is sL + u - x. The peak of the whole timeline is
 * max(0, p1, p2) at x = 0. Without implied Ws, a = c = 0 everywhere and p1 = p2 is the
 * largest prefix sum of s.
 *
 * The tree's leaves are blocks of SLOT_PEAK_BLOCK slots (one byte a slot, the summaries 2.5
 * bytes a slot), so a timeline of millions of slots stays small; a change re-joins its block
 * and the path above it. */
#include <config.h>
#include "sim/schemes/slot_peak.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>

#include "util/xalloc.h"

enum { SLOT_PEAK_BLOCK = 32 };

/* A run's summary (see the head comment); an empty run has p1 = p2 = SLOT_PEAK_NONE. */
struct slot_peak_sum {
    int s, a, c, p1, p2;
};

#define SLOT_PEAK_NONE (INT_MIN / 4)

struct slot_peak {
    int slots;
    int blocks; /* a power of two: blocks[blocks + b] is block b's summary, [1] the root */
    bool implied_w;
    unsigned char *kind; /* [slots], enum slot_peak_kind */
    struct slot_peak_sum *node; /* [2 * blocks] */
};

static int max_int(int x, int y)
{
    return x > y ? x : y;
}

static struct slot_peak_sum slot_peak_join(struct slot_peak_sum l, struct slot_peak_sum r)
{
    return (struct slot_peak_sum){
        .s = l.s + r.s,
        .a = l.a + r.a,
        .c = max_int(l.c + r.a, r.c),
        .p1 = max_int(l.p1, l.s + l.a + r.p1),
        .p2 = max_int(l.p2, l.s + max_int(l.c + r.p1, r.p2)),
    };
}

/* One slot's summary, [implied_w][kind]. Without implied Ws a backward and a free slot leave
 * the state alone. */
static const struct slot_peak_sum slot_peak_leaf[2][4] = {
    {{0, 0, 0, 0, 0}, {1, 0, 0, 1, 1}, {0, 0, 0, 0, 0}, {-1, 0, 0, -1, -1}},
    {{0, -1, 0, -1, 0}, {1, 0, 0, 1, 1}, {-1, 1, 1, 0, 0}, {-1, 0, 0, -1, -1}},
};

static struct slot_peak_sum slot_peak_block_sum(const struct slot_peak *sp, int b)
{
    struct slot_peak_sum x = {0, 0, 0, SLOT_PEAK_NONE, SLOT_PEAK_NONE};
    int lo = b * SLOT_PEAK_BLOCK, hi = lo + SLOT_PEAK_BLOCK < sp->slots ? lo + SLOT_PEAK_BLOCK
                                                                        : sp->slots;
    for (int i = lo; i < hi; i++)
        x = slot_peak_join(x, slot_peak_leaf[sp->implied_w][sp->kind[i]]);
    return x;
}

struct slot_peak *slot_peak_new(int slots, bool implied_w)
{
    struct slot_peak *sp = xcalloc(1, sizeof *sp);
    sp->slots = slots;
    sp->implied_w = implied_w;
    sp->blocks = 1;
    while (sp->blocks * SLOT_PEAK_BLOCK < slots)
        sp->blocks *= 2;
    sp->kind = xcalloc((size_t)(slots > 0 ? slots : 1), 1);
    sp->node = xcalloc((size_t)2 * sp->blocks, sizeof *sp->node);
    slot_peak_build(sp);
    return sp;
}

void slot_peak_free(struct slot_peak *sp)
{
    if (!sp)
        return;
    free(sp->kind);
    free(sp->node);
    free(sp);
}

void slot_peak_put(struct slot_peak *sp, int slot, enum slot_peak_kind kind)
{
    sp->kind[slot] = (unsigned char)kind;
}

void slot_peak_build(struct slot_peak *sp)
{
    for (int b = 0; b < sp->blocks; b++)
        sp->node[sp->blocks + b] = slot_peak_block_sum(sp, b);
    for (int i = sp->blocks - 1; i >= 1; i--)
        sp->node[i] = slot_peak_join(sp->node[2 * i], sp->node[2 * i + 1]);
}

void slot_peak_set(struct slot_peak *sp, int slot, enum slot_peak_kind kind)
{
    sp->kind[slot] = (unsigned char)kind;
    int i = sp->blocks + slot / SLOT_PEAK_BLOCK;
    sp->node[i] = slot_peak_block_sum(sp, i - sp->blocks);
    for (i /= 2; i >= 1; i /= 2)
        sp->node[i] = slot_peak_join(sp->node[2 * i], sp->node[2 * i + 1]);
}

int slot_peak_get(const struct slot_peak *sp)
{
    const struct slot_peak_sum *r = &sp->node[1];
    return max_int(0, max_int(r->p1, r->p2));
}

/* The last slot in node i's run [lo, lo + width), before `before`, whose running sum reaches
 * level, the sum before lo being base; -1 when none. Right child first: a child wholly before
 * `before` whose largest prefix reaches level holds the answer, so one path goes down. */
static int slot_peak_reach(const struct slot_peak *sp, int i, int lo, int width, int base,
                           int before, int level)
{
    if (lo >= before || lo >= sp->slots || base + sp->node[i].p1 < level)
        return -1;
    if (i >= sp->blocks) {
        int found = -1, hi = lo + width < before ? lo + width : before;
        hi = hi < sp->slots ? hi : sp->slots;
        for (int t = lo; t < hi; t++) {
            base += slot_peak_leaf[0][sp->kind[t]].s;
            if (base >= level)
                found = t;
        }
        return found;
    }
    int half = width / 2;
    int r = slot_peak_reach(sp, 2 * i + 1, lo + half, half, base + sp->node[2 * i].s, before,
                            level);
    return r >= 0 ? r : slot_peak_reach(sp, 2 * i, lo, half, base, before, level);
}

int slot_peak_last_reaching(const struct slot_peak *sp, int before, int level)
{
    assert(!sp->implied_w);
    return slot_peak_reach(sp, 1, 0, sp->blocks * SLOT_PEAK_BLOCK, 0, before, level);
}
