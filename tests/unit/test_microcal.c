/* tests/unit/test_microcal.c: micro-benchmark tables (model/microcal.h) on hand-made grids whose
 * interpolated values are worked by hand (log-space means of two or four corners), their
 * "micro" object in calibration files (model/profile_json.c), and the nccl-tests reader
 * (model/nccl_tests.h) on the samples of tests/data/nccl-tests/, whose rows are read off the
 * files' text. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/microcal.h"
#include "model/nccl_tests.h"
#include "model/profile.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/str.h"

static const char *srcdir(void)
{
    const char *d = getenv("top_srcdir");
    return d != NULL && d[0] != '\0' ? d : ".";
}

/* v(m, n, k) of the GEMM grid: rises with every axis, so every monotone check has a slope. */
static double grid_tflops(double m, double n, double k)
{
    return 100.0 * (m == 4096 ? 4 : 1) * (n == 4096 ? 2 : 1) * (k == 4096 ? 1.5 : 1);
}

static const struct microcal *gemm_grid(void)
{
    struct microcal_builder *b = microcal_builder_new();
    const double v[2] = {256, 4096};
    for (int i = 0; i < 8; i++) {
        struct microcal_gemm g = {OP_BF16, v[i & 1], v[(i >> 1) & 1], v[(i >> 2) & 1], 0};
        g.tflops = grid_tflops(g.m, g.n, g.k);
        microcal_add_gemm(b, &g);
    }
    const struct microcal *t = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    microcal_builder_free(b);
    return t;
}

static void test_gemm(void)
{
    const struct microcal *t = gemm_grid();
    CHECK(t != NULL && t->n_gemm == 8);
    const double peak = 2e15;
    double eff = -1;
    /* exact at every grid point, bit for bit */
    const double v[2] = {256, 4096};
    for (int i = 0; i < 8; i++) {
        double m = v[i & 1], n = v[(i >> 1) & 1], k = v[(i >> 2) & 1];
        CHECK(microcal_gemm_efficiency(t, m, n, k, OP_BF16, peak, &eff));
        CHECK(eff == grid_tflops(m, n, k) * 1e12 / peak);
    }
    /* m = 1024 is halfway from 256 to 4096 in log2 (8, 10, 12): the geometric mean of 100 x 2
     * x 1.5 = 300 and 400 x 2 x 1.5 = 1200 TFLOP/s is 600 TFLOP/s, 0.3 of the peak */
    CHECK(microcal_gemm_efficiency(t, 1024, 4096, 4096, OP_BF16, peak, &eff));
    CHECK_NEAR(eff, 0.3, 1e-12);
    /* the cell's centre on all three axes: the geometric mean of the 8 corners,
     * 100 x sqrt(4) x sqrt(2) x sqrt(1.5) = 346.41 TFLOP/s */
    CHECK(microcal_gemm_efficiency(t, 1024, 1024, 1024, OP_BF16, peak, &eff));
    CHECK_NEAR(eff, 0.05 * sqrt(4.0 * 2.0 * 1.5), 1e-12);
    /* monotone between grid points */
    double prev = 0;
    bool monotone = true;
    for (int s = 0; s <= 64; s++) {
        double m = 256 * pow(16, s / 64.0);
        if (m > 4096)
            m = 4096;
        if (!microcal_gemm_efficiency(t, m, 700, 3000, OP_BF16, peak, &eff) || eff < prev)
            monotone = false;
        prev = eff;
    }
    CHECK(monotone);
    /* beyond the grid: the edge holds up to MICROCAL_REACH (2x), then refused */
    CHECK(microcal_gemm_efficiency(t, 128, 256, 256, OP_BF16, peak, &eff));
    CHECK(eff == 100 * 1e12 / peak);
    CHECK(microcal_gemm_efficiency(t, 8192, 4096, 4096, OP_BF16, peak, &eff));
    CHECK(eff == 1200 * 1e12 / peak);
    eff = -1;
    CHECK(!microcal_gemm_efficiency(t, 127, 256, 256, OP_BF16, peak, &eff));
    CHECK(!microcal_gemm_efficiency(t, 8193, 256, 256, OP_BF16, peak, &eff));
    CHECK(!microcal_gemm_efficiency(t, 256, 256, 256, OP_FP32, peak, &eff)); /* not measured */
    CHECK(!microcal_gemm_efficiency(t, 256, 256, 256, OP_BF16, 0, &eff));
    CHECK(!microcal_gemm_efficiency(t, 0, 256, 256, OP_BF16, peak, &eff));
    CHECK(!microcal_gemm_efficiency(t, NAN, 256, 256, OP_BF16, peak, &eff));
    CHECK(!microcal_gemm_efficiency(NULL, 256, 256, 256, OP_BF16, peak, &eff));
    CHECK(eff == -1); /* refusals leave *eff */
    /* a peak below the measured rate is capped at 1 */
    CHECK(microcal_gemm_efficiency(t, 4096, 4096, 4096, OP_BF16, 1e15, &eff));
    CHECK(eff == 1);
    /* the same rows again: the same pooled table */
    const struct microcal *again = gemm_grid();
    CHECK(again == t);
}

