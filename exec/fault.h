/* exec/fault.h: the executor's test hooks, the faults a rank can be told to inject so that the
 * launcher's post-mortem (exec/postmortem.h) can be tested under mpirun: from the environment,
 * MT_FAULT_KILL_RANK=r, MT_FAULT_HANG_RANK=r or MT_FAULT_STOP_RANK=r with MT_FAULT_AT_STEP=k
 * (1-based, default 1): halfway through step k, rank r raises SIGKILL on itself, stops
 * answering (sleeps until killed, signals still handled), or raises SIGSTOP on itself (frozen:
 * not even SIGTERM is handled). tests/mpi/test_fault.sh drives them. */
#ifndef MT_EXEC_FAULT_H
#define MT_EXEC_FAULT_H

struct fault_plan {
    int kill_rank, hang_rank, stop_rank; /* -1: off */
    int step;                            /* 1-based */
};

/* Reads the MT_FAULT_* variables; every fault off when they are unset. */
void fault_from_env(struct fault_plan *f);
/* Called before instruction pos of len in 0-based step `step` of rank `rank`: injects the
 * fault planned for here, if any (SIGKILL and the hang do not return). */
void fault_inject(const struct fault_plan *f, int rank, int step, int pos, int len);

#endif
