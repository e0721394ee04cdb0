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

bool mem_list_has_copy(const struct instr *list, int len)
{
    for (int i = 0; i < len; i++)
        if (plan_op_is_copy(list[i].op))
            return true;
    return false;
}

/* The copy events of one list in time order: each lane runs its copies one at a time in list
 * order, so OF ends and RL starts each come in list order already; two cursors merge them. */
struct mem_copies {
    const struct cost_model *cost;
    const struct instr *list;
    const double *start, *end;
    int len, of, rl; /* the next OF and RL not yet applied */
};

static int mem_copies_next(const struct instr *list, int len, int i, enum op op)
{
    while (i < len && list[i].op != op)
        i++;
    return i;
}

/* Applies every copy event at a time before t (at or before t when inclusive). */
static void mem_copies_flush(struct mem_copies *q, double t, bool inclusive, struct mem_walk *w,
                             struct mem_curve *c)
{
    while (q->of < q->len || q->rl < q->len) {
        double t_of = q->of < q->len ? q->end[q->of] : INFINITY;
        double t_rl = q->rl < q->len ? q->start[q->rl] : INFINITY;
        bool rl = t_rl <= t_of; /* a take before a release at the same time: the larger peak */
        double at = rl ? t_rl : t_of;
        if (!(inclusive ? at <= t : at < t))
            return;
        int i = rl ? q->rl : q->of;
        double act = q->cost->stage[q->list[i].stage].act;
        if (rl) {
            w->cur += act;
            if (w->cur > w->peak)
                w->peak = w->cur;
            if (w->cur > w->top)
                w->top = w->cur;
            q->rl = mem_copies_next(q->list, q->len, i + 1, OP_RL);
        } else {
            w->cur -= act;
            q->of = mem_copies_next(q->list, q->len, i + 1, OP_OF);
        }
        c->t[c->n] = at;
        c->mem[c->n++] = c->static_mem + w->cur;
    }
}

void mem_device_walk_timed(const struct cost_model *cost, const struct instr *list, int len,
                           const double *start, const double *end, const struct mem_step *steps,
                           struct mem_walk *w, struct mem_curve *c, double *mem_after)
{
    struct mem_copies q = {cost, list, start, end, len, mem_copies_next(list, len, 0, OP_OF),
                           mem_copies_next(list, len, 0, OP_RL)};
    double s = c->static_mem;
    for (int i = 0; i < len; i++) {
        const struct instr *in = &list[i];
        struct mem_step m = steps[i];
        if (plan_op_is_copy(in->op)) { /* walked at its time; a reap only when it is last */
            if (m.reap != 0) {
                mem_copies_flush(&q, INFINITY, true, w, c);
                w->cur -= m.reap;
                c->t[c->n] = c->n > 0 && c->t[c->n - 1] > end[i] ? c->t[c->n - 1] : end[i];
                c->mem[c->n++] = s + w->cur;
            }
            mem_after[i] = s + w->cur;
            continue;
        }
        mem_copies_flush(&q, start[i], true, w, c);
        w->top = mem_max(w->top, mem_transient(cost, in, w->cur, m));
        if (m.take != 0) {
            w->cur += m.take;
            if (w->cur > w->peak)
                w->peak = w->cur;
            c->t[c->n] = start[i];
            c->mem[c->n++] = s + w->cur;
        }
        mem_copies_flush(&q, end[i], false, w, c);
        if (m.give != 0) {
            w->cur -= m.give;
            c->t[c->n] = end[i];
            c->mem[c->n++] = s + w->cur;
        }
        if (m.reap != 0) {
            w->cur -= m.reap;
            c->t[c->n] = end[i];
            c->mem[c->n++] = s + w->cur;
        }
        mem_after[i] = s + w->cur;
        if (fabs(w->cur) < 1e-9 * (w->peak > 1 ? w->peak : 1))
            w->cur = 0;
    }
    mem_copies_flush(&q, INFINITY, true, w, c);
}

double mem_device_host_peak(const struct cost_model *cost, const struct instr *list, int len,
                            const double *start, const double *end)
{
    int of = mem_copies_next(list, len, 0, OP_OF), rl = mem_copies_next(list, len, 0, OP_RL);
    double cur = 0, peak = 0;
    while (of < len) { /* an OF's take before an RL's give at the same time */
        if (rl < len && end[rl] < start[of]) {
            cur -= cost->stage[list[rl].stage].act;
            rl = mem_copies_next(list, len, rl + 1, OP_RL);
            continue;
        }
        cur += cost->stage[list[of].stage].act;
        peak = mem_max(peak, cur);
        of = mem_copies_next(list, len, of + 1, OP_OF);
    }
    return peak;
}
