/* tests/unit/test_copy_cpu.c: the CPU backend's copy lanes for offload (exec/copy_cpu.c). Two
 * stages of the same seed run the same forward; one handle stays, the other is offloaded (OF)
 * and reloaded (RL). What is known without the code: OF gives back exactly the bytes the
 * forward kept and the host pool takes exactly those (counted apart); RL takes them back and
 * the host pool returns to 0; a copy changes no value, so both backwards give byte-identical
 * gradients. Under ASan this also checks that the lanes free what they take. */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/copy_cpu.h"
#include "exec/memcount.h"
#include "exec/xformer.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/xalloc.h"

static struct xformer_act *forward(struct xformer_stage *s, const int *tokens, const int *targets,
                                   int B, int T)
{
    struct mt_err e = {0};
    struct xformer_act *a = NULL;
    float loss = 0;
    CHECK(xformer_forward(s, tokens, NULL, targets, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss, &a,
                          &e) == MT_OK);
    return a;
}

int main(void)
{
    struct xformer_dims d = {
        .vocab = 32, .max_seq = 8, .channels = 16, .heads = 2, .ffn = 64, .layers = 2};
    int B = 2, T = 8;
    size_t N = (size_t)B * T;
    int *tokens = xmalloc(N * sizeof(int)), *targets = xmalloc(N * sizeof(int));
    for (size_t i = 0; i < N; i++) {
        tokens[i] = (int)((i * 7 + 3) % (size_t)d.vocab);
        targets[i] = (int)((i * 5 + 1) % (size_t)d.vocab);
    }
    struct mt_err e = {0};
    struct xformer_stage *kept = NULL, *moved = NULL;
    CHECK(xformer_stage_create(&d, 0, 2, 1337, &kept, &e) == MT_OK);
    CHECK(xformer_stage_create(&d, 0, 2, 1337, &moved, &e) == MT_OK);

    struct xformer_act *a = forward(kept, tokens, targets, B, T);
    size_t before = memcount_current();
    struct xformer_act *b = forward(moved, tokens, targets, B, T);
    size_t act = memcount_current() - before;
    CHECK(act > 0);

    /* OF: the device blocks stay until copy_end, then the bytes move to the host pool */
    void *rec = NULL;
    bool done = false;
    CHECK(copy_cpu_start(b, &rec, &e) == MT_OK);
    CHECK_EQ_INT(memcount_current(), before + act);
    CHECK(copy_cpu_test(rec, true, &done, &e) == MT_OK && done);
    CHECK_EQ_INT(memcount_host_current(), act);
    copy_cpu_end(rec);
    CHECK_EQ_INT(memcount_current(), before);
    CHECK_EQ_INT(memcount_host_current(), act);

    /* RL: the device blocks are taken at its start; the host pool empties at its end */
    CHECK(copy_cpu_start(b, &rec, &e) == MT_OK);
    CHECK_EQ_INT(memcount_current(), before + act);
    copy_cpu_help(rec); /* runs it here unless the lane's thread took it first */
    CHECK(copy_cpu_test(rec, true, &done, &e) == MT_OK && done);
    copy_cpu_end(rec);
    CHECK_EQ_INT(memcount_host_current(), 0);
    CHECK_EQ_INT(memcount_host_peak(), act);

    /* the same values: byte-identical gradients */
    CHECK(xformer_backward(&a, NULL, NULL, &e) == MT_OK);
    CHECK(xformer_backward(&b, NULL, NULL, &e) == MT_OK);
    size_t n = xformer_stage_nparams(kept);
    CHECK(memcmp(xformer_stage_grads(kept), xformer_stage_grads(moved), n * sizeof(float)) == 0);

    /* a copy dropped on an error path: its host copies go, the handle keeps its blocks */
    struct xformer_act *c = forward(moved, tokens, targets, B, T);
    rec = NULL;
    CHECK(copy_cpu_start(c, &rec, &e) == MT_OK);
    CHECK(copy_cpu_test(rec, true, &done, &e) == MT_OK && done);
    copy_cpu_drop(rec);
    CHECK_EQ_INT(memcount_host_current(), 0);
    xformer_act_free(c);
    copy_cpu_close();

    xformer_stage_free(kept);
    xformer_stage_free(moved);
    CHECK_EQ_INT(memcount_current(), 0);
    free(tokens);
    free(targets);
    return check_report("test_copy_cpu");
}
