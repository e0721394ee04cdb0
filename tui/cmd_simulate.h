/* tui/cmd_simulate.h: what `mario-tui simulate` prints, apart from the command itself
 * (tui/cmd_simulate.c reads the flags, builds and runs; tui/cmd_simulate_print.c prints). */
#ifndef MT_TUI_CMD_SIMULATE_H
#define MT_TUI_CMD_SIMULATE_H

#include <stddef.h>

struct bound_result;
struct plan;
struct sim_result;

/* v as simulate prints memory: bytes with a unit, or M_θ under unit costs. */
void simulate_mem(const struct sim_result *r, double v, char *buf, size_t n);
/* The header, a row per device, the step time and throughput, the lower bound b (may be
 * NULL) and its gap, utilization and for async plans staleness and stashing. */
void simulate_print_table(const struct plan *p, const struct sim_result *r,
                          const struct bound_result *b);

#endif
