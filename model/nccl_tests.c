/* model/nccl_tests.c: nccl-tests output into collective rows (model/nccl_tests.h). One pass
 * over the lines keeps what the header lines say and the rows; the rows become table rows at
 * the end, when the collective and the ranks are known. */
#include <config.h>
#include "model/nccl_tests.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/microcal.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

#define NT_MAX_TOKENS 64
#define NT_MAX_RANKS (1 << 20)
#define NT_MAX_FIGURE 1e18 /* model/microcal.h's bound on sizes and rates */

struct nt_token {
    const char *p;
    size_t n;
};

struct nt_row {
    double size, time_us, busbw;
    int line;
};

/* The column header: where a group's figures are, and the row's width. */
struct nt_columns {
    int time[2], busbw[2], wrong[2];
    int width;
    bool timestamp; /* -T: a trailing timestamp of its own words */
};

struct nt_state {
    const char *name;
    int line;
    int n_thread, n_gpus; /* 0: no "# nThread" line */
    char program[64];
    bool have_header, have_footer;
    int header_line;
    struct nt_columns cols;
    struct nt_row *rows;
    size_t nrows, cap;
    int *rank_ids;
    size_t nranks, rank_cap;
    char **hosts;
    size_t nhosts;
    char device[96], type[16];
    double avg_busbw;
};

static int nt_fail(struct mt_err *e, const char *name, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int nt_fail(struct mt_err *e, const char *name, int line, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line > 0)
        return err_set(e, MT_EPARSE, "%s:%d: %s", name, line, what);
    return err_set(e, MT_EPARSE, "%s: %s", name, what);
}

static bool nt_is(const struct nt_token *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0;
}

/* A printable copy of a token (or a line) for messages. */
static const char *nt_clip(const char *p, size_t n, char *buf, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++)
        buf[k++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
    buf[k] = '\0';
    return buf;
}

static int nt_tokens(const char *p, size_t n, struct nt_token *out, int max)
{
    int k = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
            i++;
        if (i == n)
            break;
        size_t j = i;
        while (j < n && p[j] != ' ' && p[j] != '\t' && p[j] != '\r')
            j++;
        if (k == max)
            return max + 1; /* too many */
        out[k++] = (struct nt_token){p + i, j - i};
        i = j;
    }
    return k;
}

/* A whole token as a finite double; false otherwise. */
static bool nt_double(const struct nt_token *t, double *v)
{
    char buf[64];
    if (t->n == 0 || t->n >= sizeof buf)
        return false;
    memcpy(buf, t->p, t->n);
    buf[t->n] = '\0';
    char *end;
    errno = 0;
    *v = strtod(buf, &end);
    return *end == '\0' && errno == 0 && isfinite(*v);
}

/* A whole token as an integer (decimal, optional '-'), |v| <= 2^53. */
static bool nt_int(const struct nt_token *t, long long *v)
{
    if (t->n == 0 || t->n > 18)
        return false;
    size_t i = t->p[0] == '-';
    if (i == t->n)
        return false;
    long long x = 0;
    for (; i < t->n; i++) {
        if (t->p[i] < '0' || t->p[i] > '9')
            return false;
        x = x * 10 + (t->p[i] - '0');
    }
    *v = t->p[0] == '-' ? -x : x;
    return true;
}

int nccl_tests_coll_parse(const char *s)
{
    static const struct {
        const char *name;
        enum op_coll c;
    } names[] = {{"all_reduce", COLL_ALL_REDUCE},         {"all_gather", COLL_ALL_GATHER},
                 {"reduce_scatter", COLL_REDUCE_SCATTER}, {"all_to_all", COLL_ALL_TO_ALL},
                 {"alltoall", COLL_ALL_TO_ALL},           {"send_recv", COLL_SEND_RECV},
                 {"sendrecv", COLL_SEND_RECV}};
    size_t n = strlen(s);
    /* nccl-tests' program names: NAME_perf, NAME_perf_mpi */
    if (n > 4 && strcmp(s + n - 4, "_mpi") == 0)
        n -= 4;
    if (n > 5 && strncmp(s + n - 5, "_perf", 5) == 0)
        n -= 5;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && strncmp(s, names[i].name, n) == 0)
            return (int)names[i].c;
    return -1;
}

