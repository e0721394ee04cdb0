/* exec/memcount.c: a counting allocator. Each block carries a MEMCOUNT_ALIGN-byte header
 * that records its size, so memcount_free needs no size and the data stays aligned for
 * BLAS. The count is of the bytes asked for (the model's tensors), not of the header or of
 * malloc's own overhead, so it can be compared exactly with closed-form sizes. Counters are
 * C11 atomics: a process may run several pipeline devices on threads and still get one
 * consistent count. */
#include <config.h>
#include "exec/memcount.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One count: the device's (memcount_*) and the host pool's (memcount_host_*: activations
 * offloaded by OF, exec/copy_cpu.c), so that a run measures the two apart. */
struct memcount_pool {
    atomic_size_t cur, max;
};
static struct memcount_pool memcount_dev, memcount_hostpool;
static memcount_hook_fn memcount_hook;
static void *memcount_hook_ctx;

static void memcount_fail(size_t bytes)
{
    fprintf(stderr, "mario-tui: out of memory (%zu bytes for model tensors)\n", bytes);
    abort();
}

static void memcount_raise_peak(struct memcount_pool *pool, size_t now)
{
    size_t old = atomic_load(&pool->max);
    while (now > old && !atomic_compare_exchange_weak(&pool->max, &old, now))
        ;
}

/* A block of `bytes` counted in pool; returns the count after it in *now. */
static void *memcount_pool_alloc(struct memcount_pool *pool, size_t bytes, size_t *now)
{
    if (bytes > SIZE_MAX - 2 * MEMCOUNT_ALIGN)
        memcount_fail(bytes);
    /* aligned_alloc wants a multiple of the alignment */
    size_t total = (bytes + 2 * MEMCOUNT_ALIGN - 1) / MEMCOUNT_ALIGN * MEMCOUNT_ALIGN;
    unsigned char *base = aligned_alloc(MEMCOUNT_ALIGN, total);
    if (base == NULL)
        memcount_fail(bytes);
    memcpy(base, &bytes, sizeof bytes);
    *now = atomic_fetch_add(&pool->cur, bytes) + bytes;
    memcount_raise_peak(pool, *now);
    return base + MEMCOUNT_ALIGN;
}

/* Frees a block of pool; returns the count after it. */
static size_t memcount_pool_free(struct memcount_pool *pool, void *p)
{
    size_t bytes = memcount_size(p);
    free((unsigned char *)p - MEMCOUNT_ALIGN);
    return atomic_fetch_sub(&pool->cur, bytes) - bytes;
}

void *memcount_alloc(size_t bytes)
{
    size_t now;
    void *p = memcount_pool_alloc(&memcount_dev, bytes, &now);
    if (memcount_hook != NULL)
        memcount_hook(now, memcount_hook_ctx);
    return p;
}

void *memcount_calloc(size_t bytes)
{
    void *p = memcount_alloc(bytes);
    memset(p, 0, bytes);
    return p;
}

void memcount_free(void *p)
{
    if (p == NULL)
        return;
    size_t now = memcount_pool_free(&memcount_dev, p);
    if (memcount_hook != NULL)
        memcount_hook(now, memcount_hook_ctx);
}

size_t memcount_size(const void *p)
{
    size_t bytes;
    memcpy(&bytes, (const unsigned char *)p - MEMCOUNT_ALIGN, sizeof bytes);
    return bytes;
}

size_t memcount_current(void)
{
    return atomic_load(&memcount_dev.cur);
}

size_t memcount_peak(void)
{
    return atomic_load(&memcount_dev.max);
}

void memcount_reset_peak(void)
{
    atomic_store(&memcount_dev.max, atomic_load(&memcount_dev.cur));
}

void *memcount_host_alloc(size_t bytes)
{
    size_t now;
    return memcount_pool_alloc(&memcount_hostpool, bytes, &now);
}

void memcount_host_free(void *p)
{
    if (p != NULL)
        memcount_pool_free(&memcount_hostpool, p);
}

size_t memcount_host_current(void)
{
    return atomic_load(&memcount_hostpool.cur);
}

size_t memcount_host_peak(void)
{
    return atomic_load(&memcount_hostpool.max);
}

void memcount_set_hook(memcount_hook_fn fn, void *ctx)
{
    memcount_hook_ctx = ctx;
    memcount_hook = fn;
}
