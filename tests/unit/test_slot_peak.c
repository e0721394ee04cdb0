/* tests/unit/test_slot_peak.c: the V-Half / V-Min builder's slot timeline (sim/schemes/slot_peak.h)
 * against timelines walked by hand and against a plain walk of the slots (the builder's old
 * vg_peak rules) on random timelines under random changes:
 *   - implied Ws, F B F . . : held 1 1 2, the free slot runs B's W: 1, then nothing owed: peak 2;
 *   - F B F F . . : 1 1 2 3 2 2: peak 3; the free slot moved before the Fs (F B . F F): 1 1 0 1 2:
 *     peak 2;
 *   - F F B B . F: 1 2 2 2 1 2: peak 2; B . . F: the W runs at slot 1, held -1 then 0: peak 0;
 *   - W lists (no implied Ws), F F W F W: running sums 1 2 1 2 1, peak 2; the last slot before 5
 *     reaching 2 is 3, before 3 it is 1, before 1 none; a backward and a free slot weigh nothing. */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/schemes/slot_peak.h"
#include "tests/check.h"

/* The plain walk: slot by slot, a forward holds one more, a W one less, a backward owes a W
 * that the next free slot runs when implied; the largest held, 0 at least. */
static int walk_peak(const unsigned char *kind, int n, bool implied_w)
{
    int cur = 0, owed = 0, peak = 0;
    for (int i = 0; i < n; i++) {
        if (kind[i] == SLOT_PEAK_FORWARD)
            cur++;
        else if (kind[i] == SLOT_PEAK_W)
            cur--;
        else if (kind[i] == SLOT_PEAK_BACKWARD)
            owed += implied_w;
        else if (implied_w && owed > 0) {
            cur--;
            owed--;
        }
        peak = cur > peak ? cur : peak;
    }
    return peak;
}

static int walk_last_reaching(const unsigned char *kind, int n, int before, int level)
{
    int sum = 0, found = -1;
    for (int i = 0; i < n && i < before; i++) {
        sum += kind[i] == SLOT_PEAK_FORWARD ? 1 : kind[i] == SLOT_PEAK_W ? -1 : 0;
        if (sum >= level)
            found = i;
    }
    return found;
}

static struct slot_peak *timeline(const char *s, bool implied_w)
{
    int n = (int)strlen(s);
    struct slot_peak *sp = slot_peak_new(n, implied_w);
    for (int i = 0; i < n; i++)
        slot_peak_put(sp, i, s[i] == 'F' ? SLOT_PEAK_FORWARD : s[i] == 'B' ? SLOT_PEAK_BACKWARD
                                 : s[i] == 'W' ? SLOT_PEAK_W : SLOT_PEAK_FREE);
    slot_peak_build(sp);
    return sp;
}

static int peak_of(const char *s, bool implied_w)
{
    struct slot_peak *sp = timeline(s, implied_w);
    int p = slot_peak_get(sp);
    slot_peak_free(sp);
    return p;
}

static void test_by_hand(void)
{
    CHECK_EQ_INT(peak_of("FBF..", true), 2);
    CHECK_EQ_INT(peak_of("FBFF..", true), 3);
    CHECK_EQ_INT(peak_of("FB.FF", true), 2);
    CHECK_EQ_INT(peak_of("FFBB.F", true), 2);
    CHECK_EQ_INT(peak_of("B..F", true), 0);
    CHECK_EQ_INT(peak_of("", true), 0);
    CHECK_EQ_INT(peak_of("FFWFW", false), 2);
    CHECK_EQ_INT(peak_of("FB.B.F", false), 2); /* without implied Ws nothing is freed */
    CHECK_EQ_INT(peak_of("FB.B.F", true), 1);
    struct slot_peak *sp = timeline("FFWFW", false);
    CHECK_EQ_INT(slot_peak_last_reaching(sp, 5, 2), 3);
    CHECK_EQ_INT(slot_peak_last_reaching(sp, 3, 2), 1);
    CHECK_EQ_INT(slot_peak_last_reaching(sp, 1, 2), -1);
    CHECK_EQ_INT(slot_peak_last_reaching(sp, 5, 3), -1);
    /* changes: slot 3 freed, slot 2 an F: F F F . W, sums 1 2 3 3 2 */
    slot_peak_set(sp, 3, SLOT_PEAK_FREE);
    slot_peak_set(sp, 2, SLOT_PEAK_FORWARD);
    CHECK_EQ_INT(slot_peak_get(sp), 3);
    CHECK_EQ_INT(slot_peak_last_reaching(sp, 5, 3), 3);
    slot_peak_free(sp);
}

static uint64_t rng_state = 88172645463325252ull;

static int rnd(int n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (int)(rng_state % (uint64_t)n);
}

/* Random timelines of 1 to 700 slots (blocks of 32, several tree levels), random changes; the
 * peak after every change, and the last slot reaching random levels, as the walk gives them. */
static void test_random(void)
{
    int mismatches = 0, checks = 0;
    for (int round = 0; round < 400; round++) {
        bool implied_w = round % 2 == 0;
        int n = 1 + rnd(round < 200 ? 100 : 700);
        /* weights that keep sums both rising and falling: more forwards in half the rounds */
        int fw = 20 + rnd(40);
        unsigned char *kind = calloc((size_t)n, 1);
        struct slot_peak *sp = slot_peak_new(n, implied_w);
        for (int i = 0; i < n; i++) {
            int r = rnd(100);
            kind[i] = r < fw ? SLOT_PEAK_FORWARD : r < fw + 25 ? SLOT_PEAK_BACKWARD
                    : r < fw + 40 && !implied_w ? SLOT_PEAK_W : SLOT_PEAK_FREE;
            slot_peak_put(sp, i, kind[i]);
        }
        slot_peak_build(sp);
        mismatches += slot_peak_get(sp) != walk_peak(kind, n, implied_w);
        checks++;
        for (int step = 0; step < 60; step++) {
            int i = rnd(n);
            kind[i] = (unsigned char)rnd(implied_w ? 3 : 4);
            slot_peak_set(sp, i, kind[i]);
            mismatches += slot_peak_get(sp) != walk_peak(kind, n, implied_w);
            checks++;
            if (!implied_w) {
                int before = rnd(n + 1), level = rnd(n / 4 + 3) - 1;
                mismatches += slot_peak_last_reaching(sp, before, level) !=
                              walk_last_reaching(kind, n, before, level);
                checks++;
            }
        }
        slot_peak_free(sp);
        free(kind);
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK(checks > 30000);
}

int main(void)
{
    test_by_hand();
    test_random();
    return check_report("test_slot_peak");
}
