/* tests/unit/test_stage_split.c: the stages' layers (model/stage_split.c), Megatron's layout
 * string (model/pp_layout.c) and the split search (sim/tune/tune_split.c), against values
 * known without them:
 *   - the default rule, for every (layers, stages) up to 128 x 64, against a restatement of
 *     cost_model_build's rule and against cost_model_build itself (stage_cost.num_layers);
 *   - Megatron's own examples (its user guide, its --help, the docstring of
 *     parse_str_to_list), worked by hand; errors with their columns;
 *   - random strings against a restatement of Megatron's parse_str_to_list (delete commas,
 *     expand (...)*n, then x*n, split at '|'): where both accept, the same stages;
 *   - read -> write -> read round trips, and the written form is a fixed point;
 *   - Megatron's first/last counts and account-for flags and torchtitan's weights, worked by
 *     hand from their code (transformer_block.py, pipeline_parallel.py), and their refusals;
 *   - the keys through a config file and back;
 *   - the split search against brute force over every split of small cases. */
#include <config.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/stage_split.h"
#include "sim/tune/tune_split.h"
#include "tests/check.h"
#include "util/err.h"

/* ---- the default rule ----------------------------------------------------------------- */

static void test_default_rule(void)
{
    struct config c;
    config_default(&c);
    int layers[64];
    bool embed[64], head[64];
    int mismatches = 0, cost_mismatches = 0, pairs = 0;
    for (int L = 1; L <= 128; L++)
        for (int S = 1; S <= 64; S++) {
            c.model.num_layers = L;
            struct mt_err e = {0};
            int rc = stage_split_layers(&c, S, layers, embed, head, &e);
            if (S > L) { /* today's refusal, word for word */
                CHECK(rc == MT_EINVAL);
                CHECK_STR_CONTAINS(e.msg, "stages but only");
                continue;
            }
            pairs++;
            /* cost_model_build's rule restated: base each, the L mod S extra ones on the S - r
             * .. middle stages starting at (S - r) / 2 */
            int base = L / S, r = L % S, from = (S - r) / 2, sum = 0;
            for (int i = 0; i < S; i++) {
                int want = base + (i >= from && i < from + r ? 1 : 0);
                mismatches += rc != MT_OK || layers[i] != want || embed[i] != (i == 0) ||
                              head[i] != (i == S - 1);
                sum += layers[i];
            }
            mismatches += sum != L;
            struct cost_model m;
            if (cost_model_build(&c, S, 1, 1, &m, &e) != MT_OK) {
                cost_mismatches++;
                continue;
            }
            for (int i = 0; i < S; i++)
                cost_mismatches += m.stage[i].num_layers != layers[i] ||
                                   m.stage[i].has_embed != embed[i] ||
                                   m.stage[i].has_head != head[i];
            cost_model_fini(&m);
        }
    CHECK_EQ_INT(pairs, 64 * 128 - 64 * 63 / 2); /* S <= L */
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(cost_mismatches, 0);
    /* two hand-worked ones: 30 over 4 = 7, 8, 8, 7; 10 over 4 = 2, 3, 3, 2 */
    c.model.num_layers = 30;
    CHECK(stage_split_layers(&c, 4, layers, embed, head, NULL) == MT_OK);
    CHECK(layers[0] == 7 && layers[1] == 8 && layers[2] == 8 && layers[3] == 7);
    c.model.num_layers = 10;
    CHECK(stage_split_layers(&c, 4, layers, embed, head, NULL) == MT_OK);
    CHECK(layers[0] == 2 && layers[1] == 3 && layers[2] == 3 && layers[3] == 2);
}

/* ---- the layout string -------------------------------------------------------------------- */

/* s parses to n stages of these layers, E on 0 and L on n - 1. */
static void want_layout(const char *s, int n, const int *layers)
{
    struct pp_layout l;
    struct mt_err e = {0};
    int rc = pp_layout_parse(s, &l, &e);
    CHECK(rc == MT_OK);
    if (rc != MT_OK) {
        fprintf(stderr, "  '%s': %s\n", s, e.msg);
        return;
    }
    CHECK_EQ_INT(l.num_stages, n);
    int sum = 0, bad = 0;
    for (int i = 0; i < n && i < l.num_stages; i++) {
        bad += l.layers[i] != layers[i] || l.embed[i] != (i == 0) || l.loss[i] != (i == n - 1);
        sum += layers[i];
    }
    CHECK_EQ_INT(bad, 0);
    if (bad)
        fprintf(stderr, "  '%s' parsed otherwise\n", s);
    CHECK_EQ_INT(l.num_layers, sum);
    pp_layout_fini(&l);
}

