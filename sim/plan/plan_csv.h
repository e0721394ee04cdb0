/* sim/plan/plan_csv.h: what the schedule CSV's writer and reader (sim/plan/plan_csv.c) share
 * with its FSDP actions (sim/plan/plan_csv_fsdp.c). Apart from sim/plan/plan.h on purpose:
 * plan_csv_fsdp.c reads the op model (model/ops.h), whose struct op would clash with the
 * plan's enum op. */
#ifndef MT_SIM_PLAN_PLAN_CSV_H
#define MT_SIM_PLAN_PLAN_CSV_H

#include <stdbool.h>
#include <stddef.h>

struct config;

/* torch's _ComputationType values the CSV holds: the compute ones, written stage, letter,
 * micro-batch ("0F1"), and FSDP's, written stage and name with no micro-batch ("0UNSHARD"). */
enum csv_verb {
    CSV_F,           /* forward */
    CSV_I,           /* input-gradient backward (the plan's B) */
    CSV_W,           /* weight-gradient backward */
    CSV_B,           /* whole backward (the plan's BW) */
    CSV_UNSHARD,     /* FSDP: the stage's parameters all-gathered */
    CSV_RESHARD,     /* FSDP: freed */
    CSV_REDUCE_GRAD, /* its gradients reduced over the data-parallel group */
    CSV_VERB__COUNT
};

static inline bool csv_verb_has_mb(enum csv_verb v)
{
    return v <= CSV_B;
}
/* "F", ..., "UNSHARD", "RESHARD", "REDUCE_GRAD": torch's spelling. */
const char *csv_verb_name(enum csv_verb v);
/* The verb spelled by s[0..n) after a stage index and, for a compute verb, the digits of its
 * micro-batch after it: *name_len the verb's length. False when none is (a FSDP name must end
 * the cell: "0UNSHARD3" is refused). */
bool csv_verb_parse(const char *s, size_t n, enum csv_verb *v, size_t *name_len);

/* One action of a row; a cell holds one, or two as torch's OVERLAP_F_B (a forward, then a
 * whole backward of the other part). */
struct csv_leaf {
    enum csv_verb verb;
    int stage, mb; /* mb -1 for FSDP's */
};
struct csv_cell {
    int n; /* 1, or 2 for "(0F3;3B1)OVERLAP_F_B" */
    struct csv_leaf leaf[2];
};

/* A rank's row of compute cells with FSDP's actions added where config c's ZeRO-2 / FSDP
 * runs them (ops_fsdp_of, docs/fsdp.md "For the torch schedule CSV"): *n updated, the row
 * returned (cells itself when c has none to add, else a new array and cells freed). */
struct csv_cell *csv_fsdp_row(const struct config *c, int microbatches, struct csv_cell *cells,
                              int *n);

#endif
