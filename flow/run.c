#include <config.h>

#include "flow/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/backend.h"
#include "exec/capture.h"
#include "exec/input_aware.h"
#include "exec/interp.h"
#include "exec/launch.h"
#include "exec/postmortem.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/seqlen.h"
#include "sim/core/recv_order.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "traces/chrome.h"
#include "util/err.h"
#include "util/xalloc.h"

struct comm_layout flow_run_layout(const struct plan *p, bool **holds, bool **talks)
{
    const struct plan_geom *g = plan_geom(p);
    int pp = g->devices;
    *holds = xcalloc((size_t)pp * g->stages, sizeof **holds);
    for (int d = 0; d < pp; d++)
        for (int part = 0; part < g->parts; part++)
            (*holds)[d * g->stages + vpipe_stage(g, d, 0, part)] = true;
    *talks = xcalloc((size_t)pp * pp, sizeof **talks);
    for (int d = 0; d < pp; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (vpipe_is_send(in->op))
                (*talks)[d * pp + in->peer] = true;
        }
    return (struct comm_layout){pp, plan_config(p)->cluster.dp, g->stages, *holds, *talks};
}

int flow_rank_start(struct plan *p, const char *backend, const struct interp_opts *o,
                    int *argc, char ***argv, struct flow_rank *r)
{
    struct mt_err e = {0};
    memset(r, 0, sizeof *r);
    int rank = 0, size = 0;
    if (launch_mpi_init(argc, argv, &rank, &size, &e) != MT_OK) {
        fprintf(stderr, "mario-tui run: %s\n", e.msg);
        return err_exit_status(e.code);
    }
    r->rank = rank;
    r->size = size;
    const struct plan_geom *g = plan_geom(p);
    int pp = g->devices;
    /* Every rank checks, and all compare what they were given (a fingerprint of the plan
     * and options), so a mismatch anywhere is refused everywhere before any compute. */
    int crc = interp_check(p, size, &e);
    if (crc == MT_OK)
        crc = interp_check_opts(p, o, &e);
    struct mt_err ae = {0};
    int arc = launch_agree(interp_fingerprint(p, o, backend), crc, &ae);
    if (crc != MT_OK || arc != MT_OK) {
        if (crc != MT_OK)
            fprintf(stderr, "mario-tui run: rank %d: %s\n", rank, e.msg);
        else if (rank == 0)
            fprintf(stderr, "mario-tui run: %s\n", ae.msg);
        launch_mpi_finalize();
        return 2;
    }
    const struct backend_ops *b = NULL;
    int rc = backend_find(backend, &b, &e);
    if (rc == MT_OK)
        rc = b->open(launch_local_rank(), &e);
    r->b = b;
    if (rc != MT_OK) {
        fprintf(stderr, "mario-tui run: rank %d: %s\n", rank, e.msg);
        launch_abort(err_exit_status(rc));
    }
    bool *holds, *talks;
    struct comm_layout layout = flow_run_layout(p, &holds, &talks);
    struct comm *cm = NULL;
    enum comm_kind kind = strcmp(backend, "nccl") == 0 ? COMM_NCCL : COMM_MPI;
    rc = comm_open(kind, &layout, o->timeout_s, &cm, &e);
    free(holds);
    free(talks);
    if (rc != MT_OK) {
        fprintf(stderr, "mario-tui run: rank %d: %s\n", rank, e.msg);
        launch_abort(1);
    }
    const char *spool = getenv(LAUNCH_ENV_SPOOL);
    struct capture *cap = NULL;
    size_t hint = (size_t)(o->steps / interp_plan_iterations(p)) *
                  (size_t)(plan_len(p, rank % pp) * 6 + 16);
    rc = capture_open(spool && *spool ? spool : NULL, rank, rank % pp, rank / pp, hint, &cap, &e);
    if (rc != MT_OK) {
        fprintf(stderr, "mario-tui run: rank %d: %s\n", rank, e.msg);
        launch_abort(1);
    }
    capture_watch_signals(cap);
    r->cm = cm;
    r->cap = cap;
    r->launched = spool && *spool;
    return 0;
}

void flow_rank_end(struct flow_rank *r)
{
    capture_close(r->cap, false);
    comm_close(r->cm);
    r->b->close();
    launch_mpi_finalize();
}

