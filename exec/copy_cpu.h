/* exec/copy_cpu.h: the CPU backend's copy lanes for offload (exec/copy_cpu.c): the copy_*
 * entries of backend_cpu_ops (exec/backend.h has their contract). */
#ifndef MT_EXEC_COPY_CPU_H
#define MT_EXEC_COPY_CPU_H

#include <stdbool.h>

struct mt_err;

int copy_cpu_start(void *act, void **rec, struct mt_err *e);
int copy_cpu_test(void *rec, bool wait, bool *done, struct mt_err *e);
void copy_cpu_help(void *rec);
void copy_cpu_end(void *rec);
void copy_cpu_drop(void *rec);
void copy_cpu_close(void);

#endif
