/* sim/core/memory.c: the list walks of the memory model (sim/core/memory.h holds the per-instruction
 * rules). */
#include <config.h>
#include "sim/core/memory.h"

#include <stdlib.h>

#include "util/xalloc.h"

void mem_device_steps(const struct cost_model *cost, const struct instr *list, int len,
                      struct mem_step *out)
{
    double pending = 0;
    for (int i = 0; i < len; i++)
        out[i] = mem_step_next(cost, &list[i], &pending);
    if (len > 0)
        out[len - 1].reap += pending;
}

void mem_device_take_give(const struct cost_model *cost, const struct instr *list, int len,
                          double *take, double *give)
{
    struct mem_step *m = xmalloc(((size_t)len + 1) * sizeof *m);
    mem_device_steps(cost, list, len, m);
    for (int i = 0; i < len; i++) {
        take[i] = m[i].take;
        give[i] = m[i].give + m[i].reap;
    }
    free(m);
}

double mem_device_peak(const struct cost_model *cost, const struct instr *list, int len)
{
    struct mem_step *steps = xmalloc(((size_t)len + 1) * sizeof *steps);
    mem_device_steps(cost, list, len, steps);
    double cur = 0, top = 0;
    for (int i = 0; i < len; i++) {
        top = mem_max(top, mem_transient(cost, &list[i], cur, steps[i]));
        cur += steps[i].take;
        top = mem_max(top, cur);
        cur -= steps[i].give + steps[i].reap;
    }
    free(steps);
    return top;
}