/* exec/capture.h records -> traces/chrome.h spans (the layers do not include each other). */
static struct chrome_span *run_spans(const struct capture_rec *rec, size_t n, int pp)
{
    struct chrome_span *s = xcalloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        const struct capture_rec *r = &rec[i];
        s[i] = (struct chrome_span){
            .rank = r->rank,
            .dev = r->rank % pp,
            .dp_rank = r->rank / pp,
            .op = r->kind == CAPTURE_INSTR ? r->op
                  : r->kind == CAPTURE_MEM ? -1
                  : r->kind == CAPTURE_A2A ? -3
                                           : -2,
            .mb = r->mb,
            .part = r->part,
            .stage = r->stage,
            .peer = r->peer,
            .step = r->step,
            .ts_us = r->t0_us,
            .dur_us = r->t1_us - r->t0_us,
            .value = r->value,
        };
    }
    return s;
}

int flow_run_write_trace(const char *path, const struct plan *p, const struct capture_rec *rec,
                         size_t n, int ranks, const char *backend, const char *status,
                         struct mt_err *e)
{
    struct chrome_span *spans = run_spans(rec, n, plan_devices(p));
    struct chrome_run cr = {spans, n, ranks, backend, status};
    int rc = chrome_write_measured(path, p, &cr, e);
    free(spans);
    return rc;
}

/* The simulator's prediction with the executor's byte counts; NULL when it cannot run. */
struct sim_result *flow_run_simulate(const struct plan *p)
{
    struct cost_model cost;
    struct mt_err e = {0};
    if (interp_costs(p, &cost, &e) != MT_OK)
        return NULL;
    struct sim_result *r = xcalloc(1, sizeof *r);
    int rc = sim_run_costs(p, &cost, r, &e);
    cost_model_fini(&cost);
    if (rc != MT_OK) {
        free(r);
        return NULL;
    }
    return r;
}

/* After a failed job: prints the post-mortem (exec/postmortem.h) of the ranks' spools, and
 * merges their records into a partial trace unless rank 0 wrote the trace itself (every rank
 * ended on its own). */
int flow_run_after_failure(const struct plan *p, const char *trace_out, const char *backend,
                           int np, const char *spool, int status)
{
    struct capture_spool *sp = xcalloc((size_t)np, sizeof *sp);
    struct mt_err e = {0};
    size_t total = 0;
    for (int r = 0; r < np; r++) {
        if (capture_spool_read(spool, r, &sp[r], &e) != MT_OK) {
            fprintf(stderr, "mario-tui run: %s\n", e.msg);
            err_clear(&e);
        }
        total += sp[r].n;
    }
    struct postmortem pm;
    postmortem_explain(sp, np, status, &pm);
    for (int i = 0; i < pm.n; i++)
        fprintf(stderr, "mario-tui run: %s\n", pm.line[i]);
    if (trace_out && !pm.all_ended) {
        struct capture_rec *rec = xcalloc(total ? total : 1, sizeof *rec);
        size_t k = 0;
        for (int r = 0; r < np; r++) {
            if (sp[r].n)
                memcpy(rec + k, sp[r].rec, sp[r].n * sizeof *rec);
            k += sp[r].n;
        }
        char why[700];
        snprintf(why, sizeof why, "partial: %s", pm.verdicts ? pm.line[0] : "the job failed");
        if (flow_run_write_trace(trace_out, p, rec, k, np, backend, why, &e) != MT_OK)
            fprintf(stderr, "mario-tui run: %s\n", e.msg);
        else
            fprintf(stderr, "mario-tui run: partial trace written to %s (%zu records)\n",
                    trace_out, k);
        free(rec);
    }
    postmortem_fini(&pm);
    for (int r = 0; r < np; r++)
        capture_spool_fini(&sp[r]);
    free(sp);
    return status == 2 ? 2 : 1;
}


