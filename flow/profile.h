/* flow/profile.h: the workflow of `mario-tui profile` (the paper's lightweight profiling, §5.2;
 * docs/calibration.md), below the command that prints it: which runs to make, each run's
 * plan, running it (`mario-tui run --trace-out`, a child process), what its trace gives the
 * fits (traces/calibrate.h), the device it ran on, and the self-check that simulates the runs
 * with the calibration made. `--from-trace` takes a trace's own plan (traces/import.h). */
#ifndef MT_FLOW_PROFILE_H
#define MT_FLOW_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

struct calibrate;
struct config;
struct import_info;
struct import_opts;
struct mapping;
struct microbench_progress;
struct mt_err;
struct nccl_tests_info;
struct nccl_tests_opts;
struct plan;
struct profile;
struct trace;

struct flow_profile_run {
    int layers, pp, mbs;
    bool ckpt;
    struct plan *plan;
    double step_us; /* measured */
    bool shared;    /* more ranks than cores: only its messages are taken (sim/core/share.h) */
};

/* The runs (xcalloc'd, *n of them; free each plan, then the array): every layer count per
 * stage x {1 device (two replicas), 2 devices} x micro-batch count x {plain, checkpointed},
 * the first *nmain; then, with shared_pp > 0, two runs (plain, checkpointed) of shared_pp
 * ranks, one layer each, the largest micro-batch count. */
struct flow_profile_run *flow_profile_runs(const int *layers, int nl, const int *mbs, int nm,
                                           int shared_pp, int *n, int *nmain);
/* Ranks of the runs that share cores: on a CPU of at most 8 cores, twice the cores (their
 * messages, sim/core/share.h); else 0 (none). */
int flow_profile_shared_ranks(const char *backend);

/* This executable's path into self (it runs the runs), and the folder of the runs' plans,
 * traces and logs into dir: keep (made if absent), else a new one under $TMPDIR. */
int flow_profile_setup(const char *keep, char *self, size_t self_n, char *dir, size_t dir_n,
                       struct mt_err *e);
/* Removes the nruns runs' files from dir, and dir. */
void flow_profile_cleanup(const char *dir, int nruns);

/* The plan of run r into r->plan: GPipe over r->pp devices, r->layers layers each, r->mbs
 * micro-batches, the odd ones' backwards split into B and W. */
int flow_profile_plan(const struct config *base, struct flow_profile_run *r, struct mt_err *e);
/* Runs `self run PLAN --steps N --backend B --trace-out TRACE` with its output in log;
 * MT_EDEVICE names the run's last words when it fails. */
int flow_profile_spawn(const char *self, const char *plan, const char *trace, const char *log,
                       const char *backend, int steps, struct mt_err *e);
/* What run r's trace gives: its observations into cal (the allreduce from every replica's
 * events where it has two), its measured step time into r->step_us. */
int flow_profile_measure(struct calibrate *cal, struct flow_profile_run *r,
                         const char *trace_path, struct mt_err *e);
/* --from-trace: the trace (read with map), the plan it ran under its own costs (the
 * calibration is what is being made) and its observations into cal. */
int flow_profile_from_trace(const char *const *files, int nfiles, const struct mapping *map,
                            const struct config *base, const struct import_opts *io,
                            struct calibrate *cal, struct trace **t, struct plan **p,
                            struct import_info *info, struct mt_err *e);

/* Run k of the runs, whole: its plan (flow_profile_plan) saved, run (flow_profile_spawn) and
 * measured into cal (flow_profile_measure), its files run-KK.plan.json, run-KK.trace.json and
 * run-KK.log in dir. Errors say which run. */
int flow_profile_do_run(const char *self, const char *dir, int k, const struct config *base,
                        struct flow_profile_run *r, const char *backend, int steps,
                        struct calibrate *cal, struct mt_err *e);
/* The calibration the runs made (calibrate_fit over base) into *prof, labelled: the backend,
 * the device it ran on, the cores a CPU's ranks shared (sim/core/share.h), the time. */
int flow_profile_fit(struct calibrate *cal, const struct config *base, const char *backend,
                     struct profile *prof, struct mt_err *e);
/* --from-trace: the calibration the trace made (calibrate_fit under p's config) into *prof,
 * labelled with the trace's backend and device (else "from FILE"), and the time; the
 * self-check's two step times: p simulated with it (*sim_us) and as the trace measured it,
 * the steps after the first (*meas_us; NAN when the trace does not align). */
int flow_profile_fit_trace(struct calibrate *cal, const struct plan *p, const struct trace *t,
                           const char *file, struct profile *prof, double *sim_us,
                           double *meas_us, struct mt_err *e);
/* What the calibration was measured on: the CPU's model and cores, or the GPU's name. */
void flow_profile_device_name(const char *backend, char *buf, size_t n);
/* The calibration's creation time, now, in UTC. */
void flow_profile_stamp(struct profile *prof);
/* Step time of plan p simulated with profile pr (NAN when it cannot be simulated). */
double flow_profile_predict(const struct plan *p, const struct profile *pr);
/* The self-check: MAPE of the step times of runs[0, nmain) simulated without and with prof
 * against their measures, and of the shared runs [nmain, n) with prof. */
void flow_profile_check(const struct flow_profile_run *runs, int n, int nmain,
                        const struct profile *prof, double *before, double *after,
                        double *shared);

/* ---- flow/profile_micro.c: micro-benchmark tables (model/microcal.h) --------------------- */
/* --from-nccl-tests: files[0..n) read (model/nccl_tests.h) into *prof, the tables alone
 * (enabled false, backend "nccl", the device of the first file's Rank lines); infos[0..n)
 * say what each file held (the caller nccl_tests_info_fini()s each, on success only). Two
 * rows of one key across files: MT_EINVAL naming both FILE:LINE. */
int flow_profile_from_nccl_tests(const char *const *files, int nfiles,
                                 const struct nccl_tests_opts *o, struct profile *prof,
                                 struct nccl_tests_info *infos, struct mt_err *e);

/* --micro: what to measure. */
struct flow_micro_opts {
    const char *backend;   /* cpu (sgemm, memcpy, MPI), cuda (cuBLAS, copy), nccl (+ NCCL) */
    const int *gemm_sizes; /* the GEMM grid: every (m, n, k) of these */
    int n_gemm_sizes;
    const int *ranks; /* the collectives' rank counts, one mpirun job each */
    int n_ranks;
    double min_coll_bytes, min_copy_bytes, max_bytes; /* sizes, x4 from the min */
    double min_s; /* seconds of repetitions a measurement, at least */
};

/* This machine measured into *prof (the tables alone), progress to p (may be NULL). */
int flow_profile_micro(const struct flow_micro_opts *o, const struct microbench_progress *p,
                       struct profile *prof, struct mt_err *e);
/* The collectives as one rank of the mpirun job flow_profile_micro starts (the command
 * under MPI): rank 0 writes its rows at out. */
int flow_profile_micro_rank(int *argc, char ***argv, const struct flow_micro_opts *o,
                            const char *out, struct mt_err *e);

#endif
