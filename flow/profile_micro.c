/* flow/profile_micro.c: the micro-benchmark calibrations of `mario-tui profile` (flow/profile.h):
 * --from-nccl-tests (files of nccl-tests' output, model/nccl_tests.h) and --micro (this
 * machine measured: exec/microbench.h; the collectives under mpirun, one job per rank count,
 * as `mario-tui run` launches its ranks: exec/launch.h). Both write the tables alone
 * (model/profile.h: enabled false, micro set). */
#include <config.h>
#include "flow/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/launch.h"
#include "exec/microbench.h"
#include "model/microcal.h"
#include "model/nccl_tests.h"
#include "model/profile.h"
#include "util/err.h"
#include "util/xalloc.h"

int flow_profile_from_nccl_tests(const char *const *files, int nfiles,
                                 const struct nccl_tests_opts *o, struct profile *prof,
                                 struct nccl_tests_info *infos, struct mt_err *e)
{
    struct microcal_builder *b = microcal_builder_new();
    int *file_of = NULL; /* each row's file, for a duplicate across files */
    size_t nrows = 0;
    int rc = MT_OK, nread = 0;
    for (int i = 0; i < nfiles && rc == MT_OK; i++) {
        rc = nccl_tests_load(files[i], o, b, &infos[i], e);
        if (rc != MT_OK)
            break;
        nread++;
        file_of = xreallocarray(file_of, nrows + (size_t)infos[i].rows, sizeof *file_of);
        for (int r = 0; r < infos[i].rows; r++)
            file_of[nrows++] = i;
    }
    memset(prof, 0, sizeof *prof);
    if (rc == MT_OK) {
        struct microcal_fault f = {0};
        rc = microcal_build(b, &prof->micro, &f, e);
        if (rc != MT_OK && f.kind != NULL && f.first != SIZE_MAX && f.row < nrows) {
            /* rows are numbered across files: find each one's file and line */
            size_t first_of[2] = {f.first, f.row};
            int fi[2], line[2];
            for (int k = 0; k < 2; k++) {
                fi[k] = file_of[first_of[k]];
                size_t before = 0;
                for (int j = 0; j < fi[k]; j++)
                    before += (size_t)infos[j].rows;
                line[k] = infos[fi[k]].row_lines[first_of[k] - before];
            }
            rc = err_set(e, MT_EINVAL,
                         "%s:%d: the same collective, link, size and ranks as %s:%d: one "
                         "measurement of each, please",
                         files[fi[1]], line[1], files[fi[0]], line[0]);
        }
    }
    free(file_of);
    microcal_builder_free(b);
    if (rc != MT_OK) {
        for (int i = 0; i < nread; i++)
            nccl_tests_info_fini(&infos[i]);
        memset(prof, 0, sizeof *prof);
        return rc;
    }
    snprintf(prof->backend, sizeof prof->backend, "nccl");
    if (infos[0].device[0] != '\0')
        snprintf(prof->device, sizeof prof->device, "%s", infos[0].device);
    else
        snprintf(prof->device, sizeof prof->device, "from %s", files[0]);
    flow_profile_stamp(prof);
    return MT_OK;
}

int flow_profile_micro_rank(int *argc, char ***argv, const struct flow_micro_opts *o,
                            const char *out, struct mt_err *e)
{
    return microbench_mpi_rank(argc, argv, strcmp(o->backend, "nccl") == 0 ? "nccl" : "mpi",
                               o->min_coll_bytes, o->max_bytes, o->min_s, out, e);
}

/* One mpirun job of np ranks running `SELF profile --micro ... --out FILE`; its rows into b. */
static int micro_mpi_job(const struct flow_micro_opts *o, int np, struct microcal_builder *b,
                         struct mt_err *e)
{
    char *spool = NULL;
    TRY(launch_spool_make(&spool, e));
    char out[1200], maxb[32], minb[32], secs[32];
    snprintf(out, sizeof out, "%s/micro-%d.json", spool, np);
    snprintf(maxb, sizeof maxb, "%.0f", o->max_bytes);
    snprintf(minb, sizeof minb, "%.0f", o->min_coll_bytes);
    snprintf(secs, sizeof secs, "%g", o->min_s);
    char *args[] = {"profile", "--micro", "--backend", (char *)o->backend, "--max-bytes", maxb,
                    "--min-bytes", minb, "--seconds", secs, "--out", out};
    int status = 0;
    int rc = launch_mpirun(np, (int)(sizeof args / sizeof args[0]), args, spool, false, &status, e);
    if (rc == MT_OK && status != 0)
        rc = err_set(e, MT_EDEVICE, "the %d-rank collectives (mpirun -np %d) exited with %d", np,
                     np, status);
    struct profile part;
    if (rc == MT_OK)
        rc = profile_load(out, &part, e);
    if (rc == MT_OK)
        microcal_add_table(b, part.micro);
    unlink(out);
    launch_spool_remove(spool, np);
    free(spool);
    return rc;
}

int flow_profile_micro(const struct flow_micro_opts *o, const struct microbench_progress *p,
                       struct profile *prof, struct mt_err *e)
{
    struct microcal_builder *b = microcal_builder_new();
    memset(prof, 0, sizeof *prof);
    int rc;
    bool gpu = strcmp(o->backend, "cpu") != 0;
    if (gpu)
        rc = microbench_cuda(o->gemm_sizes, o->n_gemm_sizes, o->min_copy_bytes, o->max_bytes,
                             o->min_s, p, b, prof->device, (int)sizeof prof->device, e);
    else {
        rc = microbench_sgemm(o->gemm_sizes, o->n_gemm_sizes, o->min_s, p, b, e);
        if (rc == MT_OK)
            rc = microbench_copy(o->min_copy_bytes, o->max_bytes, o->min_s, p, b, e);
        flow_profile_device_name("cpu", prof->device, sizeof prof->device);
    }
    bool colls = strcmp(o->backend, "cuda") != 0; /* cpu: MPI; nccl: NCCL */
    for (int i = 0; colls && i < o->n_ranks && rc == MT_OK; i++) {
        if (p != NULL && p->fn != NULL) {
            char what[64];
            snprintf(what, sizeof what, "%s collectives on %d ranks (mpirun)",
                     gpu ? "NCCL" : "MPI", o->ranks[i]);
            p->fn(p->ctx, what, i, o->n_ranks);
        }
        rc = micro_mpi_job(o, o->ranks[i], b, e);
    }
    if (rc == MT_OK)
        rc = microcal_build(b, &prof->micro, NULL, e);
    microcal_builder_free(b);
    if (rc != MT_OK) {
        memset(prof, 0, sizeof *prof);
        return rc;
    }
    snprintf(prof->backend, sizeof prof->backend, "%s", o->backend);
    flow_profile_stamp(prof);
    return MT_OK;
}
