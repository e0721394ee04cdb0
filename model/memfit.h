/* model/memfit.h: the memory predictor of input-aware checkpointing (Mimose §4.2; docs/design.md
 * "Input-aware checkpointing"): bytes as a quadratic in the sequence length s,
 * a + b s + c s^2 (linear terms: the MLP and every (b, s, h) tensor; the quadratic term: the
 * attention scores), fitted by least squares to (s, bytes) pairs measured in the first
 * iterations. One fit per quantity (one layer's activations, a stage's checkpoint, ...). */
#ifndef MT_MODEL_MEMFIT_H
#define MT_MODEL_MEMFIT_H

#include <stdbool.h>

struct mt_err;

struct memfit {
    int n;          /* samples added */
    int distinct;   /* distinct lengths among them (up to 3 counted) */
    double len0[3]; /* the first distinct lengths seen */
    double scale;   /* lengths are fitted as u = s / scale (conditioning) */
    double su[5];   /* sums of u^0 .. u^4 */
    double suy[3];  /* sums of y u^0 .. y u^2 */
    double coef[3]; /* a, b, c in bytes per u^k, after memfit_solve */
    int degree;     /* of the solved fit: 2, or less with fewer distinct lengths */
    bool solved;
};

/* scale: a typical length (the longest expected); > 0. */
void memfit_init(struct memfit *f, double scale);
void memfit_add(struct memfit *f, double s, double bytes);
/* Least squares of degree min(2, distinct lengths - 1). MT_EINVAL with no sample. */
int memfit_solve(struct memfit *f, struct mt_err *e);
/* Predicted bytes at length s (memfit_solve first). */
double memfit_predict(const struct memfit *f, double s);

#endif
