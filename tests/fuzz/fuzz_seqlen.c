/* tests/fuzz/fuzz_seqlen.c: sequence lengths that vary from batch to batch (model/seqlen.c)
 * on arbitrary bytes: a lengths file (`--lengths FILE`, seqlen_parse), or, when the input
 * starts with '{', a config whose model.seq_length is a distribution {"values", "weights"}
 * (model/seqlen_json.c reads it, seqlen_sample_load turns it into a sample). Then what
 * `mario-tui plan-inputs` does with the lengths: the input-aware checkpointing report
 * (sim/inputs/ckpt_plan.c) over them, for a small model whose largest position is FUZZ_LIMIT.
 * Invariants: a refused lengths file is MT_EINVAL with a message that starts with the file
 * name and leaves the sample empty; a sample holds n >= 1 lengths in [1, its limit] whose
 * min, max and total weight are what they say; a config's sample is refused with a message
 * or has those properties; the report either refuses with a message (a length beyond the
 * planner's, a cap no choice meets) or has buckets that hold the whole sample, in order, and
 * finite, positive throughputs. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "model/seqlen.h"
#include "sim/inputs/ckpt_plan.h"
#include "tests/fuzz/fuzz.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz.lengths"
#define FUZZ_CONFIG_NAME "fuzz.json"
#define FUZZ_LIMIT 2048 /* the planner's largest position (tokens) */
#define FUZZ_WIDTH 128  /* bucket width (tokens) */

/* tiny on 2 devices, 4 micro-batches of 2, capped at 1.2 GB: lengths up to about 1500 tokens
 * need no checkpointing, the longest need some layers checkpointed; built once. */
static const struct ckpt_plan *fuzz_seqlen_planner(void)
{
    static struct ckpt_plan *cp;
    if (cp == NULL) {
        struct config c;
        struct mt_err e;
        config_default(&c);
        FUZZ_CHECK(presets_model("tiny", &c.model, &e) == MT_OK, "%s", e.msg);
        c.model.seq_length = FUZZ_LIMIT;
        c.num_device = 2;
        c.micro_batch_size = 2;
        c.num_microbatches = 4;
        c.global_batch_size = 8;
        c.memory_per_device = 1.2e9;
        FUZZ_CHECK(ckpt_plan_new(&c, FUZZ_LIMIT, &cp, &e) == MT_OK, "no planner: %s", e.msg);
    }
    return cp;
}

static void fuzz_seqlen_check(const struct seqlen_sample *s, int limit)
{
    FUZZ_CHECK(s->n >= 1 && s->len != NULL && s->weight != NULL, "%d lengths", s->n);
    int lo = s->len[0], hi = s->len[0];
    double total = 0;
    for (int i = 0; i < s->n; i++) {
        FUZZ_CHECK(s->len[i] >= 1 && (limit <= 0 || s->len[i] <= limit),
                   "length %d: %d tokens (limit %d)", i, s->len[i], limit);
        FUZZ_CHECK(isfinite(s->weight[i]) && s->weight[i] >= 0, "weight %d: %g", i, s->weight[i]);
        lo = s->len[i] < lo ? s->len[i] : lo;
        hi = s->len[i] > hi ? s->len[i] : hi;
        total += s->weight[i];
    }
    FUZZ_CHECK(s->min_len == lo && s->max_len == hi, "min %d max %d, not %d %d", s->min_len,
               s->max_len, lo, hi);
    FUZZ_CHECK(s->total_weight > 0 && fabs(s->total_weight - total) <= 1e-9 * total,
               "total weight %g, not %g", s->total_weight, total);
}

