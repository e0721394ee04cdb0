/* tui/cmd_costs.h: the rows `simulate --costs` prints (tui/cmd_costs.c) and their JSON writer
 * (tui/cmd_costs_json.c, where cJSON may be included). */
#ifndef MT_TUI_CMD_COSTS_H
#define MT_TUI_CMD_COSTS_H

#include <stddef.h>

#include "model/ops.h"

struct stage_cost;

/* One row: an op of the stage, `count` times (the block's ops once per layer). */
struct costs_row {
    const struct op *op;
    double count;
    double flops, bytes, keep; /* forward FLOPs, forward HBM (or message) bytes, kept: x count */
    double us[PASS__COUNT];    /* x count */
};

const char *cmd_costs_site_name(enum op_site s);
void cmd_costs_shape(const struct op *o, char *buf, size_t n);
/* An array of stages; each call appends one; print writes it to stdout and frees it (0 ok). */
void *cmd_costs_json_new(void);
void cmd_costs_json_stage(void *arr, int i, const struct stage_cost *st,
                          const struct costs_row *rows, size_t n, double other_us);
int cmd_costs_json_print(void *arr);

#endif
