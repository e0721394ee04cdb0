/* traces/replay.h: a measured run replayed through the simulator (issue 19; the schedule half
 * of fidelity, as Lumos replays profiler traces): the plan simulated with the measured
 * duration of every instruction and every message instead of the cost model's, one used step
 * at a time, so that what is left between the replayed and the measured step time is the
 * schedule model's own error (who waits for whom, in which order), not the cost model's.
 *
 * What each instruction lasts in the replay, for a measured trace of ours (every instruction
 * of the device measured in the step):
 *   compute, OS   from the end of the device's previous instruction that is not a send to its
 *                 own end: its duration, the executor's time between instructions and the
 *                 posting of the sends before it (the simulator's sends hold no device time);
 *   AR            the same from the latest of its group's (sim/core/vpipe.h vpipe_ar_group)
 *                 arrivals, so that waiting for the other replicas of the plan is left to the
 *                 simulator and waiting for replicas outside it stays in the duration;
 *   SA, SG        the message's latency: for a message its receive waited for, from the
 *                 release of the send's device (the end of its instruction before the send)
 *                 to the receive's end, less a receive's own time c; for one that was there
 *                 before its receive began, the run's p2p latency L less c;
 *   RA, RG        c when it waited for its message, else its time from when both it and its
 *                 message were ready.
 * So replayed, a run is itself, step by step to rounding, unless the simulator waits for
 * something else than the executor did (a dependency, an order, a clock that put a receive
 * before its send): the replay checks the schedule model. The replay "with one latency" gives
 * every message L instead: its difference to the run is what the waits that ended late cost
 * (a waiting rank that naps between polls, exec/comm_mpi.c, or that the machine's other work
 * holds off its core). L is the median of replay_latency_samples (below); c the median time of
 * a receive whose message had surely arrived.
 *
 * A simulated trace (ours, `simulate --trace-out`) is replayed as it was simulated: each
 * instruction lasts its span, a send its transfer. A device with instructions not measured in
 * the step (a profiler trace mapped onto compute only) takes measured durations where there
 * are, L for its messages (from the gaps between the stages' compute), the simulation's
 * elsewhere, but no time for an OS or AR it did not measure (outside the span measured: torch's
 * optimizer step runs after its schedule). */
#ifndef MT_TRACES_REPLAY_H
#define MT_TRACES_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

struct plan;
struct cost_model;
struct sim_result;
struct align_result;
struct mt_err;

struct replay_dev {
    double finish_us;      /* replayed: the end of its last instruction (a send's: its message's
                            * arrival), mean over the steps */
    double meas_finish_us; /* measured: the same (NAN: nothing measured) */
    double err_pct;        /* signed (replayed - measured) / measured; NAN when not measured */
    double busy_us;        /* replayed compute, AR and OS time, mean over the steps */
};

struct replay_result {
    int steps;         /* steps replayed (the steps the alignment used) */
    double step_us;    /* replayed step time, mean over the steps (every message as it came) */
    double meas_us;    /* measured step time over the same steps */
    double err_pct;    /* signed */
    double *step_each; /* [steps] replayed step time of each */
    double lat_us;     /* L (NAN: no message measured) */
    int lat_samples;   /* messages L was taken from */
    double recv_us;    /* c */
    double one_lat_us; /* the replay with every message lasting L: the difference to the run is
                        * what the waits that ended late (naps, preemption) added */
    double one_lat_err_pct;
    int devices;
    struct replay_dev *dev; /* [devices] */
    int total;              /* plan_total */
    double *start_us, *end_us; /* [total] the replayed timeline (every message as it came):
                                * each instruction's start and end, us from its step's start,
                                * mean over the steps (as align_result's measured one), for
                                * drawing the replay under the plan (the explorer's row) */
};

/* Replays the steps of m (aligned with align_opts.per_step) on plan p. cost is the plan's
 * cost model (its memory model, and its latencies for what m did not measure); sim is the
 * plan's simulation with it (the durations of what was not measured). simulated_trace says
 * the trace is a simulation (its spans are the simulator's). Zeroes *out on failure. */
int replay_run(const struct plan *p, const struct cost_model *cost, const struct sim_result *sim,
               const struct align_result *m, bool simulated_trace, struct replay_result *out,
               struct mt_err *e);
void replay_fini(struct replay_result *r);

/* The one measure of a run's p2p latency (the replay's L; calibrate.h's p2p observations):
 * each message whose receiver was already waiting when its send's device was released (the
 * end of its instruction before the send: where the simulator starts the send), from that
 * release to the receive's end; in a trace without messages (a profiler trace of compute),
 * each forward (backward) whose device was idle when the forward (backward) it needs ended,
 * the gap between the two (*compute set). m must be aligned with per_step. Returns the
 * samples, *n of them (malloc'd; free()), followed by *nrecv samples of a receive's own time
 * (c: a receive whose message had surely arrived, from the end of the instruction before it
 * to its end). */
double *replay_latency_samples(const struct plan *p, const struct align_result *m, size_t *n,
                               bool *compute, size_t *nrecv);

#endif
