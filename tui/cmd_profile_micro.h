/* tui/cmd_profile_micro.h: `mario-tui profile --from-nccl-tests` and `--micro`
 * (tui/cmd_profile_micro.c), called by tui/cmd_profile.c with the flags it parsed. */
#ifndef MT_TUI_CMD_PROFILE_MICRO_H
#define MT_TUI_CMD_PROFILE_MICRO_H

#include <stdbool.h>

struct cmd_profile_micro {
    const char *out;
    bool json;
    int backend;    /* in cmd_run_backends */
    int coll, link; /* --collective, --link; -1: from the files */
    bool in_place;
    const int *gemm_sizes; /* --gemm-sizes (n 0: 64,256,1024) */
    int n_gemm_sizes;
    const int *ranks; /* --ranks (n 0: 2,4) */
    int n_ranks;
    double max_bytes, min_bytes, seconds;
};

/* Exit statuses as commands return them (0, 1, 2). */
int cmd_profile_from_nccl_tests(const struct cmd_profile_micro *o, const char *const *files,
                                int nfiles);
/* Under mpirun: one rank of the collectives' job. */
int cmd_profile_run_micro(const struct cmd_profile_micro *o, int argc, char **argv);

#endif