static void want_error(const char *s, const char *msg)
{
    struct pp_layout l;
    struct mt_err e = {0};
    CHECK(pp_layout_parse(s, &l, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, msg);
    CHECK(l.num_stages == 0 && l.layers == NULL);
}

static void test_megatron_examples(void)
{
    /* Megatron's user guide (docs/user-guide/features/pipeline_parallel_layout.md), DeepSeek-V3
     * at PP 16 x VPP 2: "Et*3|(tt|)*29,m|L"; its MTP layer is refused (issue 38), at column 15 */
    want_error("Et*3|(tt|)*29,m|L", "column 15: 'm', a multi-token-prediction layer");
    want_error("Et*3|(tt|)*29,m|L", "issue 38");
    /* the docstring's "Ettt|(tt|)*29,m|L" */
    want_error("Ettt|(tt|)*29,m|L", "column 15");
    /* the same with a transformer layer for the MTP one: 32 stages, the guide's table (rank 0
     * vpp 0: embedding + 3, every other rank's chunks 2, rank 14 vpp 1 (stage 30) the former
     * MTP, rank 15 vpp 1 (stage 31) the loss alone) */
    int ds[32];
    ds[0] = 3;
    for (int i = 1; i <= 29; i++)
        ds[i] = 2;
    ds[30] = 1;
    ds[31] = 0;
    want_layout("Et*3|(tt|)*29,t|L", 32, ds);
    want_layout("Ettt|(tt|)*29,t|L", 32, ds);
    /* its --help: "E|(t|)*3,m|m||L", with t for m: E | t | t | t | t | t | (empty) | L */
    want_layout("E|(t|)*3,t|t||L", 8, (int[]){0, 1, 1, 1, 1, 1, 0, 0});
    /* the guide's empty stage: "E||t|L" */
    want_layout("E||t|L", 4, (int[]){0, 0, 1, 0});
    /* parse_str_to_list's comments: "xy(ab|cd|ef)*2,pq" -> "xyab|cd|efab|cd|efpq",
     * "(ab)*3" -> "ababab", "ab,(cd|)*2" -> "abcd|cd|", "(|ab)*2,cd" -> "|ab|abcd" */
    want_layout("Et(tt|t|ttt)*2,tL", 5, (int[]){3, 1, 5, 1, 4});
    want_layout("E(tt)*3L", 1, (int[]){6});
    want_layout("Et,(tt|)*2L", 3, (int[]){3, 2, 0});
    want_layout("E(|tt)*2,tL", 3, (int[]){0, 2, 3});
    /* commas anywhere, even inside a count, as Megatron deletes them first */
    want_layout("E,t*1,2,L", 1, (int[]){12});
    want_layout(",,E|t*0|t*3,|L,", 4, (int[]){0, 0, 3, 0});
    want_layout("E|*3t*2L", 4, (int[]){0, 0, 0, 2}); /* '|*3' is three separators */
    want_layout("EL", 1, (int[]){0});
    want_layout("E(t*2|)*0,t*02L", 1, (int[]){2});
    /* errors, each with its column */
    want_error("Et*3|t*", "column 7: 't*' needs a count");
    want_error("Et*2*3L", "column 5: '*' after a count");
    want_error("E(t|)*2*3L", "column 8: '*' after a count");
    want_error("Et(t|(t)*2)*2L", "column 6: '(' inside '(...)'");
    want_error("Et)L", "column 3: ')' without '('");
    want_error("E t|L", "column 2: whitespace");
    want_error("E|tmL", "column 4: 'm'");
    want_error("tEL", "column 2: 'E' after a layer or '|'");
    want_error("|EtL", "column 2: 'E' after a layer or '|'");
    want_error("EtLt", "column 4: 't' after the loss 'L' (column 3)");
    want_error("EtL|", "column 4: '|' after the loss");
    want_error("EtL|t*0", "column 4: '|' after the loss");
    want_error("EEtL", "column 2: a second 'E' (the first at column 1)");
    want_error("E*2tL", "column 1: 'E' repeated");
    want_error("(Et|)*2L", "column 2: 'E' repeated");
    want_error("EtL*2", "column 3: 'L' repeated");
    want_error("E(t)L", "column 4: '(...)' needs a count");
    want_error("E()*2L", "column 2: '()' holds nothing");
    want_error("Et(t|L", "column 3: '(' is not closed");
    want_error("Et*99999999999L", "column 3: a count over");
    want_error("E(|)*300000L", "over 262144 stages");
    want_error("Et*100001L", "over 100000 layers");
    want_error("E(t*1000)*1000L", "over 100000 layers");
    want_error("Et3L", "column 3: '3': a count follows '*'");
    want_error("E*L", "column 2: 'E*' needs a count");
    want_error("*tL", "column 1: '*' repeats nothing");
    want_error("EtxL", "column 3: 'x' is not a layout symbol");
    want_error("t|tL", "column 1: no 'E'");
    want_error("Et|t", "column 5: no 'L'");
    want_error("", "no 'E'");
}

/* Megatron's parse_str_to_list restated (re.sub of r'\(([^)]+)\)\*(\d+)' then r'(.)\*(\d+)'
 * on the comma-free string, then split at '|'), and validate_layer_layout's E and L checks:
 * stages into layers[], MT_OK or -1 (refused). Counts are capped at 99 (the generator's). */
static int megatron_ref(const char *in, int *layers, int max_stages, int *n_stages,
                        char *first_ch, char *last_ch)
{
    char a[4096], b[65536], c[1 << 20];
    size_t n = 0;
    for (const char *p = in; *p; p++)
        if (*p != ',')
            a[n++] = *p;
    a[n] = '\0';
    /* groups */
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (a[i] == '(') {
            size_t j = i + 1;
            while (j < n && a[j] != ')')
                j++;
            if (j < n && j > i + 1 && a[j + 1] == '*' && a[j + 2] >= '0' && a[j + 2] <= '9') {
                size_t d = j + 2;
                long cnt = 0;
                while (a[d] >= '0' && a[d] <= '9') { /* saturates, as below */
                    if (cnt <= 1000000)
                        cnt = cnt * 10 + (a[d] - '0');
                    d++;
                }
                if (cnt > 5000)
                    return -2; /* past the buffers: not compared */
                for (long r = 0; r < cnt; r++)
                    for (size_t q = i + 1; q < j; q++)
                        if (k < sizeof b - 1)
                            b[k++] = a[q];
                i = d;
                continue;
            }
        }
        if (k < sizeof b - 1)
            b[k++] = a[i];
        i++;
    }
    b[k] = '\0';
    size_t m = 0;
    for (size_t i = 0; i < k;) {
        if (i + 2 < k + 1 && b[i] != '\n' && b[i + 1] == '*' && b[i + 2] >= '0' && b[i + 2] <= '9') {
            size_t d = i + 2;
            long cnt = 0;
            while (b[d] >= '0' && b[d] <= '9') { /* saturates: random strings hold long runs */
                if (cnt <= 1000000)
                    cnt = cnt * 10 + (b[d] - '0');
                d++;
            }
            if (cnt > 5000 || (size_t)cnt + m >= sizeof c)
                return -2;
            for (long r = 0; r < cnt; r++)
                if (m < sizeof c - 1)
                    c[m++] = b[i];
            i = d;
            continue;
        }
        if (m < sizeof c - 1)
            c[m++] = b[i];
        i++;
    }
    c[m] = '\0';
    if (k >= sizeof b - 1)
        return -2;
    *first_ch = m > 0 ? c[0] : 0;
    *last_ch = m > 0 ? c[m - 1] : 0;
    int s = 0, embeds = 0, losses = 0;
    char first = 0, last = 0;
    layers[0] = 0;
    for (size_t i = 0; i < m; i++) {
        char ch = c[i];
        if (ch == '|') {
            if (++s >= max_stages)
                return -2; /* past the buffers: not compared */
            layers[s] = 0;
            continue;
        }
        if (ch != 'E' && ch != 't' && ch != 'L' && ch != 'm')
            return -1; /* "Invalid layer character" */
        if (first == 0)
            first = ch;
        last = ch;
        layers[s] += ch == 't';
        embeds += ch == 'E';
        losses += ch == 'L';
    }
    *n_stages = s + 1;
    return first == 'E' && last == 'L' && embeds == 1 && losses == 1 ? MT_OK : -1;
}