/* A grid with a corner not measured refuses in that cell only. */
static void test_missing_corner(void)
{
    struct microcal_builder *b = microcal_builder_new();
    const double mk[3][2] = {{256, 256}, {4096, 256}, {256, 4096}}; /* (4096, 4096) missing */
    for (int i = 0; i < 3; i++) {
        struct microcal_gemm g = {OP_FP32, mk[i][0], 1024, mk[i][1], 50};
        microcal_add_gemm(b, &g);
    }
    const struct microcal *t;
    struct mt_err e = {0};
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    microcal_builder_free(b);
    double eff;
    CHECK(!microcal_gemm_efficiency(t, 1024, 1024, 1024, OP_FP32, 1e14, &eff));
    CHECK(microcal_gemm_efficiency(t, 1024, 1024, 256, OP_FP32, 1e14, &eff)); /* an edge */
    CHECK_NEAR(eff, 0.5, 1e-15);
    CHECK(microcal_gemm_efficiency(t, 256, 1024, 4096, OP_FP32, 1e14, &eff));
}

static void test_other_kinds(void)
{
    struct microcal_builder *b = microcal_builder_new();
    struct microcal_hbm h1 = {1e6, 100}, h2 = {1e9, 400};
    microcal_add_hbm(b, &h1);
    microcal_add_hbm(b, &h2);
    struct microcal_attention a = {OP_BF16, true, PASS_FW, 2, 16, 4096, 128, 350};
    microcal_add_attention(b, &a);
    struct microcal_coll c1 = {COLL_ALL_REDUCE, LINK_NVLINK, 8, 1048576, 100};
    struct microcal_coll c2 = {COLL_ALL_REDUCE, LINK_NVLINK, 8, 16777216, 400};
    microcal_add_coll(b, &c1);
    microcal_add_coll(b, &c2);
    const struct microcal *t;
    struct mt_err e = {0};
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    microcal_builder_free(b);
    double v;
    CHECK(microcal_hbm_gbps(t, 1e9, &v) && v == 400);
    CHECK(microcal_hbm_gbps(t, sqrt(1e15), &v)); /* halfway in log: sqrt(100 x 400) */
    CHECK_NEAR(v, 200, 1e-9);
    CHECK(!microcal_hbm_gbps(t, 4e5, &v));
    /* attention by batch x heads: 1 x 32 is the measured 2 x 16 */
    CHECK(microcal_attention_flops(t, 1, 4096, 32, 128, true, OP_BF16, PASS_FW, &v));
    CHECK(v == 350e12);
    CHECK(!microcal_attention_flops(t, 2, 4096, 16, 128, false, OP_BF16, PASS_FW, &v));
    CHECK(!microcal_attention_flops(t, 2, 4096, 16, 128, true, OP_BF16, PASS_B, &v));
    CHECK(!microcal_attention_flops(t, 2, 4096, 16, 128, true, OP_BF16, PASS_W, &v));
    /* 4 MiB: halfway from 1 MiB to 16 MiB in log: 200 GB/s */
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 4194304, 8, LINK_NVLINK, &v));
    CHECK_NEAR(v, 200, 1e-9);
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 16777216, 8, LINK_NVLINK, &v) && v == 400);
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 16777216, 16, LINK_NVLINK, &v) && v == 400);
    CHECK(!microcal_busbw(t, COLL_ALL_REDUCE, 16777216, 17, LINK_NVLINK, &v));
    CHECK(!microcal_busbw(t, COLL_ALL_REDUCE, 16777216, 8, LINK_NETWORK, &v));
    CHECK(!microcal_busbw(t, COLL_ALL_GATHER, 16777216, 8, LINK_NVLINK, &v));
    CHECK_NEAR(microcal_bus_factor(COLL_ALL_REDUCE, 8), 1.75, 1e-15);
    CHECK_NEAR(microcal_bus_factor(COLL_ALL_TO_ALL, 4), 0.75, 1e-15);
    CHECK(microcal_bus_factor(COLL_SEND_RECV, 2) == 1);
}

