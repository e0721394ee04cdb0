/* traces/accuracy.h: how far a simulation is from a measured run (the paper's §6.6 accuracy
 * study): step-time error, the mean absolute percentage error (MAPE) of instruction times per
 * op and per device, peak memory per device, the instructions furthest off; and the MAPE and
 * Kendall tau used to score a set of configurations.
 *
 * Scored instructions are those whose duration means the same on both sides: compute (FW,
 * CFW, RC, BW, B, W), AR and OS. A measured SA/SG lasts as long as posting the send, RA/RG as
 * long as the wait, while the simulator's SA/SG last the transfer: they are listed, not
 * scored. Errors are signed (simulated - measured) / measured; MAPEs average their sizes. */
#ifndef MT_TRACES_ACCURACY_H
#define MT_TRACES_ACCURACY_H

#include <stdbool.h>

#include "sim/plan/plan.h"

struct sim_result;
struct align_result;
struct mt_err;

#define ACCURACY_WORST 10

struct accuracy_op {
    int n;                  /* instructions measured */
    double sim_us, meas_us; /* mean durations */
    double mape_pct;        /* NAN when not scored or none measured */
};

struct accuracy_dev {
    int n;                            /* scored instructions measured */
    double mape_pct;                  /* NAN when none */
    double busy_sim_us, busy_meas_us; /* compute + AR + OS time over the measured ones */
    double peak_sim, peak_meas;       /* bytes (M_theta units in unit mode); peak_meas NAN: none */
    double peak_err_pct;              /* NAN when not measured */
};

struct accuracy_worst {
    int id; /* plan id */
    double sim_us, meas_us;
    double err_pct;
};

struct accuracy {
    double time_scale; /* us per simulated time unit: 1, or 1000 for unit costs */
    double step_sim_us, step_meas_us;
    double step_err_pct;     /* signed */
    double time_mape_pct;    /* over every scored instruction measured; NAN: none */
    double peak_mape_pct;    /* over the devices with memory samples; NAN: none */
    double peak_max_err_pct; /* the largest |error| of a device; NAN: none */
    struct accuracy_op op[OP__COUNT];
    int devices;
    struct accuracy_dev *dev; /* [devices] */
    int n_worst;              /* by |duration error| in us, largest first */
    struct accuracy_worst worst[ACCURACY_WORST];
};

/* Compares a plan's simulation with its measured alignment (both over the same plan). */
void accuracy_compute(const struct plan *p, const struct sim_result *sim,
                      const struct align_result *m, struct accuracy *out);
void accuracy_fini(struct accuracy *a);
/* Whether op's durations are scored (see above). */
bool accuracy_scored(enum op op);

/* Mean of |pred - actual| / actual over the pairs with actual > 0, in %; NAN when none. */
double accuracy_mape(const double *pred, const double *actual, int n);
/* Kendall's tau-b between two rankings of n items (ties counted as neither); NAN if n < 2 or
 * one side is constant. */
double accuracy_kendall_tau(const double *a, const double *b, int n);

/* What `compare --json` reports: the simulated side (its plan, the name it came from, whether
 * a simulated trace stood for it, unit costs), the measured files and what the trace says of
 * itself, the alignment and the figures; gate < 0 when no --gate was given. */
struct trace_info;
struct replay_result;
/* A MoE plan's token all-to-alls per step and device (flow/compare.h flow_compare_a2a): the
 * simulation's priced exchanges beside a trace's "ep_a2a" events; devices 0: none. */
#define ACCURACY_A2A_MAX_DEVICES 64
struct accuracy_a2a {
    int devices;
    int steps; /* steps of the trace summed */
    double sim_us[ACCURACY_A2A_MAX_DEVICES], meas_us[ACCURACY_A2A_MAX_DEVICES];
    double sim_bytes[ACCURACY_A2A_MAX_DEVICES], meas_bytes[ACCURACY_A2A_MAX_DEVICES];
    int exchanges[ACCURACY_A2A_MAX_DEVICES]; /* measured, per step */
};

struct accuracy_report {
    const struct plan *plan;
    const char *sim_name; /* NULL: the config's source */
    bool from_trace, unit;
    const char *const *files;
    int nfiles;
    const struct trace_info *info;
    const struct align_result *m;
    const struct accuracy *a;
    const struct replay_result *replay; /* NULL: not replayed */
    int top;
    double gate;
    int gate_failed;
    const struct accuracy_a2a *a2a; /* NULL or devices 0: no "all_to_all" */
};
/* The report as JSON text, malloc'd. */
char *accuracy_report_json(const struct accuracy_report *r);

/* The signed error of a prediction against a measurement, as compare prints it (and the
 * explorer): 100 (predicted - measured) / measured; NAN when nothing was measured. */
static inline double accuracy_error_pct(double predicted, double measured)
{
    return measured > 0 ? 100 * (predicted - measured) / measured : 0.0 / 0.0;
}

#endif
