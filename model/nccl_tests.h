/* model/nccl_tests.h: the output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, alltoall_perf, sendrecv_perf), read as those programs print it
 * (src/util.cu and src/common.cu of github.com/NVIDIA/nccl-tests, 2.13 to 2.19), into the
 * collective rows of a micro-benchmark table (model/microcal.h): `mario-tui profile
 * --from-nccl-tests FILE...`.
 *
 * What is read: the "# Collective test starting: all_reduce_perf" line (the collective, since
 * nccl-tests 2.15; "_mpi" builds too), "# nThread T nGpus G ...", the "#  Rank R Group ... Pid
 * P on HOST device D [..] NAME" lines (the ranks: one line a rank, over every MPI process;
 * the hosts: one host is the intra-node link, several the network; the device's name), the
 * column header "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ..." (the
 * out-of-place group, then the in-place one; -I's per-iteration columns and -T's timestamp
 * are allowed), the rows, "# Out of bounds values : N OK" and "# Avg bus bandwidth : X".
 * Lines before the header that nccl-tests does not print (the launcher's) and NCCL's own
 * "NCCL INFO"/"NCCL WARN" lines are skipped.
 *
 * Each row gives (size, busbw) of the out-of-place group (or the in-place one, asked): size
 * is nccl-tests' max(send, receive) bytes of one rank, the bytes model/ops.h's collectives
 * hold. A busbw printed as 0.00 (below the print's two decimals: small messages) is taken
 * from the row's time instead: size / time x the bus factor, as nccl-tests computes it.
 * Refused, naming FILE:LINE: a file without the header or the average-bandwidth footer
 * (truncated), rows of another width, NaN or negative figures, wrong values (#wrong > 0, or
 * out-of-bounds values), two rows of one size (-d all, -o all, -N: one measurement a file),
 * one rank, a collective the cost model does not price (broadcast, reduce, ...), or one it
 * cannot tell (no "Collective test starting" line and no --collective). */
#ifndef MT_MODEL_NCCL_TESTS_H
#define MT_MODEL_NCCL_TESTS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/ops.h"

struct microcal_builder;
struct mt_err;

#define NCCL_TESTS_MAX_BYTES (64u << 20) /* a file */

struct nccl_tests_opts {
    int coll;      /* enum op_coll, or -1: the file's "Collective test starting" line */
    int link;      /* enum op_link, or -1: nvlink when the ranks share one host, else network */
    bool in_place; /* the in-place columns instead of the out-of-place ones */
};

struct nccl_tests_info {
    enum op_coll coll;
    enum op_link link;
    int ranks, hosts, rows;
    char program[64]; /* "all_reduce_perf", "" when the file does not say */
    char device[96];  /* the first rank's device name ("NVIDIA H100 80GB HBM3"), or "" */
    char type[16];    /* the rows' data type ("float", "bfloat16") */
    double avg_busbw; /* "# Avg bus bandwidth", GB/s */
    int *row_lines;   /* the line of each row added, in order (nccl_tests_info_fini frees) */
};

/* Reads text[0..len) (named name in messages) and adds its rows to b (nothing on error).
 * Errors: MT_EPARSE "name:LINE: what", MT_EINVAL for a refused option. */
int nccl_tests_read(const char *text, size_t len, const char *name,
                    const struct nccl_tests_opts *o, struct microcal_builder *b,
                    struct nccl_tests_info *info, struct mt_err *e);
/* The file at path (at most NCCL_TESTS_MAX_BYTES). */
int nccl_tests_load(const char *path, const struct nccl_tests_opts *o,
                    struct microcal_builder *b, struct nccl_tests_info *info, struct mt_err *e);
void nccl_tests_info_fini(struct nccl_tests_info *info);
/* "all_reduce" ... (op_coll_name's), -1 when s is none: for --collective. Also takes
 * nccl-tests' program names ("all_reduce_perf", "alltoall"). */
int nccl_tests_coll_parse(const char *s);

#endif