static void test_build_errors(void)
{
    struct microcal_builder *b = microcal_builder_new();
    struct microcal_gemm g = {OP_BF16, 256, 256, 256, 10};
    microcal_add_gemm(b, &g);
    g.m = 512;
    microcal_add_gemm(b, &g);
    g.m = 256;
    g.tflops = 11;
    microcal_add_gemm(b, &g);
    const struct microcal *t = (const void *)1;
    struct microcal_fault f;
    struct mt_err e = {0};
    CHECK_EQ_INT(microcal_build(b, &t, &f, &e), MT_EINVAL);
    CHECK(t == NULL);
    CHECK_EQ_INT(f.row, 2);
    CHECK_EQ_INT(f.first, 0);
    CHECK_STR_CONTAINS(e.msg, "gemm row 2: the same dtype, m, n and k as row 0");
    microcal_builder_free(b);
    b = microcal_builder_new();
    struct microcal_coll c = {COLL_ALL_REDUCE, LINK_NVLINK, 1, 1024, 1};
    microcal_add_coll(b, &c);
    CHECK_EQ_INT(microcal_build(b, &t, &f, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "ranks 1 must be in [2,");
    microcal_builder_free(b);
}

static const char micro_only[] =
    "{\"format\": \"mario-calibration\", \"version\": 1, \"device\": \"NVIDIA H100\",\n"
    " \"micro\": {\"gemm\": [{\"dtype\": \"bf16\", \"m\": 8192, \"n\": 8192, \"k\": 8192,\n"
    "                       \"tflops\": 750.5}],\n"
    "           \"collectives\": [{\"collective\": \"all_gather\", \"link\": \"network\",\n"
    "                              \"ranks\": 16, \"bytes\": 1048576, \"busbw_gbps\": 21.5}]}}\n";

static void test_profile_json(void)
{
    struct profile p;
    struct mt_err e = {0};
    CHECK_EQ_INT(profile_load_string(micro_only, strlen(micro_only), "m.json", &p, &e), MT_OK);
    CHECK(!p.enabled);
    CHECK(p.micro != NULL);
    double eff, bw;
    CHECK(microcal_gemm_efficiency(p.micro, 8192, 8192, 8192, OP_BF16, 989e12, &eff));
    CHECK(eff == 750.5e12 / 989e12);
    CHECK(microcal_busbw(p.micro, COLL_ALL_GATHER, 1048576, 16, LINK_NETWORK, &bw) && bw == 21.5);
    /* written back and read again: the same table (one pool entry) */
    char tmp[] = "/tmp/test_microcal.XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ_INT(profile_save(tmp, &p, NULL, &e), MT_OK);
    struct profile q;
    CHECK_EQ_INT(profile_load(tmp, &q, &e), MT_OK);
    CHECK(q.micro == p.micro);
    char *text = NULL;
    size_t len = 0;
    CHECK_EQ_INT(str_read_file(tmp, 1 << 20, &text, &len, &e), MT_OK);
    CHECK(text != NULL && strstr(text, "\"shape\"") == NULL);
    free(text);
    unlink(tmp);

    /* errors name file:line:col and the path */
    static const char unknown[] =
        "{\"format\": \"mario-calibration\", \"version\": 1,\n"
        " \"micro\": {\"gemm\": [{\"dtype\": \"bf16\", \"m\": 1, \"n\": 1, \"k\": 1,\n"
        "   \"tflop\": 3}]}}\n";
    CHECK(profile_load_string(unknown, strlen(unknown), "u.json", &p, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "u.json:3:4: micro.gemm[0].tflop: unknown key");
    static const char dup[] =
        "{\"format\": \"mario-calibration\", \"version\": 1, \"micro\": {\"hbm\": [\n"
        "  {\"bytes\": 1e6, \"gbps\": 3},\n"
        "  {\"bytes\": 1e6, \"gbps\": 4}]}}\n";
    CHECK(profile_load_string(dup, strlen(dup), "d.json", &p, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "d.json:3:3: micro.hbm[1]: the same bytes as micro.hbm[0]");
    static const char neg[] =
        "{\"format\": \"mario-calibration\", \"version\": 1, \"micro\": {\"collectives\": [\n"
        "  {\"collective\": \"all_reduce\", \"link\": \"nvlink\", \"ranks\": 8, \"bytes\": -4,\n"
        "   \"busbw_gbps\": 3}]}}\n";
    CHECK(profile_load_string(neg, strlen(neg), "n.json", &p, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "n.json:2:62: micro.collectives[0].bytes: -4 is out of range");
    static const char empty[] = "{\"format\": \"mario-calibration\", \"version\": 1, \"micro\": {}}";
    CHECK(profile_load_string(empty, strlen(empty), "e.json", &p, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "nothing to calibrate with");
    static const char none[] = "{\"format\": \"mario-calibration\", \"version\": 1}";
    CHECK(profile_load_string(none, strlen(none), "x.json", &p, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "shape: missing");

    /* a calibration of before the tables loads as it did: fits, no micro */
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/calibration/profile-tiny-cpu.json",
             srcdir());
    CHECK_EQ_INT(profile_load(path, &p, &e), MT_OK);
    CHECK(p.enabled && p.micro == NULL && p.fw.points > 0);
}

static int read_sample(const char *file, const struct nccl_tests_opts *o,
                       struct microcal_builder *b, struct nccl_tests_info *info,
                       struct mt_err *e)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/nccl-tests/%s", srcdir(), file);
    return nccl_tests_load(path, o, b, info, e);
}

static const struct nccl_tests_opts plain = {-1, -1, false};

static void test_nccl_samples(void)
{
    struct microcal_builder *b = microcal_builder_new();
    struct nccl_tests_info info;
    struct mt_err e = {0};
    CHECK_EQ_INT(read_sample("all_reduce_perf-h100x8.txt", &plain, b, &info, &e), MT_OK);
    CHECK(info.coll == COLL_ALL_REDUCE && info.link == LINK_NVLINK);
    CHECK_EQ_INT(info.ranks, 8);
    CHECK_EQ_INT(info.hosts, 1);
    CHECK_EQ_INT(info.rows, 14);
    CHECK(strcmp(info.device, "NVIDIA H100 80GB HBM3") == 0);
    CHECK(strcmp(info.program, "all_reduce_perf") == 0);
    CHECK(info.avg_busbw == 126.089);
    CHECK_EQ_INT(info.row_lines[10], 28); /* 8388608 bytes */
    nccl_tests_info_fini(&info);
    const struct microcal *t;
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    double bw;
    /* line 28: "8388608 2097152 float sum -1 52.57 159.57 279.25 0 52.67 159.26 278.71 0" */
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 8388608, 8, LINK_NVLINK, &bw) && bw == 279.25);
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 536870912, 8, LINK_NVLINK, &bw) && bw == 465.54);
    /* 8 bytes in 22.00 us printed busbw 0.00: from the time, 8 / 22e-6 / 1e9 x 2 x 7 / 8 */
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 8, 8, LINK_NVLINK, &bw));
    CHECK_NEAR(bw, 8 / 22.00e-6 / 1e9 * 1.75, 1e-12);
    microcal_builder_free(b);

    /* the in-place columns */
    b = microcal_builder_new();
    struct nccl_tests_opts in_place = {-1, -1, true};
    CHECK_EQ_INT(read_sample("all_reduce_perf-h100x8.txt", &in_place, b, &info, &e), MT_OK);
    nccl_tests_info_fini(&info);
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    CHECK(microcal_busbw(t, COLL_ALL_REDUCE, 8388608, 8, LINK_NVLINK, &bw) && bw == 278.71);
    microcal_builder_free(b);

    /* 16 ranks on two hosts, one GPU a process: the network */
    b = microcal_builder_new();
    CHECK_EQ_INT(read_sample("all_gather_perf-h100x16-2nodes.txt", &plain, b, &info, &e), MT_OK);
    CHECK(info.coll == COLL_ALL_GATHER && info.link == LINK_NETWORK);
    CHECK_EQ_INT(info.ranks, 16);
    CHECK_EQ_INT(info.hosts, 2);
    nccl_tests_info_fini(&info);
    /* MPI ranks on one host; the program name of an MPI build */
    CHECK_EQ_INT(read_sample("reduce_scatter_perf-h100x8-mpi.txt", &plain, b, &info, &e), MT_OK);
    CHECK(info.coll == COLL_REDUCE_SCATTER && info.link == LINK_NVLINK && info.ranks == 8);
    nccl_tests_info_fini(&info);
    CHECK_EQ_INT(read_sample("alltoall_perf-h100x8.txt", &plain, b, &info, &e), MT_OK);
    CHECK(info.coll == COLL_ALL_TO_ALL && info.ranks == 8);
    nccl_tests_info_fini(&info);
    CHECK_EQ_INT(read_sample("sendrecv_perf-h100x2.txt", &plain, b, &info, &e), MT_OK);
    CHECK(info.coll == COLL_SEND_RECV && info.ranks == 2);
    nccl_tests_info_fini(&info);
    /* nccl-tests 2.13: no "Collective test starting" line, so the collective is asked */
    CHECK_EQ_INT(read_sample("all_gather_perf-2.13-a100x16.txt", &plain, b, &info, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "all_gather_perf-2.13-a100x16.txt: cannot tell the collective");
    CHECK_STR_CONTAINS(e.msg, "--collective");
    struct nccl_tests_opts ag = {COLL_ALL_GATHER, LINK_PCIE, false};
    CHECK_EQ_INT(read_sample("all_gather_perf-2.13-a100x16.txt", &ag, b, &info, &e), MT_OK);
    CHECK(info.link == LINK_PCIE && info.ranks == 16 && info.hosts == 2);
    CHECK(strcmp(info.device, "NVIDIA A100-SXM4-80GB") == 0);
    nccl_tests_info_fini(&info);
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    /* 2.13's line: "4194304 65536 float none -1 ... 13.65 12.80 0 ..." */
    CHECK(microcal_busbw(t, COLL_ALL_GATHER, 4194304, 16, LINK_PCIE, &bw));
    /* --collective against the file's own program */
    struct nccl_tests_opts wrong = {COLL_ALL_GATHER, -1, false};
    CHECK_EQ_INT(read_sample("all_reduce_perf-h100x8.txt", &wrong, b, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--collective all_gather, but the file is all_reduce_perf's");
    microcal_builder_free(b);
}

/* The sample with one line edited (line `line` replaced by `with`, or cut there when NULL). */
static int read_edited(int line, const char *with, struct mt_err *e)
{
    char path[1024], *text;
    size_t len;
    snprintf(path, sizeof path, "%s/tests/data/nccl-tests/all_reduce_perf-h100x8.txt", srcdir());
    if (str_read_file(path, 1 << 20, &text, &len, e) != MT_OK)
        return -1;
    char out[16384];
    size_t k = 0;
    int ln = 1;
    for (size_t i = 0; i < len && k + 200 < sizeof out; ln++) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        if (ln == line && with == NULL)
            break;
        if (ln == line)
            k += (size_t)snprintf(out + k, sizeof out - k, "%s\n", with);
        else {
            memcpy(out + k, text + i, j - i + 1);
            k += j - i + 1;
        }
        i = j + 1;
    }
    free(text);
    struct microcal_builder *b = microcal_builder_new();
    struct nccl_tests_info info;
    int rc = nccl_tests_read(out, k, "ar.txt", &plain, b, &info, e);
    if (rc == MT_OK)
        nccl_tests_info_fini(&info);
    CHECK(rc == MT_OK || microcal_builder_rows(b) == 0); /* nothing added on error */
    microcal_builder_free(b);
    return rc;
}

static void test_nccl_errors(void)
{
    struct mt_err e = {0};
    CHECK_EQ_INT(read_edited(31, NULL, &e), MT_EPARSE); /* cut after 2 GiB's row */
    CHECK_STR_CONTAINS(e.msg, "ar.txt:30: the file ends before nccl-tests' '# Avg bus bandwidth'");
    CHECK_EQ_INT(read_edited(28, "     8388608       2097152     float     sum      -1    52.57  "
                                 "159.57  279.25       0    52.67  159.26",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:28: 11 columns where the header has 13 (a truncated row?)");
    CHECK_EQ_INT(read_edited(28, "     8388608       2097152     float     sum      -1    52.57  "
                                 "159.57    -nan       0    52.67  159.26  278.71       0",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:28: busbw '-nan' is not a finite number");
    CHECK_EQ_INT(read_edited(28, "    -8388608       2097152     float     sum      -1    52.57  "
                                 "159.57  279.25       0    52.67  159.26  278.71       0",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:28: size -8388608 is negative");
    CHECK_EQ_INT(read_edited(28, "     2097152       2097152     float     sum      -1    52.57  "
                                 "159.57  279.25       0    52.67  159.26  278.71       0",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:28: a second row of 2097152 bytes (the first at line 27)");
    CHECK_EQ_INT(read_edited(28, "     8388608       2097152     float     sum      -1    52.57  "
                                 "159.57  279.25       3    52.67  159.26  278.71       0",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:28: 3 wrong values at 8388608 bytes");
    CHECK_EQ_INT(read_edited(16, "#       size         count      type   redop    root     time   "
                                 "algbw   busbw  #wrong",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:16: columns not understood");
    CHECK_EQ_INT(read_edited(2, "# Collective test starting: broadcast_perf", &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "broadcast_perf: not a collective the cost model prices");
    CHECK_EQ_INT(read_edited(28, "garbage in the table", &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:28: not a row of the table: 'garbage in the table'");
    /* NCCL's own log lines and launcher words before the table are skipped */
    CHECK_EQ_INT(read_edited(28, "dgx-h100-01:41235:41235 [0] NCCL INFO comm 0x5 rank 0 nranks 8",
                             &e),
                 MT_OK);
    CHECK_EQ_INT(read_edited(4, "Authorization required, but no authorization protocol specified",
                             &e),
                 MT_OK);
    CHECK_EQ_INT(read_edited(7, "#  Rank  1 Group  0 Pid  41235 on dgx-h100-02 device  1 [0000:2a:00]"
                                " NVIDIA H100 80GB HBM3",
                             &e),
                 MT_OK); /* (a second host: the network) */
    CHECK_EQ_INT(read_edited(7, "#  Rank  0 Group  0 Pid  41235 on dgx-h100-01 device  1 [0000:2a:00]"
                                " NVIDIA H100 80GB HBM3",
                             &e),
                 MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "do not number ranks 0 to 7 once each");
    CHECK_EQ_INT(read_edited(32, "# Out of bounds values : 2 FAILED", &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "ar.txt:32: nccl-tests found 2 out-of-bounds values");
}

int main(void)
{
    test_gemm();
    test_missing_corner();
    test_other_kinds();
    test_build_errors();
    test_profile_json();
    test_nccl_samples();
    test_nccl_errors();
    microcal_pool_clear();
    CHECK_EQ_INT(microcal_pool_size(), 0);
    return check_report("test_microcal");
}
