/* exec/fault.c: the executor's test hooks (exec/fault.h). */
#include <config.h>
#include "exec/fault.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fault_env_int(const char *name, int unset)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : unset;
}

void fault_from_env(struct fault_plan *f)
{
    f->kill_rank = fault_env_int("MT_FAULT_KILL_RANK", -1);
    f->hang_rank = fault_env_int("MT_FAULT_HANG_RANK", -1);
    f->stop_rank = fault_env_int("MT_FAULT_STOP_RANK", -1);
    f->step = fault_env_int("MT_FAULT_AT_STEP", 1);
}

void fault_inject(const struct fault_plan *f, int rank, int step, int pos, int len)
{
    if (step + 1 != f->step || pos != len / 2)
        return;
    if (rank == f->kill_rank) {
        fprintf(stderr, "mario-tui run: rank %d: MT_FAULT_KILL_RANK: raising SIGKILL in step %d\n",
                rank, step + 1);
        raise(SIGKILL);
    }
    if (rank == f->hang_rank) {
        fprintf(stderr, "mario-tui run: rank %d: MT_FAULT_HANG_RANK: hanging in step %d\n", rank,
                step + 1);
        for (;;)
            pause();
    }
    if (rank == f->stop_rank) {
        fprintf(stderr, "mario-tui run: rank %d: MT_FAULT_STOP_RANK: raising SIGSTOP in step %d\n",
                rank, step + 1);
        raise(SIGSTOP);
    }
}