void flow_rank_gather(struct flow_rank *r, int rc, const struct mt_err *e,
                      const struct interp_result *res, struct capture_rec **all, size_t *nall)
{
    if (rc != MT_OK && !res->failed_together) {
        /* This rank's failure alone: the others may be waiting for it. End the job. */
        capture_set_state(r->cap, CAPTURE_FAILED, e->msg);
        if (!r->launched)
            fprintf(stderr, "mario-tui run: %s\n", e->msg);
        launch_abort(1);
    }
    if (rc != MT_OK)
        capture_set_state(r->cap, CAPTURE_FAILED, e->msg);
    *all = NULL;
    *nall = 0;
    struct mt_err ge = {0};
    if (capture_gather(r->cap, r->cm, all, nall, &ge) != MT_OK) {
        capture_set_state(r->cap, CAPTURE_FAILED, ge.msg);
        if (!r->launched)
            fprintf(stderr, "mario-tui run: rank %d: %s\n", r->rank, ge.msg);
        launch_abort(1);
    }
}

void flow_rank_done(struct flow_rank *r, int rc)
{
    if (rc == MT_OK)
        capture_set_state(r->cap, CAPTURE_DONE, NULL);
    flow_rank_end(r);
}

int flow_run_launch(const struct plan *p, int np, const char *backend,
                    const struct interp_opts *o, const char *trace_out, bool tty, int argc,
                    char **argv, int *status, struct mt_err *e)
{
    *status = 0;
    if (np <= 0)
        np = plan_devices(p) * plan_config(p)->cluster.dp;
    if (interp_check(p, np, e) != MT_OK || interp_check_opts(p, o, e) != MT_OK ||
        (strcmp(backend, "nccl") == 0 && interp_check_nccl(p, e) != MT_OK)) {
        *status = 2;
        return e->code ? e->code : MT_EINVAL;
    }
    const struct backend_ops *b = NULL;
    TRY(backend_find(backend, &b, e));
    if (interp_check_backend(p, b, e) != MT_OK) {
        *status = 2;
        return e->code;
    }
    char *spool = NULL;
    TRY(launch_spool_make(&spool, e));
    int rc = launch_mpirun(np, argc, argv, spool, tty, status, e);
    if (rc == MT_OK && *status != 0)
        *status = flow_run_after_failure(p, trace_out, backend, np, spool, *status);
    launch_spool_remove(spool, np);
    free(spool);
    return rc;
}

int flow_rank_run(struct flow_rank *r, const struct plan *p, struct interp_opts *o,
                  struct input_aware *ia, interp_progress_fn progress, void *ctx,
                  struct interp_result *res, struct input_aware_report *ir, bool *have_ir,
                  struct mt_err *e)
{
    struct interp_stream stream;
    if (ia != NULL) {
        input_aware_stream(ia, r->cm, &stream);
        o->stream = &stream;
    }
    int rc = interp_run(p, r->b, r->cm, r->cap, o, progress, ctx, res, e);
    o->stream = NULL; /* it lived here */
    if (rc == MT_OK && ia != NULL) {
        /* collective: every rank got here */
        rc = input_aware_gather(ia, r->cm, ir, e);
        *have_ir = rc == MT_OK && ir->dev != NULL;
    }
    return rc;
}

int flow_rank_trace(const char *path, const struct plan *p, const struct capture_rec *rec,
                    size_t n, int ranks, const char *backend, const char *status, char *note,
                    size_t note_n)
{
    struct mt_err te = {0};
    if (flow_run_write_trace(path, p, rec, n, ranks, backend, status, &te) != MT_OK) {
        fprintf(stderr, "mario-tui run: %s\n", te.msg);
        return te.code;
    }
    snprintf(note, note_n, "trace: %s (%zu records from %d ranks)", path, n, ranks);
    return MT_OK;
}

int flow_run_inputs(struct config *c, const char *config_path, const char *lengths,
                    bool steps_given,
                    struct interp_opts *o, struct input_aware_opts *iao,
                    struct seqlen_sample *smp, struct input_aware **ia, struct plan **out,
                    struct mt_err *e)
{
    *out = NULL;
    TRY(seqlen_config_use_file(c, lengths, smp, e));
    iao->steps = steps_given ? o->steps : smp->n;
    o->steps = iao->steps;
    int rc = input_aware_new(c, smp, iao, ia, e);
    if (rc != MT_OK && config_path != NULL)
        err_wrap(e, "%s", config_path);
    TRY(rc);
    *out = plan_clone(input_aware_plan(*ia));
    return MT_OK;
}

int flow_run_prepare(struct plan *p, const char *backend, struct mt_err *e)
{
    return strcmp(backend, "nccl") == 0 ? plan_match_receives(p, e) : 0;
}