/* "# Collective test starting: PROGRAM" */
static int nt_program(struct nt_state *st, const struct nt_token *t, int n, struct mt_err *e)
{
    if (n < 4)
        return nt_fail(e, st->name, st->line, "a 'Collective test starting' line without the "
                                              "program's name");
    const char *p = t[3].p;
    size_t len = t[3].n;
    for (size_t i = len; i > 0; i--)
        if (p[i - 1] == '/') { /* ./build/all_reduce_perf */
            p += i;
            len -= i;
            break;
        }
    if (st->program[0] != '\0')
        return nt_fail(e, st->name, st->line,
                       "a second 'Collective test starting' line: one test run a file");
    nt_clip(p, len, st->program, sizeof st->program);
    return MT_OK;
}

/* "#  Rank  0 Group  0 Pid  12345 on   host1 device  0 [0x1b] NVIDIA H100 80GB HBM3" */
static int nt_rank(struct nt_state *st, const struct nt_token *t, int n, struct mt_err *e)
{
    long long rank, dev;
    if (n < 10 || !nt_is(&t[2], "Group") || !nt_is(&t[4], "Pid") || !nt_is(&t[6], "on") ||
        !nt_is(&t[8], "device") || !nt_int(&t[1], &rank) || !nt_int(&t[9], &dev))
        return nt_fail(e, st->name, st->line,
                       "a Rank line not as nccl-tests prints it ('#  Rank R Group G Pid P on "
                       "HOST device D [BUS] NAME')");
    if (rank < 0 || rank >= NT_MAX_RANKS)
        return nt_fail(e, st->name, st->line, "rank %lld is out of range [0, %d)", rank,
                       NT_MAX_RANKS);
    if (st->nranks == st->rank_cap) {
        st->rank_cap = st->rank_cap ? 2 * st->rank_cap : 16;
        st->rank_ids = xreallocarray(st->rank_ids, st->rank_cap, sizeof *st->rank_ids);
    }
    st->rank_ids[st->nranks++] = (int)rank;
    char host[256];
    nt_clip(t[7].p, t[7].n, host, sizeof host);
    bool known = false;
    for (size_t i = 0; i < st->nhosts && !known; i++)
        known = strcmp(st->hosts[i], host) == 0;
    if (!known) {
        st->hosts = xreallocarray(st->hosts, st->nhosts + 1, sizeof *st->hosts);
        st->hosts[st->nhosts++] = xstrdup(host);
    }
    if (st->device[0] == '\0' && n > 11) { /* the name: the words after [BUS] */
        const char *from = t[11].p;
        const char *to = t[n - 1].p + t[n - 1].n;
        nt_clip(from, (size_t)(to - from), st->device, sizeof st->device);
    }
    return MT_OK;
}