static void fuzz_seqlen_report(const struct seqlen_sample *s)
{
    const struct ckpt_plan *cp = fuzz_seqlen_planner();
    struct ckpt_plan_report r;
    struct mt_err e;
    err_clear(&e);
    int rc = ckpt_plan_report_build(cp, s, FUZZ_WIDTH, false, &r, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(e.msg[0] != '\0' && e.code == rc, "report refused (%d) without a message", rc);
        FUZZ_CHECK(s->max_len > FUZZ_LIMIT || rc == MT_EINVAL, "refused (%d): %s", rc, e.msg);
        return;
    }
    FUZZ_CHECK(s->max_len <= FUZZ_LIMIT, "a length of %d tokens was planned", s->max_len);
    FUZZ_CHECK(r.n >= 1 && r.n <= (FUZZ_LIMIT + FUZZ_WIDTH - 1) / FUZZ_WIDTH, "%d buckets", r.n);
    double w = 0;
    for (int i = 0; i < r.n; i++) {
        FUZZ_CHECK(r.b[i].lo < r.b[i].s && (i == 0 || r.b[i].lo >= r.b[i - 1].s),
                   "bucket %d: (%d, %d]", i, r.b[i].lo, r.b[i].s);
        w += r.b[i].weight;
    }
    FUZZ_CHECK(fabs(w - s->total_weight) <= 1e-9 * s->total_weight, "buckets hold %g of %g", w,
               s->total_weight);
    for (int t = 0; t < CKPT_PLAN__STRATEGIES; t++)
        FUZZ_CHECK(isfinite(r.throughput[t]) && r.throughput[t] > 0, "throughput %d: %g", t,
                   r.throughput[t]);
    FUZZ_CHECK(r.cache.hits + r.cache.misses == s->n, "%ld hits + %ld misses for %d lengths",
               r.cache.hits, r.cache.misses, s->n);
    ckpt_plan_report_fini(&r);
}

/* A config's model.seq_length (a number, a distribution or a file) as a sample. */
static void fuzz_seqlen_config(const char *text, size_t size)
{
    struct config c;
    struct mt_err e;
    err_clear(&e);
    if (config_load_string(text, size, FUZZ_CONFIG_NAME, &c, &e) != MT_OK) {
        FUZZ_CHECK(strncmp(e.msg, FUZZ_CONFIG_NAME ":", strlen(FUZZ_CONFIG_NAME ":")) == 0,
                   "message does not start with the file name: %s", e.msg);
        return;
    }
    struct seqlen_sample s;
    int rc = seqlen_sample_load(&c, &s, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(e.msg[0] != '\0' && e.code == rc, "sample refused (%d) without a message", rc);
        FUZZ_CHECK(s.n == 0 && s.len == NULL, "a sample left on failure");
        return;
    }
    fuzz_seqlen_check(&s, seqlen_limit(&c));
    FUZZ_CHECK(c.seqlen.kind == SEQLEN_FIXED || s.max_len == c.model.seq_length,
               "model.seq_length %d, but the longest length is %d", c.model.seq_length, s.max_len);
    fuzz_seqlen_report(&s);
    seqlen_sample_fini(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    if (size > 0 && text[0] == '{') {
        fuzz_seqlen_config(text, size);
        return 0;
    }
    struct seqlen_sample s;
    struct mt_err e;
    err_clear(&e);
    memset(&s, 0xA5, sizeof s); /* must be emptied on failure */
    int rc = seqlen_parse(text, size, FUZZ_NAME, FUZZ_LIMIT, &s, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EINVAL, "unexpected code %d: %s", rc, e.msg);
        FUZZ_CHECK(e.code == rc, "code %d but the message says %d", rc, e.code);
        FUZZ_CHECK(strncmp(e.msg, FUZZ_NAME ":", strlen(FUZZ_NAME ":")) == 0,
                   "message does not start with the file name: %s", e.msg);
        FUZZ_CHECK(s.n == 0 && s.len == NULL && s.weight == NULL, "a sample left on failure");
        return 0;
    }
    fuzz_seqlen_check(&s, FUZZ_LIMIT);
    for (int i = 0; i < s.n; i++)
        FUZZ_CHECK(s.weight[i] == 1.0, "a file's length %d has weight %g", i, s.weight[i]);
    fuzz_seqlen_report(&s);
    seqlen_sample_fini(&s);
    return 0;
}
