/* tests/unit/test_copy_cpu.c: the CPU backend's copy lanes for offload (exec/copy_cpu.c). Two
 * stages of the same seed run the same forward; one handle stays, the other is offloaded (OF)
 * and reloaded (RL). What is known without the code: OF gives back exactly the bytes the
 * forward kept and the host pool takes exactly those (counted apart); RL takes them back and
 * the host pool returns to 0; a copy changes no value, so both backwards give byte-identical
 * gradients. Under ASan this also checks that the lanes free what they take.
 * Many small copies in flight (test_many_copies), as a rank with offload keeps them: each
 * handle's blocks hold after OF and RL exactly the bytes the forward left (a copy changes no
 * value) and the counts return to the forward's; under ThreadSanitizer (./configure
 * --enable-tsan) this is the lanes' race check, with the rank's thread allocating, polling and
 * helping while both lanes copy. */
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

/* The bytes of a's blocks, one after another (a snapshot to compare with). */
static unsigned char *act_bytes(struct xformer_act *a, size_t *len)
{
    int n = xformer_act_nblocks(a);
    void ***slots = xcalloc((size_t)n, sizeof *slots);
    xformer_act_blocks(a, slots);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += *slots[i] ? memcount_size(*slots[i]) : 0;
    unsigned char *out = xmalloc(total ? total : 1), *at = out;
    for (int i = 0; i < n; i++)
        if (*slots[i] != NULL) {
            memcpy(at, *slots[i], memcount_size(*slots[i]));
            at += memcount_size(*slots[i]);
        }
    free(slots);
    *len = total;
    return out;
}

/* 64 forwards, each offloaded right after it; from the 8th on, the RL of the one 8 before
 * (its OF may still be queued: the RL waits for it, as interp_copy does); between
 * instructions, copies polled without waiting and the RLs helped, as exec/interp_offload.c
 * does before compute. */
static void test_many_copies(const struct xformer_dims *d, const int *tokens, const int *targets,
                             int B, int T)
{
    enum { NACT = 64, LAG = 8 };
    struct mt_err e = {0};
    struct xformer_stage *s = NULL;
    CHECK(xformer_stage_create(d, 0, 2, 7, &s, &e) == MT_OK);
    struct xformer_act *act[NACT];
    void *rec[NACT] = {0};
    unsigned char *snap[NACT];
    size_t len[NACT], base = memcount_current(), per = 0;
    bool ended[NACT] = {0}, done = false;
    for (int i = 0; i < NACT + LAG; i++) {
        if (i < NACT) {
            size_t before = memcount_current();
            act[i] = forward(s, tokens, targets, B, T);
            per = memcount_current() - before;
            snap[i] = act_bytes(act[i], &len[i]);
            CHECK(copy_cpu_start(act[i], &rec[i], &e) == MT_OK); /* OF */
        }
        int j = i - LAG;
        if (j >= 0) {
            CHECK(copy_cpu_test(rec[j], true, &done, &e) == MT_OK && done); /* RL after OF */
            if (!ended[j])
                copy_cpu_end(rec[j]);
            CHECK(copy_cpu_start(act[j], &rec[j], &e) == MT_OK); /* RL */
            copy_cpu_help(rec[j]);
            CHECK(copy_cpu_test(rec[j], true, &done, &e) == MT_OK && done);
            copy_cpu_end(rec[j]);
            size_t n = 0;
            unsigned char *now = act_bytes(act[j], &n);
            CHECK(n == len[j] && memcmp(now, snap[j], n) == 0);
            free(now);
            free(snap[j]);
            xformer_act_free(act[j]);
        }
        for (int k = j + 1; k < i && k < NACT; k++) /* OFs in flight: end those done */
            if (k >= 0 && !ended[k] && copy_cpu_test(rec[k], false, &done, &e) == MT_OK && done) {
                copy_cpu_end(rec[k]);
                ended[k] = true;
            }
    }
    CHECK(per > 0);
    CHECK_EQ_INT(memcount_current(), base);
    CHECK_EQ_INT(memcount_host_current(), 0);
    /* at most LAG + 1 handles were offloaded at once, each holding its forward's bytes */
    CHECK(memcount_host_peak() >= per && memcount_host_peak() <= (LAG + 1) * per);
    copy_cpu_close();
    xformer_stage_free(s);
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

    test_many_copies(&d, tokens, targets, B, T);

    xformer_stage_free(kept);
    xformer_stage_free(moved);
    CHECK_EQ_INT(memcount_current(), 0);
    free(tokens);
    free(targets);
    return check_report("test_copy_cpu");
}
