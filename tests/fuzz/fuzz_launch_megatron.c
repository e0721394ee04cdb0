/* tests/fuzz/fuzz_launch_megatron.c: the Megatron-LM launch reader (model/launch_shell_*.c, the
 * bash subset; model/launch_megatron.c, the flags) on arbitrary bytes, and its writer's text
 * read back (tests/fuzz/fuzz_launch_common.h says the invariants). */
#include <config.h>

#include "tests/fuzz/fuzz_launch_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536 || memchr(data, '\0', size) != NULL)
        return 0; /* launch_read refuses these before the reader */
    fuzz_launch(data, size, "fuzz.sh", launch_read_megatron, LAUNCH_MEGATRON);
    return 0;
}
