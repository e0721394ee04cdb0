/* tui/cmd_profile_micro.c: the micro-benchmark modes of `mario-tui profile` (tui/cmd_profile.c
 * parses their flags): --from-nccl-tests FILE... and --micro, which write a calibration of
 * tables alone (model/microcal.h) and print them. Apart from tui/cmd_profile.c because the op
 * kinds of model/ops.h and sim/'s instruction kinds cannot share a file. */
#include <config.h>
#include "tui/cmd_profile_micro.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/launch.h"
#include "exec/microbench.h"
#include "flow/profile.h"
#include "model/microcal.h"
#include "model/nccl_tests.h"
#include "model/profile.h"
#include "tui/cmd.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* --json: the calibration file as written. */
static void profile_print_file(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (str_read_file(path, PROFILE_MAX_BYTES, &text, &len, NULL) == MT_OK)
        fwrite(text, 1, len, stdout);
    free(text);
}

/* "512", "4K", "64M", "2G" (binary units) */
static const char *profile_size_label(double bytes, char *buf, size_t n)
{
    static const char *const units[] = {"", "K", "M", "G", "T"};
    int u = 0;
    while (u < 4 && bytes >= 1024) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, n, "%.4g%s", bytes, units[u]);
    return buf;
}

/* The tables, as rows (GEMM, copies) and one line of busbw by size per collective group. */
static void profile_print_micro(const struct microcal *t)
{
    char a[16];
    if (t->n_gemm > 0) {
        printf("  %-5s %7s %7s %7s %12s\n", "GEMM", "m", "n", "k", "GFLOP/s");
        for (size_t i = 0; i < t->n_gemm; i++) {
            const struct microcal_gemm *g = &t->gemm[i];
            printf("  %-5s %7.0f %7.0f %7.0f %12.2f\n", op_dtype_name(g->dtype), g->m, g->n, g->k,
                   g->tflops * 1e3);
        }
    }
    if (t->n_attn > 0)
        printf("  attention: %zu rows\n", t->n_attn);
    if (t->n_hbm > 0) {
        printf("  %-5s %21s %12s\n", "copy", "bytes (read+written)", "GB/s");
        for (size_t i = 0; i < t->n_hbm; i++)
            printf("  %-5s %21s %12.2f\n", "", profile_size_label(t->hbm[i].bytes, a, sizeof a),
                   t->hbm[i].gbps);
    }
    /* rows are sorted by (collective, link, bytes, ranks): a group's are picked out */
    for (size_t i = 0; i < t->n_coll; i++) {
        const struct microcal_coll *c = &t->coll[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->coll[j].coll == c->coll && t->coll[j].link == c->link &&
                   t->coll[j].ranks == c->ranks;
        if (seen)
            continue;
        printf("  %s, %d ranks (%s), busbw GB/s by size:", op_coll_name(c->coll), c->ranks,
               op_link_name(c->link));
        int k = 0;
        for (size_t j = i; j < t->n_coll; j++)
            if (t->coll[j].coll == c->coll && t->coll[j].link == c->link &&
                t->coll[j].ranks == c->ranks)
                printf("%s%s %.3g", k++ % 6 == 0 ? "\n    " : "   ",
                       profile_size_label(t->coll[j].bytes, a, sizeof a), t->coll[j].busbw_gbps);
        printf("\n");
    }
}

/* --from-nccl-tests FILE...: the collective rows of nccl-tests' outputs. */
int cmd_profile_from_nccl_tests(const struct cmd_profile_micro *o, const char *const *files,
                                   int nfiles)
{
    if (nfiles < 1)
        return cmd_usage_error("profile", "--from-nccl-tests needs the files of nccl-tests' "
                                          "output");
    struct mt_err e = {0};
    struct nccl_tests_opts no = {o->coll, o->link, o->in_place};
    struct nccl_tests_info *infos = xcalloc((size_t)nfiles, sizeof *infos);
    struct profile prof;
    int rc = flow_profile_from_nccl_tests(files, nfiles, &no, &prof, infos, &e);
    if (rc == MT_OK)
        rc = profile_save(o->out, &prof, NULL, &e);
    if (rc == MT_OK && o->json)
        profile_print_file(o->out);
    else if (rc == MT_OK) {
        for (int i = 0; i < nfiles; i++) {
            const struct nccl_tests_info *f = &infos[i];
            printf("%s: %s%s%d ranks on %d host%s (%s), %d rows of %s, %s columns%s%s, avg "
                   "busbw %g GB/s\n",
                   files[i], f->program, f->program[0] ? ", " : "", f->ranks, f->hosts,
                   f->hosts == 1 ? "" : "s", op_link_name(f->link), f->rows, f->type,
                   o->in_place ? "in-place" : "out-of-place", f->device[0] ? ", " : "",
                   f->device, f->avg_busbw);
        }
        printf("\n");
        profile_print_micro(prof.micro);
        printf("\nwrote %s (use it with --calibration %s)\n", o->out, o->out);
    }
    for (int i = 0; rc == MT_OK && i < nfiles; i++)
        nccl_tests_info_fini(&infos[i]);
    free(infos);
    return rc == MT_OK ? 0 : cmd_fail("profile", &e);
}

static void profile_micro_progress(void *ctx, const char *what, int done, int total)
{
    (void)ctx;
    fprintf(stderr, "\rmario-tui profile --micro: %s (%d of %d)%20s", what, done, total, "");
}

/* --micro: this machine measured; under mpirun (the job it starts) one rank of the
 * collectives. */
int cmd_profile_run_micro(const struct cmd_profile_micro *o, int argc, char **argv)
{
    struct mt_err e = {0};
    static const int dflt_sizes[] = {64, 256, 1024}, dflt_ranks[] = {2, 4};
    struct flow_micro_opts mo = {
        .backend = cmd_run_backends[o->backend],
        .gemm_sizes = o->n_gemm_sizes ? o->gemm_sizes : dflt_sizes,
        .n_gemm_sizes = o->n_gemm_sizes ? o->n_gemm_sizes : 3,
        .ranks = o->n_ranks ? o->ranks : dflt_ranks,
        .n_ranks = o->n_ranks ? o->n_ranks : 2,
        .min_coll_bytes = o->min_bytes,
        .min_copy_bytes = 4096,
        .max_bytes = o->max_bytes,
        .min_s = o->seconds,
    };
    if (mo.min_coll_bytes > mo.max_bytes)
        return cmd_usage_error("profile", "--min-bytes is over --max-bytes");
    for (int i = 0; i < mo.n_ranks; i++)
        if (mo.ranks[i] < 2)
            return cmd_usage_error("profile", "--ranks: the collectives need 2 ranks or more");
    if (launch_under_mpi()) /* a rank of the collectives' job */
        return flow_profile_micro_rank(&argc, &argv, &mo, o->out, &e) == MT_OK
                   ? 0
                   : cmd_fail("profile", &e);
    struct microbench_progress p = {o->json ? NULL : profile_micro_progress, NULL};
    struct profile prof;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = flow_profile_micro(&mo, &p, &prof, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!o->json)
        fprintf(stderr, "\rmario-tui profile --micro: %s in %.1f s%50s\n",
                rc == MT_OK ? "measured" : "stopped",
                (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), "");
    if (rc == MT_OK)
        rc = profile_save(o->out, &prof, NULL, &e);
    if (rc != MT_OK)
        return cmd_fail("profile", &e);
    if (o->json) {
        profile_print_file(o->out);
        return 0;
    }
    printf("micro-benchmarks of %s [%s]\n\n", prof.device, mo.backend);
    profile_print_micro(prof.micro);
    printf("\nwrote %s (use it with --calibration %s)\n", o->out, o->out);
    return 0;
}

