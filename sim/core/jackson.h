/* sim/core/jackson.h: Jackson's preemptive schedule (Jackson 1955; Horn 1974): on one machine,
 * jobs released at r, taking p and followed by a tail q, preempted at will. Always running the
 * released job of largest tail gives the optimum of 1|r_j, pmtn|max(C_j + q_j), the device term
 * of the lower bound (sim/core/bound.h). */
#ifndef MT_SIM_CORE_JACKSON_H
#define MT_SIM_CORE_JACKSON_H

struct jackson_job {
    double r, p, q; /* release, processing time, tail */
};

/* max_j C_j + q_j of that schedule (0 for no job). jobs are sorted by r here, stably (equal r
 * keep their order); p is consumed. heap and tmp: room for n ints and n jobs. O(n log n). */
double jackson_preemptive(struct jackson_job *jobs, int n, int *heap, struct jackson_job *tmp);

#endif
