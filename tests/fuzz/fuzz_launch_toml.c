/* tests/fuzz/fuzz_launch_toml.c: the torchtitan job reader (model/launch_torchtitan.c: the
 * TOML subset, then JobConfig's keys) on arbitrary bytes, and its writer's TOML read back
 * (tests/fuzz/fuzz_launch_common.h says the invariants). */
#include <config.h>

#include "tests/fuzz/fuzz_launch_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536 || memchr(data, '\0', size) != NULL)
        return 0; /* launch_read refuses these before the reader */
    fuzz_launch(data, size, "fuzz.toml", launch_read_torchtitan, LAUNCH_TORCHTITAN);
    return 0;
}