/* Where we refuse on purpose what Megatron reads (pp_layout.c): a count right after a group's
 * count ("(t|)*2*3"); a '|' before E or after L in the expansion (E not opening the first
 * stage, L not closing the last); a character that is no symbol repeated 0 times, which
 * Megatron's x*n deletes ("E3*0L", "E(*0L"); a group opening with '*' or a digit, which
 * Megatron's x*n joins to what precedes each copy ("Et(*2t)*2L" is "Et*2t*2tL" there,
 * "Et*2(0)*2L" is "Et*200L"). */
static bool known_divergence(const char *s, char first_ch, char last_ch)
{
    if (first_ch != 'E' || last_ch != 'L')
        return true;
    char a[256];
    size_t n = 0;
    for (const char *p = s; *p && n + 1 < sizeof a; p++)
        if (*p != ',')
            a[n++] = *p;
    a[n] = '\0';
    for (size_t i = 0; i + 2 < n + 1; i++) {
        if (a[i] == '(' && (a[i + 1] == '*' || (a[i + 1] >= '0' && a[i + 1] <= '9')))
            return true;
        if (strchr("EtmL|", a[i]) != NULL || a[i + 1] != '*')
            continue;
        size_t d = i + 2;
        long v = 0;
        bool digits = false;
        for (; a[d] >= '0' && a[d] <= '9'; d++, digits = true)
            v = 10 * v + (a[d] - '0');
        if (digits && v == 0)
            return true;
    }
    for (const char *p = s; *p; p++) {
        if (*p != ')')
            continue;
        const char *q = p + 1;
        while (*q == ',')
            q++;
        if (*q != '*')
            continue;
        q++;
        bool digits = false;
        for (; (*q >= '0' && *q <= '9') || *q == ','; q++)
            digits = digits || *q != ',';
        if (digits && *q == '*')
            return true;
    }
    return false;
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static void random_string(char *s, size_t cap)
{
    static const char *const pieces[] = {"t", "t", "t", "|", "|", "*", "(", ")", ",", "E",
                                         "L", "0", "1", "2", "3", "12", "*2", "*3", "(t|)*2",
                                         "(tt)*3"};
    size_t n = 0;
    int parts = 1 + (int)rnd(12);
    if (rnd(4) != 0)
        s[n++] = 'E';
    for (int i = 0; i < parts; i++) {
        const char *p = pieces[rnd(sizeof pieces / sizeof pieces[0])];
        size_t l = strlen(p);
        if (n + l + 2 >= cap)
            break;
        memcpy(s + n, p, l);
        n += l;
    }
    if (rnd(4) != 0)
        s[n++] = 'L';
    s[n] = '\0';
}

static void test_against_megatron(void)
{
    char s[128], first_ch = 0, last_ch = 0;
    int ref[512], n_ref = 0, both = 0, theirs_only = 0, ours_only = 0, differ = 0, div = 0;
    /* MT_LAYOUT_STRINGS=N draws N (default 200,000) */
    const char *env = getenv("MT_LAYOUT_STRINGS");
    long draws = env != NULL ? atol(env) : 200000;
    for (long it = 0; it < draws; it++) {
        random_string(s, sizeof s);
        struct pp_layout l;
        int ours = pp_layout_parse(s, &l, NULL);
        int theirs = megatron_ref(s, ref, 512, &n_ref, &first_ch, &last_ch);
        if (theirs == -2) { /* too large for the restatement's buffers */
            if (ours == MT_OK)
                pp_layout_fini(&l);
            continue;
        }
        if (ours == MT_OK && theirs == MT_OK) {
            both++;
            bool same = l.num_stages == n_ref;
            for (int i = 0; same && i < n_ref; i++)
                same = l.layers[i] == ref[i];
            if (!same && differ++ < 5)
                fprintf(stderr, "  '%s': ours and Megatron's stages differ\n", s);
        } else if (ours == MT_OK) {
            if (ours_only++ < 5)
                fprintf(stderr, "  '%s': we read what Megatron refuses\n", s);
        } else if (theirs == MT_OK) {
            if (known_divergence(s, first_ch, last_ch))
                div++;
            else if (theirs_only++ < 5)
                fprintf(stderr, "  '%s': Megatron reads what we refuse\n", s);
        }
        if (ours == MT_OK)
            pp_layout_fini(&l);
    }
    CHECK_EQ_INT(differ, 0);
    CHECK_EQ_INT(ours_only, 0);
    CHECK_EQ_INT(theirs_only, 0);
    CHECK(both > 1000); /* the generator reaches accepted strings */
    printf("random layouts: %d read by both alike, %d refused on purpose\n", both, div);
}

static void round_trip(const char *s)
{
    struct pp_layout a, b;
    char w1[2048], w2[2048];
    CHECK(pp_layout_parse(s, &a, NULL) == MT_OK);
    CHECK(pp_layout_write(a.num_stages, a.layers, a.embed, a.loss, w1, sizeof w1, NULL) == MT_OK);
    CHECK(pp_layout_parse(w1, &b, NULL) == MT_OK);
    CHECK_EQ_INT(b.num_stages, a.num_stages);
    int bad = 0;
    for (int i = 0; i < a.num_stages && i < b.num_stages; i++)
        bad += a.layers[i] != b.layers[i] || a.embed[i] != b.embed[i] || a.loss[i] != b.loss[i];
    CHECK_EQ_INT(bad, 0);
    CHECK(pp_layout_write(b.num_stages, b.layers, b.embed, b.loss, w2, sizeof w2, NULL) == MT_OK);
    CHECK(strcmp(w1, w2) == 0);
    pp_layout_fini(&a);
    pp_layout_fini(&b);
}

static void test_round_trips(void)
{
    const char *given[] = {"Et*3|(tt|)*29,t|L", "E|(t|)*3,t|t||L", "E||t|L", "EL",
                           "Et(tt|t|ttt)*2,tL", "E,t*1,2,L", "E|*3t*2L"};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        round_trip(given[i]);
    /* the written forms, by hand */
    char w[256];
    int ds[32];
    bool emb[32] = {true}, loss[32] = {false};
    ds[0] = 3;
    for (int i = 1; i <= 29; i++)
        ds[i] = 2;
    ds[30] = 1;
    ds[31] = 0;
    loss[31] = true;
    CHECK(pp_layout_write(32, ds, emb, loss, w, sizeof w, NULL) == MT_OK);
    CHECK(strcmp(w, "Et*3|(t*2|)*29,t|L") == 0);
    int two[2] = {1, 1};
    bool e2[2] = {true, false}, l2[2] = {false, true};
    CHECK(pp_layout_write(2, two, e2, l2, w, sizeof w, NULL) == MT_OK);
    CHECK(strcmp(w, "Et|tL") == 0);
    int eight[8] = {15, 16, 16, 16, 16, 16, 16, 17};
    bool e8[8] = {true}, l8[8] = {false, false, false, false, false, false, false, true};
    CHECK(pp_layout_write(8, eight, e8, l8, w, sizeof w, NULL) == MT_OK);
    CHECK(strcmp(w, "Et*15|(t*16|)*6,t*17L") == 0);
    CHECK(pp_layout_write(8, eight, e8, l8, w, 10, NULL) == MT_EINVAL); /* does not fit */
    /* random stage lists: write, read, the same */
    int layers[64];
    bool e[64], l[64];
    int bad = 0;
    for (int it = 0; it < 20000; it++) {
        int n = 1 + (int)rnd(40);
        for (int i = 0; i < n; i++) {
            layers[i] = rnd(3) == 0 ? (int)rnd(12) : 4; /* runs of equal stages */
            e[i] = i == 0;
            l[i] = i == n - 1;
        }
        char buf[1024];
        struct pp_layout p;
        if (pp_layout_write(n, layers, e, l, buf, sizeof buf, NULL) != MT_OK ||
            pp_layout_parse(buf, &p, NULL) != MT_OK) {
            bad++;
            continue;
        }
        bool same = p.num_stages == n;
        for (int i = 0; same && i < n; i++)
            same = p.layers[i] == layers[i] && p.embed[i] == e[i] && p.loss[i] == l[i];
        bad += !same;
        pp_layout_fini(&p);
    }
    CHECK_EQ_INT(bad, 0);
}

/* ---- the flags ---------------------------------------------------------------------------- */

static void want_split(const struct config *c, int S, const int *want)
{
    int layers[64];
    bool embed[64], head[64];
    struct mt_err e = {0};
    int rc = stage_split_layers(c, S, layers, embed, head, &e);
    CHECK(rc == MT_OK);
    if (rc != MT_OK) {
        fprintf(stderr, "  %s\n", e.msg);
        return;
    }
    int bad = 0, sum = 0;
    for (int i = 0; i < S; i++) {
        bad += layers[i] != want[i] || embed[i] != (i == 0) || head[i] != (i == S - 1);
        sum += layers[i];
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(sum, c->model.num_layers);
    if (bad) {
        fprintf(stderr, "  got");
        for (int i = 0; i < S; i++)
            fprintf(stderr, " %d", layers[i]);
        fprintf(stderr, "\n");
    }
}

static void want_split_error(const struct config *c, int S, const char *msg)
{
    int layers[64];
    bool embed[64], head[64];
    struct mt_err e = {0};
    CHECK(stage_split_layers(c, S, layers, embed, head, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, msg);
}

static void test_megatron_flags(void)
{
    struct config c;
    config_default(&c);
    c.model.num_layers = 32;
    /* first 6, last 6, pp 4: the 20 middle layers over 2 middle ranks */
    c.decoder_first_pipeline_num_layers = 6;
    c.decoder_last_pipeline_num_layers = 6;
    want_split(&c, 4, (int[]){6, 10, 10, 6});
    c.decoder_first_pipeline_num_layers = 5; /* 21 over 2 */
    want_split_error(&c, 4, "the 21 middle layers do not divide over the 2 middle ranks");
    /* only the first: the last rank is one of the middle ones (Megatron's count) */
    c.decoder_first_pipeline_num_layers = 10;
    c.decoder_last_pipeline_num_layers = 0;
    want_split(&c, 2, (int[]){10, 22});
    c.decoder_first_pipeline_num_layers = 32; /* nothing left for the last rank */
    want_split_error(&c, 2, "0 middle layers left for 1 middle pipeline ranks");
    c.decoder_first_pipeline_num_layers = 16;
    c.decoder_last_pipeline_num_layers = 16;
    want_split(&c, 2, (int[]){16, 16});
    want_split_error(&c, 1, "needs pp >= 2");
    c.decoder_first_pipeline_num_layers = 20; /* 20 + 16 > 32 */
    want_split_error(&c, 3, "first 20 + last 16 layers are over model.num_layers 32");
    /* interleaved, 2 chunks, pp 4: first and last ranks 4 (2 a chunk), middle ranks 12 (6 a
     * chunk); rank r's chunk k is stage 4k + r */
    c.scheme = SCHEME_W;
    c.chunks = 2;
    c.decoder_first_pipeline_num_layers = 4;
    c.decoder_last_pipeline_num_layers = 4;
    want_split(&c, 8, (int[]){2, 6, 6, 2, 2, 6, 6, 2});
    c.decoder_first_pipeline_num_layers = 3;
    c.decoder_last_pipeline_num_layers = 5;
    want_split_error(&c, 8, "the first rank's 3 layers do not divide over its 2 chunks");
    c.scheme = SCHEME_ZBV; /* a V: stages 0 and 2pp-1 on rank 0 */
    c.decoder_first_pipeline_num_layers = 4;
    c.decoder_last_pipeline_num_layers = 4;
    want_split_error(&c, 8, "ZB-V places its 2 stages a device otherwise");
    c.scheme = SCHEME_V;
    c.decoder_first_pipeline_num_layers = c.decoder_last_pipeline_num_layers = 0;

    /* account for the embedding and the loss: 30 + 2 = 32 over 4 = 8, ends one less */
    c.model.num_layers = 30;
    c.account_for_embedding_in_pipeline_split = true;
    c.account_for_loss_in_pipeline_split = true;
    want_split(&c, 4, (int[]){7, 8, 8, 7});
    c.scheme = SCHEME_W; /* 32 over 8 virtual stages: 4, ends 3 */
    want_split(&c, 8, (int[]){3, 4, 4, 4, 4, 4, 4, 3});
    c.scheme = SCHEME_V;
    c.account_for_loss_in_pipeline_split = false;
    c.model.num_layers = 31;
    want_split(&c, 4, (int[]){7, 8, 8, 8});
    c.model.num_layers = 32; /* 33 over 4 */
    want_split_error(&c, 4, "= 33 does not divide over 4 stages");
    c.model.num_layers = 7; /* 8 over 8: the first stage holds the embedding alone */
    want_split(&c, 8, (int[]){0, 1, 1, 1, 1, 1, 1, 1});
    /* with the first/last counts: Megatron refuses the pair */
    c.decoder_first_pipeline_num_layers = 1;
    want_split_error(&c, 8, "cannot be set with account_for_embedding_in_pipeline_split");
    c.decoder_first_pipeline_num_layers = 0;
    c.account_for_embedding_in_pipeline_split = false;

    /* the layout: its stages must be the pipeline's, its layers the model's */
    c.model.num_layers = 62;
    snprintf(c.pipeline_layout, sizeof c.pipeline_layout, "Et*3|(tt|)*29,t|L");
    c.scheme = SCHEME_W;
    c.chunks = 2;
    int ds[32];
    ds[0] = 3;
    for (int i = 1; i <= 29; i++)
        ds[i] = 2;
    ds[30] = 1;
    ds[31] = 0;
    want_split(&c, 32, ds); /* pp 16 x vpp 2 */
    want_split_error(&c, 16, "pipeline_layout: 32 stages, but the pipeline has 16 (pp 8 x 2");
    c.model.num_layers = 61;
    want_split_error(&c, 32, "pipeline_layout: 62 't' layers, but model.num_layers is 61");
    c.model.num_layers = 62;
    c.account_for_loss_in_pipeline_split = true;
    want_split_error(&c, 32, "pipeline_layout: cannot be set with "
                             "account_for_loss_in_pipeline_split");
    c.account_for_loss_in_pipeline_split = false;
    /* more stages than layers: the layout may say so (zero-layer stages) */
    c.model.num_layers = 2;
    c.scheme = SCHEME_V;
    snprintf(c.pipeline_layout, sizeof c.pipeline_layout, "E|t|t|L");
    want_split(&c, 4, (int[]){0, 1, 1, 0});
    c.pipeline_layout[0] = '\0';
    want_split_error(&c, 4, "model.num_layers: 4 stages but only 2 layers");
}

static void test_torchtitan(void)
{
    struct config c;
    config_default(&c);
    /* _generate_llm_fqn_per_model_part's docstring: 2 stages, 3 layers, weights 2 and 2: 7
     * effective, 4 and 3: the first stage 4 - 2 = 2 layers, the last 3 - 2 = 1 */
    c.model.num_layers = 3;
    c.stage_less_layers = true;
    c.first_stage_less_layers = c.last_stage_less_layers = 2;
    want_split(&c, 2, (int[]){2, 1});
    /* torchtitan's defaults (1, 1), 32 layers, 4 stages: 34 effective = 9, 9, 8, 8 */
    c.model.num_layers = 32;
    c.first_stage_less_layers = c.last_stage_less_layers = 1;
    want_split(&c, 4, (int[]){8, 9, 8, 7});
    /* weights 0: the plain split with the remainder first (not the default rule's middle) */
    c.first_stage_less_layers = c.last_stage_less_layers = 0;
    c.model.num_layers = 30;
    want_split(&c, 4, (int[]){8, 8, 7, 7});
    /* one stage holds everything */
    c.first_stage_less_layers = c.last_stage_less_layers = 5;
    want_split(&c, 1, (int[]){30});
    /* 4 layers, 4 stages, first 2: 7 effective, 1 each: the weight is over it */
    c.model.num_layers = 4;
    c.first_stage_less_layers = 2;
    c.last_stage_less_layers = 1;
    want_split_error(&c, 4, "the first stage's weight 2 is over the smallest share, 1 layers");
    c.first_stage_less_layers = 1;
    want_split_error(&c, 7, "7 stages but 6 effective layers");
    /* not with Megatron's rules */
    c.account_for_embedding_in_pipeline_split = true;
    want_split_error(&c, 2, "cannot be set with pipeline_parallel_first_stage_less_layers");
    /* the flag's helper: the other weight takes torchtitan's default */
    struct config d;
    config_default(&d);
    stage_split_less_layers_given(&d);
    CHECK(d.stage_less_layers && d.first_stage_less_layers == 1 && d.last_stage_less_layers == 1);
    d.first_stage_less_layers = 3;
    stage_split_less_layers_given(&d); /* a second one keeps the first's value */
    CHECK(d.first_stage_less_layers == 3);
}

/* ---- through a config file ---------------------------------------------------------------- */

static void test_config_keys(void)
{
    const char *text =
        "{\"pipeline_scheme\": \"W\", \"chunks\": 2, \"num_device\": 4,\n"
        " \"model\": {\"type\": \"GPT3\", \"hidden_size\": 256, \"num_layers\": 14,\n"
        "   \"num_attention_heads\": 4, \"seq_length\": 128, \"vocab_size\": 1000},\n"
        " \"pipeline_layout\": \"Et|(t*2|)*6,tL\"}\n";
    struct config c, d;
    struct mt_err e = {0};
    CHECK(config_load_string(text, strlen(text), "a.json", &c, &e) == MT_OK);
    CHECK(strcmp(c.pipeline_layout, "Et|(t*2|)*6,tL") == 0);
    char *out = config_to_json(&c);
    CHECK(out != NULL && strstr(out, "\"pipeline_layout\": \"Et|(t*2|)*6,tL\"") != NULL);
    CHECK(config_load_string(out, strlen(out), "b.json", &d, &e) == MT_OK);
    CHECK(strcmp(d.pipeline_layout, c.pipeline_layout) == 0);
    free(out);
    /* the other keys round trip too */
    const char *text2 =
        "{\"num_device\": 4, \"model\": \"GPT3-1.6B\",\n"
        " \"decoder_first_pipeline_num_layers\": 8, \"decoder_last_pipeline_num_layers\": 8}\n";
    CHECK(config_load_string(text2, strlen(text2), "c.json", &c, &e) == MT_OK);
    out = config_to_json(&c);
    CHECK(config_load_string(out, strlen(out), "d.json", &d, &e) == MT_OK);
    CHECK(d.decoder_first_pipeline_num_layers == 8 && d.decoder_last_pipeline_num_layers == 8);
    free(out);
    const char *text3 = "{\"num_device\": 4, \"pipeline_parallel_last_stage_less_layers\": 2}\n";
    CHECK(config_load_string(text3, strlen(text3), "e.json", &c, &e) == MT_OK);
    CHECK(c.stage_less_layers && c.first_stage_less_layers == 1 && c.last_stage_less_layers == 2);
    out = config_to_json(&c);
    CHECK(config_load_string(out, strlen(out), "f.json", &d, &e) == MT_OK);
    CHECK(d.stage_less_layers && d.first_stage_less_layers == 1 && d.last_stage_less_layers == 2);
    free(out);
    const char *text4 =
        "{\"account_for_embedding_in_pipeline_split\": true,\n"
        " \"account_for_loss_in_pipeline_split\": true, \"num_device\": 2,\n"
        " \"model\": {\"type\": \"GPT3\", \"hidden_size\": 256, \"num_layers\": 14,\n"
        "   \"num_attention_heads\": 4, \"seq_length\": 128, \"vocab_size\": 1000}}\n";
    CHECK(config_load_string(text4, strlen(text4), "g.json", &c, &e) == MT_OK);
    out = config_to_json(&c);
    CHECK(config_load_string(out, strlen(out), "h.json", &d, &e) == MT_OK);
    CHECK(d.account_for_embedding_in_pipeline_split && d.account_for_loss_in_pipeline_split);
    free(out);
    /* errors name the file, the key's place and the string's column */
    const char *bad = "{\"num_device\": 4,\n  \"pipeline_layout\": \"Et*|L\"}\n";
    CHECK(config_load_string(bad, strlen(bad), "bad.json", &c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "bad.json:2:");
    CHECK_STR_CONTAINS(e.msg, "pipeline_layout: column 3: 't*' needs a count");
    /* a readable layout that does not fit the pipeline: config_validate, at the key */
    const char *bad2 = "{\"num_device\": 4, \"model\": \"GPT3-1.6B\",\n"
                       "  \"pipeline_layout\": \"Et*64|t*64L\"}\n";
    CHECK(config_load_string(bad2, strlen(bad2), "bad2.json", &c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "bad2.json:2:");
    CHECK_STR_CONTAINS(e.msg, "pipeline_layout: 2 stages, but the pipeline has 4");
    const char *bad3 = "{\"decoder_first_pipeline_num_layers\": 0}\n";
    CHECK(config_load_string(bad3, strlen(bad3), "bad3.json", &c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "decoder_first_pipeline_num_layers");
    /* Auto: the geometry is the tuner's; the layout is checked without it */
    const char *autos = "{\"pipeline_scheme\": \"Auto\", \"model\": \"GPT3-1.6B\",\n"
                        "  \"pipeline_layout\": \"Et*64|t*64L\"}\n";
    CHECK(config_load_string(autos, strlen(autos), "auto.json", &c, &e) == MT_OK);
}

/* ---- the split search --------------------------------------------------------------------- */

struct bytes_table {
    int L;
    double v[6][12][12]; /* [stage][first][n] */
};

static double table_bytes(void *ctx, int stage, int first, int n)
{
    const struct bytes_table *t = ctx;
    return t->v[stage][first][n];
}

/* Every split of L layers into S stages of >= min layers: the least slowest stage, and the
 * least sum of squares among those splits. */
static void brute(const struct tune_split_problem *p, int *cur, int s, int used, double *best_max,
                  double *best_sq, int *best_split)
{
    int L = p->num_layers, S = p->num_stages;
    if (s == S) {
        if (used != L)
            return;
        double mx = 0, sq = 0;
        int first = 0;
        for (int i = 0; i < S; i++) {
            double t = 0;
            for (int k = first; k < first + cur[i]; k++)
                t += p->layer_us[k];
            if (i == 0)
                t += p->embed_us;
            if (i == S - 1)
                t += p->head_us;
            if (p->bytes && p->cap_bytes > 0 && p->bytes(p->ctx, i, first, cur[i]) > p->cap_bytes)
                return;
            mx = t > mx ? t : mx;
            sq += t * t;
            first += cur[i];
        }
        if (mx < *best_max || (mx == *best_max && sq < *best_sq)) {
            *best_max = mx;
            *best_sq = sq;
            memcpy(best_split, cur, sizeof(int) * (size_t)S);
        }
        return;
    }
    for (int n = p->min_layers; used + n <= L; n++) {
        cur[s] = n;
        brute(p, cur, s + 1, used + n, best_max, best_sq, best_split);
    }
}

static void test_split_search(void)
{
    /* hand-worked: 8 layers of 1 and a head of 2 on the last of 3 stages: 10 in integer
     * stages, so the slowest takes 4; the most even with none over 4 (sum of squares 34:
     * 4, 3, 1 + 2 or 3, 4, 1 + 2 or 3, 3, 2 + 2), layers early: 4, 3, 1 */
    double ones[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    struct tune_split_problem p = {.num_layers = 8, .num_stages = 3, .layer_us = ones,
                                   .head_us = 2, .min_layers = 1};
    int split[8];
    double slowest = 0;
    CHECK(tune_split_balance(&p, split, &slowest, NULL) == MT_OK);
    CHECK_NEAR(slowest, 4, 0);
    CHECK(split[0] == 4 && split[1] == 3 && split[2] == 1);
    /* 30 equal layers on 4 stages: no stage over 8, the most even of them, layers early:
     * 8, 8, 7, 7; its layout string */
    p.num_layers = 30;
    p.num_stages = 4;
    p.head_us = 0;
    double thirty[30];
    for (int i = 0; i < 30; i++)
        thirty[i] = 1;
    p.layer_us = thirty;
    int s4[4];
    CHECK(tune_split_balance(&p, s4, &slowest, NULL) == MT_OK);
    CHECK_NEAR(slowest, 8, 0);
    CHECK(s4[0] == 8 && s4[1] == 8 && s4[2] == 7 && s4[3] == 7);
    char w[128];
    CHECK(tune_split_layout(s4, 4, w, sizeof w, NULL) == MT_OK);
    CHECK(strcmp(w, "Et*8|t*8|t*7|t*7L") == 0);
    /* a head as heavy as 4 layers, 32 layers, 4 stages: (32 + 4) / 4 = 9: 9, 9, 9, 5 */
    double l32[32];
    for (int i = 0; i < 32; i++)
        l32[i] = 1;
    p.num_layers = 32;
    p.layer_us = l32;
    p.head_us = 4;
    CHECK(tune_split_balance(&p, s4, &slowest, NULL) == MT_OK);
    CHECK_NEAR(slowest, 9, 0);
    CHECK(s4[0] == 9 && s4[1] == 9 && s4[2] == 9 && s4[3] == 5);
    CHECK(tune_split_layout(s4, 4, w, sizeof w, NULL) == MT_OK);
    CHECK(strcmp(w, "Et*9|t*9|t*9|t*5L") == 0);
    /* infeasible: every stage over the cap */
    struct bytes_table *t = calloc(1, sizeof *t);
    for (int s = 0; s < 6; s++)
        for (int f = 0; f < 12; f++)
            for (int n = 0; n < 12; n++)
                t->v[s][f][n] = 100;
    p.num_layers = 8;
    p.num_stages = 3;
    p.layer_us = ones;
    p.bytes = table_bytes;
    p.ctx = t;
    p.cap_bytes = 50;
    struct mt_err e = {0};
    CHECK(tune_split_balance(&p, split, &slowest, &e) == MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "no split of 8 layers over 3 stages fits");
    /* random small cases against brute force */
    int bad = 0, cases = 0, infeasible = 0;
    for (int it = 0; it < 3000; it++) {
        int L = 1 + (int)rnd(10), S = 1 + (int)rnd(5);
        int minl = (int)rnd(2);
        if (minl * S > L)
            continue;
        double lt[12];
        for (int i = 0; i < L; i++)
            lt[i] = (double)(1 + rnd(5)); /* integers: ties happen, and are exact */
        for (int s = 0; s < S; s++)
            for (int f = 0; f <= L; f++)
                for (int n = 0; n + f <= L; n++)
                    t->v[s][f][n] = (double)(n * (1 + rnd(3)) + rnd(4) + (S - s));
        struct tune_split_problem q = {.num_layers = L, .num_stages = S, .layer_us = lt,
                                       .embed_us = (double)rnd(4), .head_us = (double)rnd(6),
                                       .bytes = rnd(4) ? table_bytes : NULL, .ctx = t,
                                       .cap_bytes = (double)(6 + rnd(20)), .min_layers = minl};
        int cur[8], want[8], got[8];
        double bm = INFINITY, bs = INFINITY, gs = 0;
        brute(&q, cur, 0, 0, &bm, &bs, want);
        int rc = tune_split_balance(&q, got, &gs, NULL);
        cases++;
        if (bm == INFINITY) {
            infeasible++;
            bad += rc != MT_EINFEASIBLE;
            continue;
        }
        if (rc != MT_OK || gs != bm) {
            bad++;
            continue;
        }
        /* the split returned: its layers sum to L, it fits, and it has the least slowest stage
         * and the least sum of squares (the same split brute force found, or one as good) */
        double mx = 0, sq = 0;
        int first = 0, sum = 0;
        bool fits = true;
        for (int i = 0; i < S; i++) {
            double tt = 0;
            for (int k = first; k < first + got[i]; k++)
                tt += lt[k];
            tt += (i == 0 ? q.embed_us : 0) + (i == S - 1 ? q.head_us : 0);
            if (q.bytes && q.bytes(t, i, first, got[i]) > q.cap_bytes)
                fits = false;
            fits = fits && got[i] >= minl;
            mx = tt > mx ? tt : mx;
            sq += tt * tt;
            first += got[i];
            sum += got[i];
        }
        bad += sum != L || !fits || mx != bm || sq != bs;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(infeasible > 0 && infeasible < cases); /* both kinds were drawn */
    printf("split search: %d random cases against brute force (%d infeasible)\n", cases,
           infeasible);
    /* sizes out of range */
    p.num_layers = TUNE_SPLIT_MAX_LAYERS + 1;
    CHECK(tune_split_balance(&p, split, &slowest, NULL) == MT_EINVAL);
    free(t);
}

int main(void)
{
    test_default_rule();
    test_megatron_examples();
    test_against_megatron();
    test_round_trips();
    test_megatron_flags();
    test_torchtitan();
    test_config_keys();
    test_split_search();
    return check_report("test_stage_split");
}