/* The column header line's words after '#'. */
static int nt_header(struct nt_state *st, const struct nt_token *t, int n, struct mt_err *e)
{
    static const char *const lead[5] = {"size", "count", "type", "redop", "root"};
    static const char *const per_iter[4] = {"i_min", "i_max", "i_p99", "i_cv%"};
    if (st->have_header)
        return nt_fail(e, st->name, st->line,
                       "a second column header (first at line %d): one test run a file",
                       st->header_line);
    for (int i = 0; i < 5; i++)
        if (i >= n || !nt_is(&t[i], lead[i]))
            goto bad;
    int k = 5;
    struct nt_columns c = {0};
    for (int g = 0; g < 2; g++) {
        if (k + 4 > n || !(nt_is(&t[k], "time") || nt_is(&t[k], "cputime")) ||
            !nt_is(&t[k + 1], "algbw") || !nt_is(&t[k + 2], "busbw") ||
            !nt_is(&t[k + 3], "#wrong"))
            goto bad;
        c.time[g] = k;
        c.busbw[g] = k + 2;
        c.wrong[g] = k + 3;
        k += 4;
        if (k < n && nt_is(&t[k], per_iter[0])) {
            for (int i = 0; i < 4; i++)
                if (k + i >= n || !nt_is(&t[k + i], per_iter[i]))
                    goto bad;
            k += 4;
        }
    }
    c.width = k;
    if (k < n && nt_is(&t[k], "timestamp")) {
        c.timestamp = true;
        k++;
    }
    if (k != n)
        goto bad;
    st->cols = c;
    st->have_header = true;
    st->header_line = st->line;
    return MT_OK;
bad:
    return nt_fail(e, st->name, st->line,
                   "columns not understood: expected nccl-tests' '#  size  count  type  redop  "
                   "root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong'");
}

/* "# Out of bounds values : N OK", "# Avg bus bandwidth : X" */
static int nt_footer(struct nt_state *st, const struct nt_token *t, int n, struct mt_err *e)
{
    long long wrong;
    double bw;
    if (n >= 4 && nt_is(&t[0], "Out") && nt_is(&t[1], "of") && nt_is(&t[2], "bounds")) {
        if (n < 6 || !nt_int(&t[5], &wrong) || wrong < 0)
            return nt_fail(e, st->name, st->line, "an 'Out of bounds values' line without its "
                                                  "count");
        if (wrong > 0)
            return nt_fail(e, st->name, st->line,
                           "nccl-tests found %lld out-of-bounds values: a run that failed its "
                           "check is no measurement",
                           wrong);
        return MT_OK;
    }
    if (n < 5 || !nt_double(&t[4], &bw) || bw < 0)
        return nt_fail(e, st->name, st->line, "an 'Avg bus bandwidth' line without its figure");
    st->avg_busbw = bw;
    st->have_footer = true;
    return MT_OK;
}

static int nt_comment(struct nt_state *st, const char *p, size_t len, struct mt_err *e)
{
    struct nt_token t[NT_MAX_TOKENS];
    int n = nt_tokens(p + 1, len - 1, t, NT_MAX_TOKENS);
    if (n > NT_MAX_TOKENS)
        n = NT_MAX_TOKENS; /* a long comment: only its first words matter */
    if (n == 0)
        return MT_OK;
    if (n >= 3 && nt_is(&t[0], "Collective") && nt_is(&t[1], "test") &&
        nt_is(&t[2], "starting:"))
        return nt_program(st, t, n, e);
    if (nt_is(&t[0], "nThread")) {
        long long th, g;
        if (n < 4 || !nt_is(&t[2], "nGpus") || !nt_int(&t[1], &th) || !nt_int(&t[3], &g) ||
            th < 1 || g < 1 || th > NT_MAX_RANKS || g > NT_MAX_RANKS)
            return nt_fail(e, st->name, st->line, "an 'nThread T nGpus G' line not as "
                                                  "nccl-tests prints it");
        st->n_thread = (int)th;
        st->n_gpus = (int)g;
        return MT_OK;
    }
    if (nt_is(&t[0], "Rank"))
        return nt_rank(st, t, n, e);
    if (nt_is(&t[0], "size"))
        return nt_header(st, t, n, e);
    if ((n >= 3 && nt_is(&t[0], "Out") && nt_is(&t[1], "of") && nt_is(&t[2], "bounds")) ||
        (n >= 3 && nt_is(&t[0], "Avg") && nt_is(&t[1], "bus") && nt_is(&t[2], "bandwidth"))) {
        if (!st->have_header)
            return nt_fail(e, st->name, st->line, "a summary line before the column header");
        return nt_footer(st, t, n, e);
    }
    return MT_OK; /* every other '#' line: the run's settings, units, notes */
}

