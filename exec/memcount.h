/* exec/memcount.h: the executor's counting allocator. Every parameter, gradient, optimizer
 * and activation buffer is allocated here, so the bytes a device holds over time are
 * measured, not estimated (issue 7; docs/design.md "Memory per device"). One count per process. */
#ifndef MT_EXEC_MEMCOUNT_H
#define MT_EXEC_MEMCOUNT_H

#include <stddef.h>

/* Called after every change of the count with the bytes now held (e.g. to emit a trace
 * counter event). Runs in the allocating thread; must not allocate through memcount. */
typedef void (*memcount_hook_fn)(size_t current_bytes, void *ctx);

/* Returns `bytes` of uninitialised memory aligned to MEMCOUNT_ALIGN and adds `bytes` to the
 * count. Aborts on exhaustion, as xmalloc does. */
void *memcount_alloc(size_t bytes) __attribute__((malloc));
/* Same, zero-filled. */
void *memcount_calloc(size_t bytes) __attribute__((malloc));
/* Releases a block from memcount_alloc/calloc and subtracts its size; NULL is a no-op. */
void memcount_free(void *p);
/* Bytes held now: the sum of the sizes asked for by live blocks (no allocator overhead). */
size_t memcount_current(void);
/* Highest value of memcount_current since the start or the last memcount_reset_peak. */
size_t memcount_peak(void);
/* Sets the peak to the current count, to measure the peak of one phase. */
void memcount_reset_peak(void);
/* The size a live block was asked for (either pool). */
size_t memcount_size(const void *p);
/* The host pool: offloaded activations (OF, exec/copy_cpu.c), counted apart from the device's
 * count above and never reported to the hook. Thread-safe like the rest. */
void *memcount_host_alloc(size_t bytes) __attribute__((malloc));
void memcount_host_free(void *p);
size_t memcount_host_current(void);
size_t memcount_host_peak(void);
/* Installs (or with NULL removes) the hook. */
void memcount_set_hook(memcount_hook_fn fn, void *ctx);

#define MEMCOUNT_ALIGN 64

#endif
