/* tests/unit/test_inputs.c: input-aware checkpointing (issue 12): lengths files and the
 * config's seq_length forms (model/seqlen.c, model/config_json.c), per-layer bytes and FLOPs
 * as functions of s (model/cost.c) checked against Korthikanti's Table 2 and against the
 * executor's counting allocator, selective checkpointing in the simulator's memory walk
 * (sim/core/simulate.c), the planner and its cache (sim/inputs/ckpt_plan.c), and the memory predictor
 * (model/memfit.c). Expected values come from closed forms written out here, hand-worked
 * memory walks, brute force over every choice, or the simulator itself where the test is that
 * the planner's profile agrees with it - never from the code under test alone. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/memcount.h"
#include "exec/xformer.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/memfit.h"
#include "model/presets.h"
#include "model/seqlen.h"
#include "sim/inputs/ckpt_plan.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/xalloc.h"

static const char *srcdir(void)
{
    const char *d = getenv("top_srcdir");
    return d != NULL && d[0] != '\0' ? d : ".";
}

static void must(int rc, const struct mt_err *e, const char *what)
{
    if (rc != MT_OK) {
        fprintf(stderr, "%s: %s\n", what, e->msg);
        exit(1);
    }
}

static unsigned long rng_state = 12345;

static int rng_int(int n)
{
    rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
    return (int)((rng_state >> 33) % (unsigned long)n);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* ---- lengths files ---------------------------------------------------------------------- */

static int parse(const char *text, int limit, struct seqlen_sample *s, struct mt_err *e)
{
    err_clear(e);
    return seqlen_parse(text, strlen(text), "l.txt", limit, s, e);
}