static int nt_data_row(struct nt_state *st, const struct nt_token *t, int n, bool in_place,
                       struct mt_err *e)
{
    const struct nt_columns *c = &st->cols;
    char buf[64];
    if (!st->have_header)
        return nt_fail(e, st->name, st->line, "a row before the column header line");
    if (st->have_footer)
        return nt_fail(e, st->name, st->line, "a row after the 'Avg bus bandwidth' line");
    if (n < c->width || (n > c->width && !c->timestamp))
        return nt_fail(e, st->name, st->line, "%d columns where the header has %d%s", n,
                       c->width, n < c->width ? " (a truncated row?)" : "");
    long long size, count, root;
    if (!nt_int(&t[0], &size))
        return nt_fail(e, st->name, st->line, "size '%s' is not an integer",
                       nt_clip(t[0].p, t[0].n, buf, sizeof buf));
    if (size < 0)
        return nt_fail(e, st->name, st->line, "size %lld is negative", size);
    if ((double)size > NT_MAX_FIGURE)
        return nt_fail(e, st->name, st->line, "size %lld is over %g", size, NT_MAX_FIGURE);
    if (!nt_int(&t[1], &count) || count < 0)
        return nt_fail(e, st->name, st->line, "count '%s' is not an integer >= 0",
                       nt_clip(t[1].p, t[1].n, buf, sizeof buf));
    if (!nt_int(&t[4], &root))
        return nt_fail(e, st->name, st->line, "root '%s' is not an integer",
                       nt_clip(t[4].p, t[4].n, buf, sizeof buf));
    char type[16];
    nt_clip(t[2].p, t[2].n, type, sizeof type);
    if (st->type[0] == '\0')
        snprintf(st->type, sizeof st->type, "%s", type);
    double fig[2][3];
    for (int g = 0; g < 2; g++) {
        static const char *const what[3] = {"time", "algbw", "busbw"};
        for (int i = 0; i < 3; i++) {
            const struct nt_token *v = &t[c->time[g] + i];
            if (!nt_double(v, &fig[g][i]))
                return nt_fail(e, st->name, st->line, "%s%s '%s' is not a finite number",
                               g ? "in-place " : "", what[i], nt_clip(v->p, v->n, buf, sizeof buf));
            if (fig[g][i] < 0 || fig[g][i] > NT_MAX_FIGURE)
                return nt_fail(e, st->name, st->line, "%s%s %g is %s", g ? "in-place " : "",
                               what[i], fig[g][i], fig[g][i] < 0 ? "negative" : "out of range");
        }
        const struct nt_token *w = &t[c->wrong[g]];
        double wrong;
        if (!nt_is(w, "N/A")) {
            if (!nt_double(w, &wrong) || wrong < 0)
                return nt_fail(e, st->name, st->line, "#wrong '%s' is not a count or N/A",
                               nt_clip(w->p, w->n, buf, sizeof buf));
            if (wrong > 0)
                return nt_fail(e, st->name, st->line,
                               "%g wrong values at %lld bytes: a run that failed its check is no "
                               "measurement",
                               wrong, size);
        }
    }
    if (size == 0)
        return MT_OK; /* nothing moved: no bandwidth to look up */
    int g = in_place ? 1 : 0;
    if (st->nrows == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 32;
        st->rows = xreallocarray(st->rows, st->cap, sizeof *st->rows);
    }
    st->rows[st->nrows++] = (struct nt_row){(double)size, fig[g][0], fig[g][2], st->line};
    return MT_OK;
}

static bool nt_nccl_line(const char *p, size_t len)
{
    static const char *const tags[] = {"NCCL INFO", "NCCL WARN"};
    for (size_t k = 0; k < 2; k++) {
        size_t m = strlen(tags[k]);
        for (size_t i = 0; i + m <= len; i++)
            if (memcmp(p + i, tags[k], m) == 0)
                return true;
    }
    return false;
}

