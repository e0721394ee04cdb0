/* sim/plan/validate.h: plan validation. Every (mb, stage) has exactly one forward and one
 * backward, on the device the virtual pipeline places it, in program order forward ->
 * recompute -> backward; sends and receives pair up; AR/OS follow the backwards of their
 * stage; and the plan runs to the end (no deadlock, in the configured send mode). */
#ifndef MT_SIM_VALIDATE_H
#define MT_SIM_VALIDATE_H

struct plan;
struct mt_err;
struct sim_result;

/* MT_OK or MT_EINFEASIBLE with a message naming the device and instruction at fault. */
int validate_plan(const struct plan *p, struct mt_err *e);
/* validate_plan that also hands back the simulation it ran, so a caller that needs both
 * simulates once. out is zeroed on failure; the caller sim_result_fini()s it. */
int validate_plan_sim(const struct plan *p, struct sim_result *out, struct mt_err *e);
/* validate_plan of a plan that came from input (a plan file, a trace, torch's CSV): a plan that
 * cannot run is then bad input, MT_EINVAL (exit 2), where a plan the tool made that fails is
 * its own failure (MT_EINFEASIBLE, exit 1). The one place this rule is decided. */
int validate_plan_input(const struct plan *p, struct mt_err *e);

#endif
