/* tests/unit/test_check.c: the harness itself (tests/check.h). A test that ran no check
 * reports a failure, as does one with a failed check; only checks that ran and held pass.
 * check_report's own output lines are the harness speaking, not this test's result. */
#include <config.h>

#include <stdio.h>

#include "tests/check.h"

int main(void)
{
    int none = check_report("test_check (before any check)"); /* zero checks: fails */
    int held_before = check_count;
    CHECK(1);
    int one = check_report("test_check (one check held)"); /* passes */
    CHECK(0); /* a failure on purpose, taken back below */
    int failed = check_report("test_check (a check failed)");
    check_failures = 0;
    CHECK_EQ_INT(held_before, 0);
    CHECK_EQ_INT(none, 1);
    CHECK_EQ_INT(one, 0);
    CHECK_EQ_INT(failed, 1);
    return check_report("test_check");
}