static int nt_line(struct nt_state *st, const char *p, size_t len, bool in_place,
                   struct mt_err *e)
{
    size_t i = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
        i++;
    if (i == len)
        return MT_OK;
    if (p[0] == '#')
        return nt_comment(st, p, len, e);
    if (nt_nccl_line(p, len))
        return MT_OK;
    struct nt_token t[NT_MAX_TOKENS];
    int n = nt_tokens(p, len, t, NT_MAX_TOKENS);
    long long v;
    bool row = n >= 1 && n <= NT_MAX_TOKENS && nt_int(&t[0], &v);
    if (row)
        return nt_data_row(st, t, n, in_place, e);
    if (!st->have_header)
        return MT_OK; /* the launcher's words before the table */
    char buf[80];
    return nt_fail(e, st->name, st->line, "not a row of the table: '%s'",
                   nt_clip(p, len, buf, sizeof buf));
}

static int nt_row_cmp(const void *pa, const void *pb)
{
    const struct nt_row *a = pa, *b = pb;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

static int nt_int_cmp(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

/* The collective, ranks and link, then the rows as table rows. */
static int nt_finish(struct nt_state *st, const struct nccl_tests_opts *o,
                     struct microcal_builder *b, struct nccl_tests_info *info, struct mt_err *e)
{
    if (!st->have_header)
        return nt_fail(e, st->name, 0,
                       "no nccl-tests table (the '#  size  count  type  redop  root  time  algbw  "
                       "busbw  #wrong ...' header line)");
    if (!st->have_footer)
        return nt_fail(e, st->name, st->line,
                       "the file ends before nccl-tests' '# Avg bus bandwidth' line (truncated?)");
    if (st->nrows == 0)
        return nt_fail(e, st->name, st->header_line, "no rows of a size above 0 bytes");
    int coll = -1;
    if (st->program[0] != '\0') {
        coll = nccl_tests_coll_parse(st->program);
        if (coll < 0)
            return nt_fail(e, st->name, 0,
                           "%s: not a collective the cost model prices (all_reduce_perf, "
                           "all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf)",
                           st->program);
        if (o->coll >= 0 && o->coll != coll)
            return err_set(e, MT_EINVAL, "%s: --collective %s, but the file is %s's", st->name,
                           op_coll_name((enum op_coll)o->coll), st->program);
    } else if (o->coll >= 0) {
        coll = o->coll;
    } else {
        return nt_fail(e, st->name, 0,
                       "cannot tell the collective: no '# Collective test starting' line "
                       "(nccl-tests before 2.15); give it with --collective");
    }
    int ranks;
    if (st->nranks > 0) {
        qsort(st->rank_ids, st->nranks, sizeof *st->rank_ids, nt_int_cmp);
        for (size_t i = 0; i < st->nranks; i++)
            if (st->rank_ids[i] != (int)i)
                return nt_fail(e, st->name, 0,
                               "the Rank lines do not number ranks 0 to %zu once each (rank %d)",
                               st->nranks - 1, st->rank_ids[i]);
        ranks = (int)st->nranks;
        long per = (long)(st->n_thread ? st->n_thread : 1) * (st->n_gpus ? st->n_gpus : 1);
        if (ranks % per != 0)
            return nt_fail(e, st->name, 0,
                           "%d Rank lines, not a multiple of nThread %d x nGpus %d", ranks,
                           st->n_thread, st->n_gpus);
    } else if (st->n_thread > 0) {
        long r = (long)st->n_thread * st->n_gpus;
        if (r > NT_MAX_RANKS)
            return nt_fail(e, st->name, 0, "nThread x nGpus %ld is over %d", r, NT_MAX_RANKS);
        ranks = (int)r;
    } else {
        return nt_fail(e, st->name, 0, "no Rank lines and no 'nThread T nGpus G' line: cannot "
                                       "tell the ranks");
    }
    if (ranks < 2)
        return nt_fail(e, st->name, 0, "one rank: nothing crossed a link");
    enum op_link link = o->link >= 0 ? (enum op_link)o->link
                        : st->nhosts > 1 ? LINK_NETWORK
                                         : LINK_NVLINK;
    qsort(st->rows, st->nrows, sizeof *st->rows, nt_row_cmp);
    for (size_t i = 1; i < st->nrows; i++)
        if (st->rows[i].size == st->rows[i - 1].size)
            return nt_fail(e, st->name, st->rows[i].line,
                           "a second row of %.0f bytes (the first at line %d): several data "
                           "types, reduction ops or cycles (-d all, -o all, -N) in one file; "
                           "give each its own",
                           st->rows[i].size, st->rows[i - 1].line);
    double factor = microcal_bus_factor((enum op_coll)coll, ranks);
    for (size_t i = 0; i < st->nrows; i++) {
        struct nt_row *r = &st->rows[i];
        if (!(r->busbw > 0)) /* printed 0.00: from the time, as nccl-tests' GetBw */
            r->busbw = r->time_us > 0 ? r->size / (r->time_us * 1e-6) / 1e9 * factor : 0;
        if (!(r->busbw > 0) || !isfinite(r->busbw))
            return nt_fail(e, st->name, r->line, "busbw and time are 0: no bandwidth measured");
        if (r->busbw > NT_MAX_FIGURE)
            return nt_fail(e, st->name, r->line, "busbw %g GB/s (from the time) is out of range",
                           r->busbw);
    }
    info->row_lines = xmalloc(st->nrows * sizeof *info->row_lines);
    for (size_t i = 0; i < st->nrows; i++) {
        const struct nt_row *r = &st->rows[i];
        struct microcal_coll c = {(enum op_coll)coll, link, ranks, r->size, r->busbw};
        microcal_add_coll(b, &c);
        info->row_lines[i] = r->line;
    }
    info->coll = (enum op_coll)coll;
    info->link = link;
    info->ranks = ranks;
    info->hosts = (int)st->nhosts;
    info->rows = (int)st->nrows;
    snprintf(info->program, sizeof info->program, "%s", st->program);
    snprintf(info->device, sizeof info->device, "%s", st->device);
    snprintf(info->type, sizeof info->type, "%s", st->type);
    info->avg_busbw = st->avg_busbw;
    return MT_OK;
}

int nccl_tests_read(const char *text, size_t len, const char *name,
                    const struct nccl_tests_opts *o, struct microcal_builder *b,
                    struct nccl_tests_info *info, struct mt_err *e)
{
    struct nt_state st;
    memset(&st, 0, sizeof st);
    memset(info, 0, sizeof *info);
    st.name = name;
    int rc = MT_OK;
    size_t i = 0;
    while (i < len && rc == MT_OK) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        st.line++;
        rc = nt_line(&st, text + i, j - i, o->in_place, e);
        i = j + 1;
    }
    if (rc == MT_OK)
        rc = nt_finish(&st, o, b, info, e);
    free(st.rows);
    free(st.rank_ids);
    for (size_t h = 0; h < st.nhosts; h++)
        free(st.hosts[h]);
    free(st.hosts);
    return rc;
}

int nccl_tests_load(const char *path, const struct nccl_tests_opts *o,
                    struct microcal_builder *b, struct nccl_tests_info *info, struct mt_err *e)
{
    char *text;
    size_t len;
    memset(info, 0, sizeof *info);
    TRY(str_read_file(path, NCCL_TESTS_MAX_BYTES, &text, &len, e));
    int rc = nccl_tests_read(text, len, path, o, b, info, e);
    free(text);
    return rc;
}

void nccl_tests_info_fini(struct nccl_tests_info *info)
{
    free(info->row_lines);
    info->row_lines = NULL;
}
