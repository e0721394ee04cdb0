/* sim/schemes/scheme_chimera.c: X, Chimera (Li & Hoefler, SC'21): two pipelines over the same D
 * devices in opposite directions, each device holding stage s of the down pipeline (part 0)
 * and stage D-1-s of the up pipeline (part 1), so weights are kept twice. In each group of
 * D micro-batches the first half goes down and the rest up (sim/core/vpipe.c).
 *
 * The order follows Chimera's own generator (chimera_pipeline_rank.py), which steps both
 * pipelines in lock step on a grid of equal slots: each pipeline injects a micro-batch every
 * two slots and every micro-batch moves one stage a slot, so micro-batch j of a unit runs
 *     forward of stage s in slot 2j + s,   backward of stage s in slot 2j + 2D - 1 - s.
 * On device d the down forwards and up backwards take slots of parity d, the other two the
 * other parity, and they never collide: a unit of D micro-batches fills 3D - 2 slots with
 * D - 2 bubbles per device (Chimera's count, Table 2 of its paper) and keeps at most D
 * micro-batches in flight (the paper's Table 1: [(D/2+1) M_θ, D M_θ]). Units of further
 * micro-batches are concatenated directly: each is shifted by the smallest offset at which
 * none of its slots collides with those already taken, which fills the bubbles between
 * units. The device order is the slot order; the simulator then applies real costs. */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>
#include <string.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

struct chimera_op {
    int slot, dev;
    struct instr in;
};

static int chimera_cmp(const void *a, const void *b)
{
    const struct chimera_op *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev - y->dev;
    return x->slot - y->slot;
}

/* The slot of op k (0 .. 2 * size * D - 1) of a unit of `size` micro-batches at offset 0. */
static void chimera_unit_op(const struct plan_geom *g, int first_mb, int size, int k,
                            struct chimera_op *op)
{
    int D = g->devices, per_mb = 2 * D;
    int i = k / per_mb, r = k % per_mb; /* micro-batch i of the unit, op r of it */
    int mb = first_mb + i, part = vpipe_mb_part(g, mb);
    int j = part == 0 ? i : i - size / 2; /* its index in its pipeline */
    bool fw = r < D;
    int s = fw ? r : r - D;
    int dev, p;
    vpipe_locate(g, mb, s, &dev, &p);
    op->slot = fw ? 2 * j + s : 2 * j + 2 * D - 1 - s;
    op->dev = dev;
    op->in = (struct instr){fw ? OP_FW : OP_BW, mb, p, s, -1, 0, 0, 0};
}

int scheme_order_chimera(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    size_t total = (size_t)2 * N * D;
    struct chimera_op *ops = xmalloc(total * sizeof *ops);
    /* Occupancy of slots per device. A unit spans 3D - 2 slots from its offset and the next
     * offset is at most one past the last slot taken, so 6 (N + D) slots always suffice. */
    size_t horizon = (size_t)6 * ((size_t)N + (size_t)D);
    unsigned char *busy = xcalloc((size_t)D * horizon, 1);
    size_t n = 0;
    int offset = 0;
    for (int first = 0; first < N; first += D) {
        int size = N - first < D ? N - first : D;
        int count = 2 * size * D;
        for (;; offset++) { /* the smallest offset at which the unit collides with nothing */
            bool clash = false;
            for (int k = 0; k < count && !clash; k++) {
                struct chimera_op op;
                chimera_unit_op(g, first, size, k, &op);
                clash = busy[(size_t)op.dev * horizon + (size_t)(op.slot + offset)];
            }
            if (!clash)
                break;
        }
        for (int k = 0; k < count; k++) {
            struct chimera_op *op = &ops[n++];
            chimera_unit_op(g, first, size, k, op);
            op->slot += offset;
            busy[(size_t)op->dev * horizon + (size_t)op->slot] = 1;
        }
        offset++;
    }
    qsort(ops, n, sizeof *ops, chimera_cmp);
    for (size_t k = 0; k < n; k++)
        plan_append(p, ops[k].dev, ops[k].in);
    free(busy);
    free(ops);
    return MT_OK;
}
