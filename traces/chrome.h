/* traces/chrome.h: Chrome Trace Event JSON (opens in Perfetto and chrome://tracing).
 * One "X" event per instruction: pid = device, tid 0 = compute, tid 1 = p2p, name = label,
 * args {op, mb, part, stage}; "C" counter events "memory" per device. Times are us; under
 * unit costs 1 t is written as 1000 us (1 ms) and otherData.time_unit says so. */
#ifndef MT_TRACES_CHROME_H
#define MT_TRACES_CHROME_H

#include <stddef.h>

struct plan;
struct sim_result;
struct mt_err;

/* Returns a malloc'd JSON document for a simulated plan. */
char *chrome_from_sim(const struct plan *p, const struct sim_result *r);
/* Writes it atomically to path. */
int chrome_write_sim(const char *path, const struct plan *p, const struct sim_result *r,
                     struct mt_err *e);

/* ---- measured runs (the executor, `mario-tui run`) -----------------------------------------
 * The same events with pid = MPI rank (= device when dp is 1; process names say device and
 * replica), args {op, mb, part, stage, peer, step}, "C" counters "memory" {bytes} per rank
 * and "loss" {loss} at each step's end on pid 0; otherData.source "measured", the losses,
 * whether the run completed and the plan's config (model/config.h config_to_cjson). tui/cmd_run.c copies exec/capture.h's records into these (the
 * two layers do not include each other). */
struct chrome_span {
    int rank, dev, dp_rank; /* dev: the plan's device that rank runs */
    int op; /* enum op; -1: a memory sample, -2: the end of a step, -3: a MoE all-to-all */
    int mb, part, stage, peer, step;
    double ts_us, dur_us;
    double value; /* memory sample: bytes held; end of step: mean loss; all-to-all: bytes sent */
};

struct chrome_run {
    const struct chrome_span *spans;
    size_t n;
    int ranks;
    const char *backend;
    const char *status; /* "complete", or what ended the run early */
};

char *chrome_from_measured(const struct plan *p, const struct chrome_run *r);
int chrome_write_measured(const char *path, const struct plan *p, const struct chrome_run *r,
                          struct mt_err *e);

#endif
