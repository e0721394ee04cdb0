/* sim/core/share.h: processor sharing (issue 19): ranks that outnumber the cores of their node
 * share them, a laptop's `run --np 8` on 4 cores. A rank computing while n ranks compute on C
 * cores progresses at min(1, C / n) of its speed; a waiting rank leaves its core (the
 * executor's waits nap, exec/comm_mpi.c). The simulator's timeline is kept as it is and its
 * durations stretched until they agree with it: each instruction that computes (FW, CFW, RC,
 * BW, B, W, AR, OS) lasts its cost over the harmonic mean of its speed during it, a fixed
 * point found by iterating the simulation (sim_run_durations). Where the calibration measured
 * them on runs of more ranks than cores (model/profile.h), the messages take that p2p latency
 * and receive time, and every instruction but a send that time between instructions (the MPI
 * library yields the core at each call when the ranks outnumber the cores, and the rank waits
 * to get it back). With every rank alone on its core nothing changes: the figures are
 * sim_run's to the bit. */
#ifndef MT_SIM_SHARE_H
#define MT_SIM_SHARE_H

#include <stdbool.h>

struct config;
struct cost_model;
struct plan;
struct sim_result;
struct mt_err;

/* The iterations at most before the last timeline is taken (see share_run). */
#define SHARE_MAX_ITER 64

/* Whether c's ranks (num_device: pp x dp, all on one node) outnumber its cores
 * (c->profile.cores: a CPU calibration's, or --cores; 0 = a core each). */
bool share_applies(const struct config *c);
/* sim_run_costs under processor sharing. */
int share_run(const struct plan *p, const struct cost_model *cost, struct sim_result *out,
              struct mt_err *e);

#endif
