/* sim/schemes/slot_peak.h: one device's unit-slot timeline and its activation peak, kept under
 * point changes, for the V-Half / V-Min builder (sim/schemes/scheme_zbv_greedy.c), which asks
 * for the peak each time it tries an op in a slot. A slot holds nothing, a forward (+1 chunk),
 * a backward (owes a W) or a W (-1 chunk); with implied Ws, each free slot runs an owed W
 * (-1). The peak is the largest running sum, 0 at least, walking the slots from 0: O(1) to
 * read, O(log n) to change a slot (a segment tree over blocks of slots). */
#ifndef MT_SIM_SCHEMES_SLOT_PEAK_H
#define MT_SIM_SCHEMES_SLOT_PEAK_H

#include <stdbool.h>

enum slot_peak_kind { SLOT_PEAK_FREE, SLOT_PEAK_FORWARD, SLOT_PEAK_BACKWARD, SLOT_PEAK_W };

struct slot_peak;

/* slots free slots; implied_w: free slots run the Ws that backwards owe (else a backward
 * weighs nothing and only W slots free). Caller frees (slot_peak_free). */
struct slot_peak *slot_peak_new(int slots, bool implied_w);
void slot_peak_free(struct slot_peak *sp);
/* Fills slot (0 <= slot < slots) without updating the peak: a batch of puts, then
 * slot_peak_build once, before any other call. */
void slot_peak_put(struct slot_peak *sp, int slot, enum slot_peak_kind kind);
void slot_peak_build(struct slot_peak *sp);
/* Changes one slot and the peak: O(log slots). */
void slot_peak_set(struct slot_peak *sp, int slot, enum slot_peak_kind kind);
/* The device's peak in chunks (0 when nothing is held). */
int slot_peak_get(const struct slot_peak *sp);
/* Without implied Ws only: the last slot before `before` whose running sum reaches level,
 * or -1 when none does: O(log slots). */
int slot_peak_last_reaching(const struct slot_peak *sp, int before, int level);

#endif