static void test_lengths_parse(void)
{
    struct seqlen_sample s;
    struct mt_err e;
    CHECK_EQ_INT(parse("100 200\n# a comment 999\n300 # trailing\n", 1024, &s, &e), MT_OK);
    CHECK_EQ_INT(s.n, 3);
    CHECK_EQ_INT(s.min_len, 100);
    CHECK_EQ_INT(s.max_len, 300);
    CHECK_NEAR(s.total_weight, 3, 0);
    CHECK_EQ_INT(s.len[2], 300);
    seqlen_sample_fini(&s);

    CHECK_EQ_INT(parse("", 1024, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "l.txt: no lengths");
    CHECK_EQ_INT(parse("# only a comment\n\n   \n", 1024, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "no lengths");
    CHECK_EQ_INT(parse("100\n2x0\n", 1024, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "l.txt:2:1: '2x0' is not a length");
    CHECK_EQ_INT(parse("  5\n 0\n", 1024, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "l.txt:2:2: length 0");
    CHECK_EQ_INT(parse("10 2000\n", 1024, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg,
                       "l.txt:1:4: length 2000 is beyond the model's largest position (1024");
    CHECK_EQ_INT(parse("-5\n", 1024, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "'-5' is not a length");
    CHECK_EQ_INT(parse("99999999999999999999\n", 0, &s, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "beyond the model's largest position");

    /* The shipped sample (data/lengths.txt, scripts/make_lengths.sh): 1,522 paragraphs and
     * windows of the corpus, 1 to 1024 tokens (counted with awk over the file). */
    char path[1024];
    snprintf(path, sizeof path, "%s/data/lengths.txt", srcdir());
    CHECK_EQ_INT(seqlen_read_file(path, 1024, &s, &e), MT_OK);
    CHECK_EQ_INT(s.n, 1522);
    CHECK_EQ_INT(s.min_len, 1);
    CHECK_EQ_INT(s.max_len, 1024);
    seqlen_sample_fini(&s);
    CHECK_EQ_INT(seqlen_read_file(path, 512, &s, &e), MT_EINVAL); /* longer than 512 inside */
    CHECK_STR_CONTAINS(e.msg, "beyond the model's largest position (512");
    CHECK_EQ_INT(seqlen_read_file("/nonexistent/lengths.txt", 0, &s, &e), MT_EIO);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent/lengths.txt");
    CHECK_EQ_INT(seqlen_read_file("/dev/null", 0, &s, &e), MT_EIO); /* not a regular file */

    CHECK_EQ_INT(seqlen_bucket(1, 64), 1);
    CHECK_EQ_INT(seqlen_bucket(64, 64), 1);
    CHECK_EQ_INT(seqlen_bucket(65, 64), 2);
    CHECK_EQ_INT(seqlen_bucket_len(2, 64, 1000), 128);
    CHECK_EQ_INT(seqlen_bucket_len(16, 64, 1000), 1000);
}

/* ---- the config's forms ----------------------------------------------------------------- */

static void test_config_forms(void)
{
    char dir[] = "/tmp/mt_inputs_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
    char p_len[128], p_bad[128], p_empty[128], p_cfg[128], p_cfg2[128], p_cfg3[128];
    snprintf(p_len, sizeof p_len, "%s/l.txt", dir);
    snprintf(p_bad, sizeof p_bad, "%s/bad.txt", dir);
    snprintf(p_empty, sizeof p_empty, "%s/empty.txt", dir);
    snprintf(p_cfg, sizeof p_cfg, "%s/c.json", dir);
    snprintf(p_cfg2, sizeof p_cfg2, "%s/c2.json", dir);
    snprintf(p_cfg3, sizeof p_cfg3, "%s/c3.json", dir);
    write_file(p_len, "300\n700\n# end\n");
    write_file(p_bad, "300\nseven hundred\n");
    write_file(p_empty, "");
    /* a relative path is the config file's folder's */
    write_file(p_cfg, "{\"model\": {\"preset\": \"GPT3-1.6B\", \"seq_length\": \"l.txt\"}}\n");
    write_file(p_cfg2,
               "{\"model\": {\"preset\": \"GPT3-1.6B\",\n  \"seq_length\": \"bad.txt\"}}\n");
    write_file(p_cfg3, "{\"model\": {\"preset\": \"GPT3-1.6B\", \"seq_length\": \"empty.txt\"}}\n");

    struct config c, d;
    struct mt_err e = {0};
    CHECK_EQ_INT(config_load_file(p_cfg, &c, &e), MT_OK);
    CHECK_EQ_INT(c.seqlen.kind, SEQLEN_FILE);
    CHECK_EQ_INT(c.model.seq_length, 700);      /* the longest */
    CHECK_EQ_INT(c.seqlen.max_positions, 1024); /* the preset's length (Table 4) */
    CHECK_STR_CONTAINS(c.seqlen.path, "/l.txt");
    struct seqlen_sample s;
    CHECK_EQ_INT(seqlen_sample_load(&c, &s, &e), MT_OK);
    CHECK_EQ_INT(s.n, 2);
    seqlen_sample_fini(&s);
    /* saved and loaded back: the same spec */
    char *text = config_to_json(&c);
    CHECK_EQ_INT(config_load_string(text, strlen(text), "saved.json", &d, &e), MT_OK);
    CHECK_EQ_INT(d.seqlen.kind, SEQLEN_FILE);
    CHECK(strcmp(d.seqlen.path, c.seqlen.path) == 0);
    CHECK_EQ_INT(d.model.seq_length, 700);
    free(text);

    err_clear(&e);
    CHECK_EQ_INT(config_load_file(p_cfg2, &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "c2.json:2:3: model.seq_length: lengths file 'bad.txt': ");
    CHECK_STR_CONTAINS(e.msg, "bad.txt:2:1: 'seven' is not a length");
    err_clear(&e);
    CHECK_EQ_INT(config_load_file(p_cfg3, &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "no lengths");

    static const char dist[] = "{\"model\": {\"preset\": \"GPT3-1.6B\",\n"
                               "  \"seq_length\": {\"values\": [256, 512, 128], "
                               "\"weights\": [3, 1, 0.5]}}}";
    CHECK_EQ_INT(config_load_string(dist, strlen(dist), "d.json", &c, &e), MT_OK);
    CHECK_EQ_INT(c.seqlen.kind, SEQLEN_DIST);
    CHECK_EQ_INT(c.seqlen.n, 3);
    CHECK_EQ_INT(c.model.seq_length, 512);
    CHECK_NEAR(c.seqlen.weights[2], 0.5, 0);
    text = config_to_json(&c);
    CHECK_EQ_INT(config_load_string(text, strlen(text), "saved.json", &d, &e), MT_OK);
    CHECK_EQ_INT(d.seqlen.kind, SEQLEN_DIST);
    CHECK_EQ_INT(d.seqlen.n, 3);
    CHECK_EQ_INT(d.seqlen.values[1], 512);
    CHECK_NEAR(d.seqlen.weights[0], 3, 0);
    CHECK_NEAR(d.seqlen.weights[2], 0.5, 0);
    CHECK_EQ_INT(d.seqlen.max_positions, 1024);
    free(text);

    static const char fixed[] = "{\"model\": {\"preset\": \"tiny\", \"seq_length\": 32, "
                                "\"max_position_embeddings\": 1024}}";
    CHECK_EQ_INT(config_load_string(fixed, strlen(fixed), "f.json", &c, &e), MT_OK);
    CHECK_EQ_INT(c.seqlen.kind, SEQLEN_FIXED);
    CHECK_EQ_INT(c.model.seq_length, 32);
    CHECK_EQ_INT(seqlen_limit(&c), 1024);

    static const char over[] = "{\"model\": {\"preset\": \"GPT3-1.6B\", \"seq_length\": "
                               "{\"values\": [256, 4096]}}}";
    err_clear(&e);
    CHECK_EQ_INT(config_load_string(over, strlen(over), "o.json", &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "o.json:1:50: model.seq_length.values[1]: length 4096 is beyond");
    static const char nw[] = "{\"model\": {\"seq_length\": {\"values\": [256], \"weights\": []}}}";
    err_clear(&e);
    CHECK_EQ_INT(config_load_string(nw, strlen(nw), "w.json", &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "model.seq_length.weights: expected an array of 1 weights");
    static const char typo[] = "{\"model\": {\"seq_length\": {\"value\": [256]}}}";
    err_clear(&e);
    CHECK_EQ_INT(config_load_string(typo, strlen(typo), "t.json", &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "did you mean 'values'");
    static const char zero[] = "{\"model\": {\"seq_length\": {\"values\": [1, 2], "
                               "\"weights\": [0, 0]}}}";
    err_clear(&e);
    CHECK_EQ_INT(config_load_string(zero, strlen(zero), "z.json", &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "must not all be 0");

    /* --lengths FILE on a config: the limit is the model's, the longest becomes seq_length */
    config_default(&c);
    char path[1024];
    snprintf(path, sizeof path, "%s/data/lengths.txt", srcdir());
    CHECK_EQ_INT(seqlen_config_use_file(&c, path, NULL, &e), MT_OK);
    CHECK_EQ_INT(c.model.seq_length, 1024);
    CHECK_EQ_INT(c.seqlen.max_positions, 1024);
    presets_model("tiny", &c.model, NULL);
    c.seqlen.max_positions = 0; /* tiny: 64 positions */
    err_clear(&e);
    CHECK_EQ_INT(seqlen_config_use_file(&c, path, NULL, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "beyond the model's largest position (64");

    unlink(p_len);
    unlink(p_bad);
    unlink(p_empty);
    unlink(p_cfg);
    unlink(p_cfg2);
    unlink(p_cfg3);
    rmdir(dir);
}

/* ---- bytes and FLOPs as functions of s ------------------------------------------------- */

static void test_layer_costs(void)
{
    struct config c;
    config_default(&c); /* GPT3-1.6B: h 1024, a 16, f = 4h, b 1, t 1 */
    double h = 1024, a = 16, b = 1;
    int lens[] = {1, 128, 517, 1024};
    for (int i = 0; i < 4; i++) {
        double s = lens[i];
        /* Korthikanti et al. Table 2, no parallelism: 34sbh + 5as^2b */
        CHECK_NEAR(cost_layer_act_bytes_at(&c, lens[i]), 34 * s * b * h + 5 * a * s * s * b, 1e-3);
        /* Narayanan et al. eq. 2 per layer at f = 4h: 24bsh^2 + 4bs^2h */
        CHECK_NEAR(cost_layer_fw_flops_at(&c, lens[i]), 24 * b * s * h * h + 4 * b * s * s * h,
                   1e-3 * s * h * h);
    }
    CHECK_NEAR(cost_layer_act_bytes(&c), cost_layer_act_bytes_at(&c, c.model.seq_length), 0);
    presets_model("LLaMA2-13B", &c.model, NULL); /* h 4096, a 32, f 11008 */
    double s = 777, H = 4096, F = 11008;
    CHECK_NEAR(cost_layer_act_bytes_at(&c, 777), s * H * (8 + 8 + 8 * F / H) + 2 * 32 * s * s,
               1e-3);

    /* The executor's model, exactly: one layer's bytes are the difference between a two-layer
     * and a one-layer middle stage, in the closed form and as its counting allocator measures
     * them. */
    struct xformer_dims d = {
        .vocab = 256, .max_seq = 1024, .channels = 64, .heads = 4, .ffn = 256, .layers = 8};
    presets_model("tiny", &c.model, NULL); /* the same dims */
    CHECK_EQ_INT(c.model.hidden_size, d.channels);
    CHECK_EQ_INT(c.model.num_attention_heads, d.heads);
    CHECK_EQ_INT(c.model.ffn_hidden_size, d.ffn);
    int T[] = {1, 7, 64, 100, 333, 1024};
    for (int B = 1; B <= 2; B++) {
        c.micro_batch_size = B;
        for (int i = 0; i < 6; i++) {
            struct xformer_act_size one = xformer_act_bytes(&d, 1, 1, B, T[i]);
            struct xformer_act_size two = xformer_act_bytes(&d, 1, 2, B, T[i]);
            CHECK_EQ_INT((long long)cost_layer_act_bytes_exec(&c, T[i]),
                         (long long)(two.full_bytes - one.full_bytes));
        }
    }
    /* measured: FW of a middle stage of 1 and of 2 layers, B = 1 */
    c.micro_batch_size = 1;
    int Tm[] = {5, 17, 40};
    struct mt_err e = {0};
    for (int i = 0; i < 3; i++) {
        size_t held[3] = {0};
        for (int n = 1; n <= 2; n++) {
            struct xformer_stage *st = NULL;
            must(xformer_stage_create(&d, 1, n, 7, &st, &e), &e, "stage");
            size_t nc = (size_t)Tm[i] * d.channels;
            float *in = xcalloc(nc, sizeof(float)), *out = xcalloc(nc, sizeof(float));
            for (size_t q = 0; q < nc; q++)
                in[q] = (float)((q % 13) - 6) * 0.1f;
            size_t base = memcount_current();
            struct xformer_act *act = NULL;
            must(xformer_forward(st, NULL, in, NULL, 1, Tm[i], XFORMER_KEEP_FULL, 0, out, NULL, &act,
                                 &e),
                 &e, "forward");
            held[n] = memcount_current() - base;
            xformer_act_free(act);
            xformer_stage_free(st);
            free(in);
            free(out);
        }
        CHECK_EQ_INT((long long)cost_layer_act_bytes_exec(&c, Tm[i]),
                     (long long)(held[2] - held[1]));
    }
}

/* ---- selective checkpointing in the executor: measured = the model's formula ------------ */

/* The peak and the memory after each instruction of a one-device list of stage 0 under one
 * stage's costs (sim/core/simulate.c's memory walk, static bytes left out). */
static double walk(const struct config *c, struct stage_cost *sc, const int *ops, int nops, int k,
                   double *after)
{
    struct plan_geom g = {SCHEME_GPIPE, 1, 1, 1, 1};
    struct cost_model cost = {.num_stages = 1, .parts_per_device = 1, .stage = sc};
    struct plan *p = plan_new(c, &g);
    for (int i = 0; i < nops; i++) {
        struct instr in = {(enum op)ops[i], 0, 0, 0, -1, 0, ops[i] == OP_BW ? 0 : k, 0};
        plan_append(p, 0, in);
    }
    struct sim_result r;
    struct mt_err e = {0};
    must(sim_run_costs(p, &cost, &r, &e), &e, "walk");
    for (int i = 0; after != NULL && i < nops; i++)
        after[i] = r.mem_after[i] - r.dev[0].static_mem;
    double peak = r.dev[0].peak_dynamic;
    sim_result_fini(&r);
    plan_free(p);
    return peak;
}

static void test_selective_exec(void)
{
    /* The tiny model with 1024 positions; stages of 3 layers at the front, in the middle and at
     * the end of 8, and the whole model; B x T micro-batches; every k. For each: the executor's
     * CFW(k), RC and BW measured by its counting allocator, and the simulator's memory walk
     * (mem_ckpt_keep and the transients) on cost_stage_bytes_exec's figures: equal, exactly. */
    struct config c;
    config_default(&c);
    presets_model("tiny", &c.model, NULL);
    c.seqlen.max_positions = 1024;
    struct xformer_dims d = {.vocab = c.model.vocab_size,
                             .max_seq = 1024,
                             .channels = c.model.hidden_size,
                             .heads = c.model.num_attention_heads,
                             .ffn = c.model.ffn_hidden_size,
                             .layers = c.model.num_layers};
    static const int stages[][2] = {{0, 3}, {2, 3}, {5, 3}, {0, 8}};
    static const int Ts[] = {7, 64, 333};
    struct mt_err e = {0};
    int cases = 0;
    for (int B = 1; B <= 2; B++) {
        c.micro_batch_size = B;
        for (size_t si = 0; si < sizeof stages / sizeof stages[0]; si++) {
            int first = stages[si][0], n = stages[si][1];
            int is_first = first == 0, is_last = first + n == d.layers;
            for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
                int T = Ts[ti];
                size_t N = (size_t)B * T, NC = N * d.channels;
                int *tok = xmalloc(N * sizeof(int)), *tgt = xmalloc(N * sizeof(int));
                float *in = xmalloc(NC * sizeof(float)), *out = xmalloc(NC * sizeof(float));
                float *dout = xmalloc(NC * sizeof(float)), *din = xmalloc(NC * sizeof(float));
                for (size_t q = 0; q < N; q++) {
                    tok[q] = (int)(q * 7 % 256);
                    tgt[q] = (int)(q * 11 % 256);
                }
                for (size_t q = 0; q < NC; q++) {
                    in[q] = (float)((q % 13) - 6) * 0.1f;
                    dout[q] = (float)((q % 5) - 2) * 0.01f;
                }
                struct stage_cost sc = {.first_layer = first, .num_layers = n};
                cost_stage_bytes_exec(&c, T, &sc);
                size_t s0 = memcount_current();
                struct xformer_stage *st = NULL;
                must(xformer_stage_create(&d, first, n, 7, &st, &e), &e, "stage");
                CHECK_EQ_INT((long long)sc.static_bytes, (long long)(memcount_current() - s0));
                for (int k = 1; k <= n; k++) {
                    size_t base = memcount_current();
                    memcount_reset_peak();
                    struct xformer_act *a = NULL;
                    float loss;
                    must(xformer_forward(st, is_first ? tok : NULL, is_first ? NULL : in,
                                         is_last ? tgt : NULL, B, T, XFORMER_KEEP_CHECKPOINT,
                                         k == n ? 0 : k, is_last ? NULL : out,
                                         is_last ? &loss : NULL, &a, &e),
                         &e, "cfw");
                    double keep = (double)(memcount_current() - base);
                    double cfw_peak = (double)(memcount_peak() - base);
                    must(xformer_recompute(a, &e), &e, "rc");
                    double full = (double)(memcount_current() - base);
                    must(xformer_backward(&a, is_last ? NULL : dout, is_first ? NULL : din, &e),
                         &e, "bw");
                    double peak = (double)(memcount_peak() - base);
                    CHECK_EQ_INT((long long)memcount_current(), (long long)base);
                    int kk = k == n ? 0 : k;
                    int cfw_only[] = {OP_CFW}, all[] = {OP_CFW, OP_RC, OP_BW};
                    double after[3];
                    double walk_peak = walk(&c, &sc, all, 3, kk, after);
                    CHECK_EQ_INT((long long)after[0], (long long)keep);
                    CHECK_EQ_INT((long long)after[1], (long long)full);
                    CHECK_EQ_INT((long long)sc.act, (long long)full);
                    CHECK_EQ_INT((long long)after[2], 0);
                    CHECK_EQ_INT((long long)walk_peak, (long long)peak);
                    /* the CFW's own peak: equal, but where one stage holds the whole model
                     * (its head beside the scratch) the walk may be higher, never lower */
                    double wc = walk(&c, &sc, cfw_only, 1, kk, NULL);
                    if (is_first && is_last)
                        CHECK(wc >= cfw_peak);
                    else
                        CHECK_EQ_INT((long long)wc, (long long)cfw_peak);
                    /* and the executor's closed form */
                    struct xformer_sel_size sel = xformer_sel_bytes(&d, first, n, kk, B, T);
                    CHECK_EQ_INT((long long)sel.keep_bytes, (long long)keep);
                    CHECK_EQ_INT((long long)sel.rc_bytes, (long long)(full - keep));
                    cases++;
                }
                { /* split backward: FW, B (keeps its W's buffer, frees the activations), W */
                    size_t base = memcount_current();
                    memcount_reset_peak();
                    struct xformer_act *a = NULL;
                    struct xformer_wgrad *w = NULL;
                    float loss;
                    must(xformer_forward(st, is_first ? tok : NULL, is_first ? NULL : in,
                                         is_last ? tgt : NULL, B, T, XFORMER_KEEP_FULL, 0,
                                         is_last ? NULL : out, is_last ? &loss : NULL, &a, &e),
                         &e, "fw");
                    double full = (double)(memcount_current() - base);
                    must(xformer_backward_input(&a, is_last ? NULL : dout, is_first ? NULL : din,
                                                &w, &e),
                         &e, "b");
                    double kept = (double)(memcount_current() - base);
                    must(xformer_backward_weight(&w, &e), &e, "w");
                    double peak = (double)(memcount_peak() - base);
                    CHECK_EQ_INT((long long)memcount_current(), (long long)base);
                    int split[] = {OP_FW, OP_B, OP_W};
                    double after[3];
                    double walk_peak = walk(&c, &sc, split, 3, 0, after);
                    CHECK_EQ_INT((long long)after[0], (long long)full);
                    CHECK_EQ_INT((long long)after[1], (long long)kept);
                    CHECK_EQ_INT((long long)sc.w_keep, (long long)kept);
                    CHECK_EQ_INT((long long)after[2], 0);
                    CHECK_EQ_INT((long long)walk_peak, (long long)peak);
                    cases++;
                }
                xformer_stage_free(st);
                free(tok);
                free(tgt);
                free(in);
                free(out);
                free(dout);
                free(din);
            }
        }
    }
    printf("selective checkpointing: %d (stage, B, T, k) cases, executor bytes = model formula\n",
           cases);
}

/* ---- selective checkpointing in the simulator's memory walk ------------------------------ */

static void test_selective_memory(void)
{
    /* One device, one stage of 4 layers, 2 micro-batches (GPipe): hand-made costs. A full
     * forward keeps 100 (4 layers of 24 + 4 of head), the checkpoint 2. CFW of k = 2 layers
     * keeps 100 - 2 x 24 + 2 = 54; its RC brings back 46. Walk: 54, 108, +46 = 154, -100 = 54,
     * +46 = 100, -100 = 0: peak 154. Whole stage (ckpt_layers 0 or 4): 2, 4, 102, 2, 100, 0. */
    struct config c;
    config_default(&c);
    c.scheme = SCHEME_GPIPE;
    c.num_device = 1;
    c.num_microbatches = 2;
    c.memory_per_device = 0;
    struct plan_geom g = {SCHEME_GPIPE, 1, 1, 1, 2};
    struct cost_model cost = {0};
    struct stage_cost sc = {.first_layer = 0,
                            .num_layers = 4,
                            .fw = 1,
                            .bw = 2,
                            .rc = 1,
                            .act = 100,
                            .ckpt = 2,
                            .layer_act = 24,
                            .sel_ckpt = 2};
    cost.num_stages = 1;
    cost.parts_per_device = 1;
    cost.stage = &sc;
    int ks[] = {2, 0, 4, 1, 3};
    double want[] = {154, 102, 102, 100 - 24 + 2 + 100, 100 - 72 + 2 + 100};
    double want_rc[] = {0.5, 1, 1, 0.25, 0.75};
    struct mt_err e = {0};
    for (int t = 0; t < 5; t++) {
        struct plan *p = plan_new(&c, &g);
        struct instr cfw = {OP_CFW, 0, 0, 0, -1, 0, ks[t], 0};
        struct instr rc = {OP_RC, 0, 0, 0, -1, 0, ks[t], 0};
        struct instr bw = {OP_BW, 0, 0, 0, -1, 0, 0, 0};
        for (int mb = 0; mb < 2; mb++) {
            cfw.mb = mb;
            plan_append(p, 0, cfw);
        }
        for (int mb = 0; mb < 2; mb++) {
            rc.mb = bw.mb = mb;
            plan_append(p, 0, rc);
            plan_append(p, 0, bw);
        }
        struct sim_result r;
        must(sim_run_costs(p, &cost, &r, &e), &e, "sim");
        CHECK_NEAR(r.dev[0].peak_dynamic, want[t], 1e-9);
        CHECK_NEAR(sim_instr_latency(&cost, plan_at(p, 0, 2)), want_rc[t], 1e-12);
        sim_result_fini(&r);
        plan_free(p);
    }
}

/* ---- the planner ------------------------------------------------------------------------ */

/* GPT3-1.6B's block at L layers on D devices. */
static void small_config(struct config *c, enum scheme_id sch, int D, int L, int N)
{
    config_default(c);
    c->scheme = sch;
    c->num_device = D;
    c->model.num_layers = L;
    c->num_microbatches = N;
    c->global_batch_size = N;
    c->chunks = 2;
}

static struct ckpt_plan *planner(const struct config *c, int tlen)
{
    struct ckpt_plan *cp = NULL;
    struct mt_err e = {0};
    must(ckpt_plan_new(c, tlen, &cp, &e), &e, "ckpt_plan_new");
    return cp;
}

/* A cap halfway between full checkpointing's and no checkpointing's peak at s. */
static double middle_cap(const struct config *c, int s)
{
    struct ckpt_plan *cp = planner(c, s);
    int S = ckpt_plan_stages(cp), D = ckpt_plan_devices(cp);
    int *k = xcalloc((size_t)S, sizeof(int));
    double *lo = xmalloc((size_t)D * sizeof(double)), *hi = xmalloc((size_t)D * sizeof(double));
    struct cost_model cost;
    struct mt_err e = {0};
    must(ckpt_plan_costs(cp, s, &cost, &e), &e, "costs");
    ckpt_plan_peaks(cp, &cost, k, hi);
    ckpt_plan_all(cp, k);
    ckpt_plan_peaks(cp, &cost, k, lo);
    double a = 0, b = 0;
    for (int d = 0; d < D; d++) {
        a = lo[d] > a ? lo[d] : a;
        b = hi[d] > b ? hi[d] : b;
    }
    cost_model_fini(&cost);
    free(k);
    free(lo);
    free(hi);
    ckpt_plan_free(cp);
    return (a + b) / 2;
}

static double sim_max_peak(const struct sim_result *r)
{
    double m = 0;
    for (int d = 0; d < r->devices; d++)
        m = r->dev[d].peak_mem > m ? r->dev[d].peak_mem : m;
    return m;
}

/* Calibrated transients (model/profile.h): work bytes of FW and BW, a CFW's own peak. */
static void transient_bytes_fn(int s, struct cost_model *cost, void *ctx)
{
    for (int j = 0; j < cost->num_stages; j++) {
        struct stage_cost *st = &cost->stage[j];
        st->fw_work_bytes = 0.3 * st->act;
        st->cfw_peak_bytes = 0.5 * st->act;
        st->bw_work_bytes = 0.2 * st->act;
    }
}

static void test_profile_matches_sim(void)
{
    enum scheme_id schemes[] = {SCHEME_V, SCHEME_X, SCHEME_W, SCHEME_GPIPE};
    struct mt_err e = {0};
    for (int si = 0; si < 8; si++) {
        struct config c;
        small_config(&c, schemes[si % 4], 4, 16, 8);
        struct ckpt_plan *cp = planner(&c, 1024);
        if (si >= 4) /* the same with calibrated transients, which raise the peaks */
            ckpt_plan_set_bytes(cp, transient_bytes_fn, NULL);
        int S = ckpt_plan_stages(cp), D = ckpt_plan_devices(cp);
        int *k = xmalloc((size_t)S * sizeof(int));
        double *peak = xmalloc((size_t)D * sizeof(double));
        int lens[] = {64, 700, 1024};
        for (int t = 0; t < 24; t++) {
            int s = lens[t % 3];
            for (int j = 0; j < S; j++)
                k[j] = rng_int(ckpt_plan_stage_layers(cp, j) + 1);
            struct cost_model cost;
            must(ckpt_plan_costs(cp, s, &cost, &e), &e, "costs");
            ckpt_plan_peaks(cp, &cost, k, peak);
            struct sim_result r;
            must(ckpt_plan_simulate(cp, s, k, &r, &e), &e, "simulate");
            for (int d = 0; d < D; d++)
                CHECK_NEAR(peak[d], r.dev[d].peak_mem, 1e-9 * r.dev[d].peak_mem);
            sim_result_fini(&r);
            cost_model_fini(&cost);
        }
        free(k);
        free(peak);
        ckpt_plan_free(cp);
    }
}

/* Greedy fits and is minimal; in V (one stage per device) it equals the exact search. */
static void test_greedy(void)
{
    enum scheme_id schemes[] = {SCHEME_V, SCHEME_X, SCHEME_W};
    struct mt_err e = {0};
    for (int si = 0; si < 3; si++) {
        struct config c;
        small_config(&c, schemes[si], 4, 16, 8);
        c.memory_per_device = middle_cap(&c, 1024);
        struct ckpt_plan *cp = planner(&c, 1024);
        int S = ckpt_plan_stages(cp);
        int *k = xmalloc((size_t)S * sizeof(int)), *kx = xmalloc((size_t)S * sizeof(int));
        int lens[] = {512, 800, 1024};
        for (int t = 0; t < 3; t++) {
            struct ckpt_plan_solution sol, solx;
            must(ckpt_plan_solve(cp, lens[t], CKPT_PLAN_GREEDY, k, &sol, &e), &e, "greedy");
            struct sim_result r;
            must(ckpt_plan_simulate(cp, lens[t], k, &r, &e), &e, "simulate");
            CHECK(sim_max_peak(&r) <= c.memory_per_device * (1 + 1e-9));
            CHECK_NEAR(sol.peak_bytes, sim_max_peak(&r), 1e-9 * sol.peak_bytes);
            double greedy_step = r.step_time;
            sim_result_fini(&r);
            for (int j = 0; j < S; j++) { /* minimal: one layer fewer anywhere does not fit */
                if (k[j] == 0)
                    continue;
                k[j]--;
                must(ckpt_plan_simulate(cp, lens[t], k, &r, &e), &e, "simulate");
                CHECK(sim_max_peak(&r) > c.memory_per_device);
                sim_result_fini(&r);
                k[j]++;
            }
            must(ckpt_plan_solve(cp, lens[t], CKPT_PLAN_EXACT, kx, &solx, &e), &e, "exact");
            CHECK(solx.step_time <= greedy_step * (1 + 1e-12));
            if (schemes[si] == SCHEME_V) {
                CHECK(memcmp(k, kx, (size_t)S * sizeof(int)) == 0);
                CHECK_NEAR(solx.step_time, greedy_step, 1e-9 * greedy_step);
            }
        }
        free(k);
        free(kx);
        ckpt_plan_free(cp);
    }
}

/* The exact search against brute force: every choice of a 4-stage Chimera (2 layers a stage,
 * 81 choices) simulated. */
static void test_exact_brute_force(void)
{
    struct config c;
    small_config(&c, SCHEME_X, 4, 8, 8);
    c.memory_per_device = middle_cap(&c, 1024);
    struct ckpt_plan *cp = planner(&c, 1024);
    int S = ckpt_plan_stages(cp);
    CHECK_EQ_INT(S, 4);
    struct mt_err e = {0};
    int k[4], best_k[4] = {0};
    double best = -1;
    for (int idx = 0; idx < 81; idx++) {
        for (int j = 0, v = idx; j < 4; j++, v /= 3)
            k[j] = v % 3;
        struct sim_result r;
        must(ckpt_plan_simulate(cp, 1024, k, &r, &e), &e, "simulate");
        if (sim_max_peak(&r) <= c.memory_per_device && (best < 0 || r.step_time < best)) {
            best = r.step_time;
            memcpy(best_k, k, sizeof k);
        }
        sim_result_fini(&r);
    }
    CHECK(best > 0);
    struct ckpt_plan_solution sol;
    must(ckpt_plan_solve(cp, 1024, CKPT_PLAN_EXACT, k, &sol, &e), &e, "exact");
    CHECK_NEAR(sol.step_time, best, 1e-9 * best);
    printf("brute force over 81 choices: best step %.6f s with k = %d %d %d %d; exact %d %d %d "
           "%d after %ld simulations\n",
           best * 1e-6, best_k[0], best_k[1], best_k[2], best_k[3], k[0], k[1], k[2], k[3],
           sol.sims);
    ckpt_plan_free(cp);
}

static void test_infeasible(void)
{
    struct config c;
    small_config(&c, SCHEME_V, 4, 16, 8);
    struct ckpt_plan *cp = planner(&c, 1024);
    int S = ckpt_plan_stages(cp);
    int *k = xmalloc((size_t)S * sizeof(int));
    ckpt_plan_all(cp, k);
    struct sim_result r;
    struct mt_err e = {0};
    must(ckpt_plan_simulate(cp, 1024, k, &r, &e), &e, "simulate");
    double need = sim_max_peak(&r);
    sim_result_fini(&r);
    ckpt_plan_free(cp);

    c.memory_per_device = need - 1000000; /* a megabyte short */
    cp = planner(&c, 1024);
    err_clear(&e);
    CHECK_EQ_INT(ckpt_plan_solve(cp, 1024, CKPT_PLAN_GREEDY, k, NULL, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "no checkpointing plan fits a batch of 1024 tokens");
    CHECK_STR_CONTAINS(e.msg, "(1000000 bytes) over");
    /* a shorter batch still fits */
    CHECK_EQ_INT(ckpt_plan_solve(cp, 512, CKPT_PLAN_GREEDY, k, NULL, &e), MT_OK);
    free(k);
    ckpt_plan_free(cp);
}

static void test_cache_and_report(void)
{
    struct config c;
    small_config(&c, SCHEME_V, 4, 16, 8);
    c.memory_per_device = middle_cap(&c, 1024);
    struct ckpt_plan *cp = planner(&c, 1000);
    struct mt_err e = {0};
    struct ckpt_plan_cache *pc = ckpt_plan_cache_new(cp, 100, 1000, CKPT_PLAN_GREEDY);
    const struct ckpt_plan_entry *a, *b;
    CHECK_EQ_INT(ckpt_plan_cache_get(pc, 150, &a, &e), MT_OK);
    CHECK_EQ_INT(a->s, 200);
    CHECK_EQ_INT(ckpt_plan_cache_get(pc, 199, &b, &e), MT_OK);
    CHECK(a == b);
    CHECK_EQ_INT(ckpt_plan_cache_stats(pc)->switches, 0); /* the same plan again */
    CHECK_EQ_INT(ckpt_plan_cache_get(pc, 201, &b, &e), MT_OK);
    CHECK_EQ_INT(b->s, 300);
    CHECK_EQ_INT(ckpt_plan_cache_get(pc, 1000, &b, &e), MT_OK);
    CHECK_EQ_INT(b->s, 1000);
    const struct ckpt_plan_entry *longest = b;
    CHECK_EQ_INT(ckpt_plan_cache_get(pc, 1001, &b, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "1001 tokens");
    const struct ckpt_plan_stats *st = ckpt_plan_cache_stats(pc);
    CHECK_EQ_INT(st->hits, 1);
    CHECK_EQ_INT(st->misses, 3);
    int S = ckpt_plan_stages(cp);
    int *k = xmalloc((size_t)S * sizeof(int));
    must(ckpt_plan_solve(cp, 1000, CKPT_PLAN_GREEDY, k, NULL, &e), &e, "solve");
    CHECK(memcmp(k, longest->k, (size_t)S * sizeof(int)) == 0);
    ckpt_plan_cache_free(pc);
    ckpt_plan_free(cp);

    /* The report over the shipped lengths: (c) >= (b) >= (a), and (b) is the longest's plan */
    small_config(&c, SCHEME_V, 8, 128, 16);
    c.memory_per_device = middle_cap(&c, 1024);
    cp = planner(&c, 1024);
    struct seqlen_sample smp;
    char path[1024];
    snprintf(path, sizeof path, "%s/data/lengths.txt", srcdir());
    must(seqlen_read_file(path, 1024, &smp, &e), &e, "lengths");
    struct ckpt_plan_report r;
    must(ckpt_plan_report_build(cp, &smp, 128, false, &r, &e), &e, "report");
    CHECK(r.throughput[CKPT_PLAN_INPUT_AWARE] >= r.throughput[CKPT_PLAN_STATIC] * (1 - 1e-12));
    CHECK(r.throughput[CKPT_PLAN_STATIC] >= r.throughput[CKPT_PLAN_FULL] * (1 - 1e-12));
    CHECK(r.throughput[CKPT_PLAN_INPUT_AWARE] > r.throughput[CKPT_PLAN_FULL]);
    double w = 0;
    for (int i = 0; i < r.n; i++) {
        w += r.b[i].weight;
        CHECK(r.b[i].peak[CKPT_PLAN_INPUT_AWARE] <= c.memory_per_device * (1 + 1e-9));
        CHECK(r.b[i].step_time[CKPT_PLAN_INPUT_AWARE] <=
              r.b[i].step_time[CKPT_PLAN_FULL] * (1 + 1e-12));
    }
    CHECK_NEAR(w, 1522, 0);
    CHECK_EQ_INT(r.cache.misses, r.n);
    CHECK_EQ_INT(r.cache.hits, 1522 - r.n);
    free(k);
    k = xmalloc((size_t)ckpt_plan_stages(cp) * sizeof(int));
    must(ckpt_plan_solve(cp, 1024, CKPT_PLAN_GREEDY, k, NULL, &e), &e, "solve");
    CHECK(memcmp(k, r.k_static, (size_t)ckpt_plan_stages(cp) * sizeof(int)) == 0);
    printf("report (GPT3-1.6B V 8 devices, cap %.2f GiB, buckets of 128): input-aware %.3f, "
           "static %.3f, full %.3f samples/s\n",
           c.memory_per_device / (1 << 30), r.throughput[CKPT_PLAN_INPUT_AWARE],
           r.throughput[CKPT_PLAN_STATIC], r.throughput[CKPT_PLAN_FULL]);
    free(k);
    ckpt_plan_report_fini(&r);
    seqlen_sample_fini(&smp);
    ckpt_plan_free(cp);
}

/* ---- the memory predictor --------------------------------------------------------------- */

/* The executor's bytes of a split, exact (cost_stage_bytes_exec, equal to what its allocator
 * measures: test_selective_exec) or from fits of them. */
enum { FIT_ACT, FIT_CKPT, FIT_LAYER, FIT_SEL, FIT_CFW, FIT_BW, FIT__N };

struct exec_bytes {
    const struct config *c;
    struct memfit *fit; /* NULL: exact; else [stages * FIT__N] */
};

static double *fit_field(struct stage_cost *st, int q)
{
    double *f[FIT__N] = {&st->act,      &st->ckpt,           &st->layer_act,
                         &st->sel_ckpt, &st->cfw_peak_bytes, &st->bw_work_bytes};
    return f[q];
}

static void exec_bytes_fn(int s, struct cost_model *cost, void *ctx)
{
    const struct exec_bytes *x = ctx;
    for (int j = 0; j < cost->num_stages; j++) {
        struct stage_cost *st = &cost->stage[j];
        cost_stage_bytes_exec(x->c, s, st);
        for (int q = 0; x->fit != NULL && q < FIT__N; q++)
            *fit_field(st, q) = memfit_predict(&x->fit[FIT__N * j + q], s);
    }
}

static void test_predictor(void)
{
    /* an exact quadratic is recovered from three lengths */
    struct memfit f;
    memfit_init(&f, 1024);
    double sv[] = {10, 20, 35, 20};
    for (int i = 0; i < 4; i++)
        memfit_add(&f, sv[i], 5 + 3 * sv[i] + 0.25 * sv[i] * sv[i]);
    struct mt_err e = {0};
    CHECK_EQ_INT(memfit_solve(&f, &e), MT_OK);
    CHECK_EQ_INT(f.degree, 2);
    CHECK_NEAR(memfit_predict(&f, 1000), 5 + 3000 + 250000, 1e-6);
    memfit_init(&f, 1);
    CHECK_EQ_INT(memfit_solve(&f, &e), MT_EINVAL);
    memfit_add(&f, 7, 70);
    memfit_add(&f, 7, 70);
    CHECK_EQ_INT(memfit_solve(&f, &e), MT_OK);
    CHECK_EQ_INT(f.degree, 0);
    CHECK_NEAR(memfit_predict(&f, 100), 70, 1e-9);

    /* The tiny model on 4 devices, lengths of the shipped sample (positions up to 1024):
     * per-stage bytes fitted on the first 10 batches predict every later batch's per-device
     * peak within 2 % (the bound), for full checkpointing and the planner's choice. */
    struct config c;
    config_default(&c);
    presets_model("tiny", &c.model, NULL);
    c.seqlen.max_positions = 1024;
    c.model.seq_length = 1024;
    c.num_device = 4;
    c.num_microbatches = 8;
    c.global_batch_size = 8;
    c.micro_batch_size = 1;
    struct exec_bytes exact = {.c = &c};
    struct ckpt_plan *cp = planner(&c, 1024);
    int S = ckpt_plan_stages(cp), D = ckpt_plan_devices(cp);
    struct seqlen_sample smp;
    char path[1024];
    snprintf(path, sizeof path, "%s/data/lengths.txt", srcdir());
    must(seqlen_read_file(path, 1024, &smp, &e), &e, "lengths");
    struct memfit *fits = xmalloc((size_t)S * FIT__N * sizeof *fits);
    for (int i = 0; i < S * FIT__N; i++)
        memfit_init(&fits[i], 1024);
    struct cost_model cost;
    for (int i = 0; i < 10; i++) { /* "measured" in the first 10 batches */
        ckpt_plan_set_bytes(cp, exec_bytes_fn, &exact);
        must(ckpt_plan_costs(cp, smp.len[i], &cost, &e), &e, "costs");
        for (int j = 0; j < S; j++)
            for (int q = 0; q < FIT__N; q++)
                memfit_add(&fits[FIT__N * j + q], smp.len[i], *fit_field(&cost.stage[j], q));
        cost_model_fini(&cost);
    }
    for (int i = 0; i < S * FIT__N; i++)
        must(memfit_solve(&fits[i], &e), &e, "fit");
    struct exec_bytes fitted = exact;
    fitted.fit = fits;
    /* the cap: halfway at the longest batch, with the exact bytes */
    int *k = xmalloc((size_t)S * sizeof(int)), *kf = xmalloc((size_t)S * sizeof(int));
    double *pe = xmalloc((size_t)D * sizeof(double)), *pf = xmalloc((size_t)D * sizeof(double));
    double worst = 0;
    int mismatched = 0;
    for (int i = 10; i < smp.n; i++) {
        int s = smp.len[i];
        ckpt_plan_all(cp, k);
        ckpt_plan_set_bytes(cp, exec_bytes_fn, &exact);
        must(ckpt_plan_costs(cp, s, &cost, &e), &e, "costs");
        ckpt_plan_peaks(cp, &cost, k, pe);
        cost_model_fini(&cost);
        ckpt_plan_set_bytes(cp, exec_bytes_fn, &fitted);
        must(ckpt_plan_costs(cp, s, &cost, &e), &e, "costs");
        ckpt_plan_peaks(cp, &cost, k, pf);
        cost_model_fini(&cost);
        for (int d = 0; d < D; d++) {
            double rel = fabs(pf[d] - pe[d]) / pe[d];
            worst = rel > worst ? rel : worst;
        }
    }
    CHECK(worst <= 0.02);
    printf("predictor fitted on 10 batches: worst per-device peak error over %d later batches "
           "%.3g %%\n",
           smp.n - 10, 100 * worst);
    /* plans made from the predictor equal those made from the exact bytes */
    ckpt_plan_set_bytes(cp, exec_bytes_fn, &exact);
    ckpt_plan_all(cp, k);
    must(ckpt_plan_costs(cp, 1024, &cost, &e), &e, "costs");
    double full = 0, none = 0;
    ckpt_plan_peaks(cp, &cost, k, pe);
    for (int d = 0; d < D; d++)
        full = pe[d] > full ? pe[d] : full;
    memset(k, 0, (size_t)S * sizeof(int));
    ckpt_plan_peaks(cp, &cost, k, pe);
    for (int d = 0; d < D; d++)
        none = pe[d] > none ? pe[d] : none;
    cost_model_fini(&cost);
    ckpt_plan_free(cp);
    c.memory_per_device = (full + none) / 2;
    cp = planner(&c, 1024);
    int lens[] = {100, 400, 700, 1024};
    for (int t = 0; t < 4; t++) {
        ckpt_plan_set_bytes(cp, exec_bytes_fn, &exact);
        must(ckpt_plan_solve(cp, lens[t], CKPT_PLAN_GREEDY, k, NULL, &e), &e, "solve exact");
        ckpt_plan_set_bytes(cp, exec_bytes_fn, &fitted);
        must(ckpt_plan_solve(cp, lens[t], CKPT_PLAN_GREEDY, kf, NULL, &e), &e, "solve fitted");
        mismatched += memcmp(k, kf, (size_t)S * sizeof(int)) != 0;
    }
    CHECK_EQ_INT(mismatched, 0);
    free(k);
    free(kf);
    free(pe);
    free(pf);
    free(fits);
    seqlen_sample_fini(&smp);
    ckpt_plan_free(cp);
}

int main(void)
{
    test_lengths_parse();
    test_config_forms();
    test_layer_costs();
    test_selective_exec();
    test_selective_memory();
    test_profile_matches_sim();
    test_greedy();
    test_exact_brute_force();
    test_infeasible();
    test_cache_and_report();
    test_predictor();
    return check_report("test_inputs");
}
