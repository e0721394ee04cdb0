/* tests/fuzz/fuzz.h: what every fuzz target shares (docs/design.md "Conventions": a fuzz corpus per input format, after sqlite's fuzzcheck): the
 * libFuzzer entry point, defined once per target (fuzz_<format>.c), driven either by
 * libFuzzer (./configure --enable-fuzzing) or by tests/fuzz/replay.c over the target's corpus
 * in every `make check`. A broken invariant prints what and where, then abort()s, which both
 * drivers report as a crash. */
#ifndef MT_TESTS_FUZZ_H
#define MT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Returns 0 (libFuzzer's convention: the input is neither kept nor rejected specially). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
