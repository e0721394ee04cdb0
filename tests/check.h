/* tests/check.h: the unit-test harness. Each CHECK prints file:line and both values when it
 * fails and counts it; a test's main returns check_report(), 0 when nothing failed. */
#ifndef MT_TESTS_CHECK_H
#define MT_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        check_count++;                                                                             \
        if (a_ != b_) {                                                                            \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    a_, b_);                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        check_count++;                                                                             \
        if (!(fabs(a_ - b_) <= (tol))) {                                                           \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.9g vs %.9g (tol %g)\n", __FILE__,         \
                    __LINE__, #a, #b, a_, b_, (double)(tol));                                      \
        }                                                                                          \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                            \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        check_count++;                                                                             \
        if (h_ == NULL || strstr(h_, n_) == NULL) {                                                \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,         \
                    h_ ? h_ : "(null)", n_);                                                       \
        }                                                                                          \
    } while (0)

/* 1 when a check failed, and when none ran: a test that checked nothing proved nothing (a
 * test that cannot run here exits 77 before it gets here). */
static inline int check_report(const char *name)
{
    printf("%s: %d checks, %d failed%s\n", name, check_count, check_failures,
           check_count == 0 ? " (no check ran: a failure)" : "");
    return check_failures || check_count == 0 ? 1 : 0;
}

#endif
