/* traces/scan.c: the streaming trace reader of traces/scan.h.
 *
 * The file is read in 1 MiB chunks through zlib's gzread, which passes plain files through
 * untouched, into one buffer. buf[mark, pos) is the item being scanned, buf[pos, len) what is
 * read and not yet looked at; a refill drops buf[0, mark), so the buffer holds the current
 * item and one chunk, never the file. The scanner only finds where each value ends (strings,
 * escapes and bracket nesting); checking a value's contents is the caller's parser's job,
 * which is why every item carries its line and column. A top-level member over
 * SCAN_MAX_ITEM (a "systemTraceEvents" string, say) is skipped without being kept. */
#include <config.h>
#include "traces/scan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util/err.h"
#include "util/xalloc.h"

#define SCAN_CHUNK (1u << 20)

enum scan_state {
    ST_START,     /* before the top-level value */
    ST_OBJ_KEY,   /* in the object form, before a member name (or the closing brace) */
    ST_OBJ_NEXT,  /* after a member: ',' or '}' */
    ST_ARR_ELEM,  /* in the event array, before an element (or the closing bracket) */
    ST_ARR_NEXT,  /* after an element: ',' or ']' */
    ST_AFTER_TOP, /* after the top-level value: only whitespace may follow */
    ST_DONE,
};

struct scan {
    char name[512];
    gzFile gz;       /* NULL when reading from memory */
    bool gzip;       /* the file is gzip-compressed */
    const char *mem; /* scan_open_mem */
    size_t mem_len, mem_off;
    char *buf;
    size_t chunk; /* what one fill reads: SCAN_CHUNK, or a small text's own size */
    size_t cap, len, pos, mark;
    size_t dropped; /* bytes dropped from the front of buf so far */
    long line, col; /* of buf[pos] */
    bool eof;
    bool skipping; /* inside a member too large to keep: mark follows pos */
    enum scan_state st;
    bool top_array;   /* the document is the event array itself */
    bool after_comma; /* the element / member about to be read follows a ',' */
    size_t index;     /* events handed out */
    char key[64];
};

static void scan_init(struct scan *s, const char *name)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->line = 1;
    s->col = 1;
    s->st = ST_START;
    s->chunk = SCAN_CHUNK;
}

int scan_open(const char *path, struct scan **out, struct mt_err *e)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return err_set(e, MT_EINVAL, "%s: is a directory, not a file", path);
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL)
        return err_set(e, errno ? MT_EINVAL : MT_ENOMEM, "%s: cannot open: %s", path,
                       errno ? strerror(errno) : "out of memory");
    gzbuffer(gz, 256u << 10);
    struct scan *s = xmalloc(sizeof *s);
    scan_init(s, path);
    s->gz = gz;
    *out = s;
    return MT_OK;
}

int scan_open_mem(const char *data, size_t len, const char *name, struct scan **out,
                  struct mt_err *e)
{
    (void)e;
    struct scan *s = xmalloc(sizeof *s);
    scan_init(s, name);
    s->mem = data;
    s->mem_len = len;
    /* a text in memory is read in chunks of its own size (4 KiB at least): a megabyte buffer
     * for every small trace cost the fuzzers an mmap and madvise per input (issue 41 item 9) */
    s->chunk = len < SCAN_CHUNK ? (len < 4096 ? 4096 : len) : SCAN_CHUNK;
    *out = s;
    return MT_OK;
}

void scan_close(struct scan *s)
{
    if (s == NULL)
        return;
    if (s->gz != NULL)
        gzclose(s->gz);
    free(s->buf);
    free(s);
}

const char *scan_name(const struct scan *s)
{
    return s->name;
}

/* Reads the next chunk after dropping what no item needs. Returns MT_OK with *got = 0 at the
 * end of the input. */
static int scan_fill(struct scan *s, size_t *got, struct mt_err *e)
{
    *got = 0;
    if (s->eof)
        return MT_OK;
    size_t keep = s->skipping ? s->pos : s->mark;
    if (keep > 0) {
        memmove(s->buf, s->buf + keep, s->len - keep);
        s->len -= keep;
        s->pos -= keep;
        s->mark -= keep < s->mark ? keep : s->mark;
        s->dropped += keep;
    }
    if (s->len + s->chunk > s->cap) {
        size_t cap = s->cap ? s->cap : s->chunk;
        while (cap < s->len + s->chunk)
            cap *= 2;
        s->buf = xreallocarray(s->buf, cap, 1);
        s->cap = cap;
    }
    if (s->gz == NULL) {
        size_t n = s->mem_len - s->mem_off;
        if (n > s->chunk)
            n = s->chunk;
        memcpy(s->buf + s->len, s->mem + s->mem_off, n);
        s->mem_off += n;
        s->len += n;
        *got = n;
        s->eof = n == 0;
        return MT_OK;
    }
    int n = gzread(s->gz, s->buf + s->len, (unsigned)s->chunk);
    if (s->dropped == 0 && s->len == 0 && n >= 0)
        s->gzip = !gzdirect(s->gz);
    int zerr = Z_OK;
    const char *msg = gzerror(s->gz, &zerr);
    if (n < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR) || (n == 0 && zerr == Z_BUF_ERROR)) {
        if (zerr == Z_ERRNO)
            return err_set(e, MT_EIO, "%s: read error: %s", s->name, strerror(errno));
        return err_set(e, MT_EIO, "%s: gzip data is corrupt or truncated (zlib: %s)", s->name,
                       msg && *msg ? msg : "unknown error");
    }
    s->len += (size_t)n;
    *got = (size_t)n;
    s->eof = n == 0;
    return MT_OK;
}

/* The byte at pos, -1 at the end of the input, -2 on a read error (in e). */
static inline int scan_peek(struct scan *s, struct mt_err *e)
{
    if (s->pos < s->len)
        return (unsigned char)s->buf[s->pos];
    size_t got;
    if (scan_fill(s, &got, e) != MT_OK)
        return -2;
    return got ? (unsigned char)s->buf[s->pos] : -1;
}

static inline void scan_adv(struct scan *s)
{
    if (s->buf[s->pos++] == '\n') {
        s->line++;
        s->col = 1;
    } else {
        s->col++;
    }
}

static int scan_fail(struct scan *s, int code, struct mt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int scan_fail(struct scan *s, int code, struct mt_err *e, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    s->st = ST_DONE;
    return err_set(e, code, "%s:%ld:%ld: %s", s->name, s->line, s->col, what);
}

/* Skips whitespace (and a UTF-8 byte order mark at the very start). Returns the next byte,
 * -1 at the end, -2 on a read error. */
static int scan_ws(struct scan *s, struct mt_err *e)
{
    for (;;) {
        int c = scan_peek(s, e);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            scan_adv(s);
            continue;
        }
        if (c == 0xEF && s->dropped + s->pos == 0 && s->len >= 3 &&
            memcmp(s->buf, "\xEF\xBB\xBF", 3) == 0) {
            s->pos = 3;
            continue;
        }
        return c;
    }
}

/* What the scanner is inside, for messages. */
static void scan_what(const struct scan *s, bool event, char *buf, size_t n)
{
    if (event)
        snprintf(buf, n, "event %zu", s->index);
    else
        snprintf(buf, n, "top-level member \"%s\"", s->key);
}

static int scan_truncated(struct scan *s, bool event, long line, long col, struct mt_err *e)
{
    char what[96];
    scan_what(s, event, what, sizeof what);
    return scan_fail(s, MT_EPARSE, e,
                     "the file ends inside %s (which starts at line %ld, column %ld): the "
                     "trace is truncated",
                     what, line, col);
}

/* Consumes one JSON value starting at pos. Keeps it in buf unless it grows past
 * SCAN_MAX_ITEM: then an event is an error and a member is skipped (*skipped). */
static int scan_value(struct scan *s, bool event, bool *skipped, struct mt_err *e)
{
    long line = s->line, col = s->col;
    char close[SCAN_MAX_DEPTH];
    int depth = 0;
    bool in_str = false, esc = false;
    *skipped = false;
    s->skipping = false;
    int c = scan_peek(s, e);
    if (c == -2)
        return e ? e->code : MT_EIO;
    if (c == -1)
        return scan_truncated(s, event, line, col, e);
    if (c != '{' && c != '[' && c != '"') {
        /* a literal: number, true, false, null */
        size_t n = 0;
        while ((c = scan_peek(s, e)) >= 0 &&
               (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') ||
                (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            scan_adv(s);
            if (++n > 64)
                return scan_fail(s, MT_EPARSE, e, "a literal longer than 64 characters");
        }
        if (c == -2)
            return e ? e->code : MT_EIO;
        if (n == 0) {
            char what[96];
            scan_what(s, event, what, sizeof what);
            if (c >= 0x20 && c < 0x7f)
                return scan_fail(s, MT_EPARSE, e, "expected a value for %s, got '%c'", what, c);
            return scan_fail(s, MT_EPARSE, e, "expected a value for %s", what);
        }
        return MT_OK;
    }
    for (;;) {
        c = scan_peek(s, e);
        if (c == -2)
            return e ? e->code : MT_EIO;
        if (c == -1)
            return scan_truncated(s, event, line, col, e);
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"') {
                in_str = false;
                if (depth == 0) {
                    scan_adv(s);
                    break;
                }
            }
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (depth == SCAN_MAX_DEPTH)
                return scan_fail(s, MT_EPARSE, e, "values nested deeper than %d levels",
                                 SCAN_MAX_DEPTH);
            close[depth++] = c == '{' ? '}' : ']';
        } else if (c == '}' || c == ']') {
            if (depth == 0 || close[depth - 1] != c)
                return scan_fail(s, MT_EPARSE, e, "unexpected '%c'", c);
            if (--depth == 0) {
                scan_adv(s);
                break;
            }
        }
        scan_adv(s);
        if (!s->skipping && s->pos - s->mark > SCAN_MAX_ITEM) {
            if (event) {
                s->st = ST_DONE;
                return err_set(e, MT_ENOMEM, "%s:%ld:%ld: event %zu is larger than %u MiB", s->name,
                               line, col, s->index, SCAN_MAX_ITEM >> 20);
            }
            s->skipping = true;
            *skipped = true;
        }
    }
    s->skipping = false;
    return MT_OK;
}

/* Reads a member name (the opening quote is at pos) into s->key. */
static int scan_key(struct scan *s, struct mt_err *e)
{
    size_t n = 0;
    bool esc = false;
    scan_adv(s);
    for (;;) {
        int c = scan_peek(s, e);
        if (c == -2)
            return e ? e->code : MT_EIO;
        if (c == -1)
            return scan_fail(s, MT_EPARSE, e,
                             "the file ends inside a member name: the trace is "
                             "truncated");
        scan_adv(s);
        if (!esc && c == '"')
            break;
        esc = !esc && c == '\\';
        if (!esc && n + 1 < sizeof s->key)
            s->key[n++] = (char)c;
        if (s->pos - s->mark > SCAN_MAX_ITEM)
            return scan_fail(s, MT_EPARSE, e, "a member name longer than %u MiB",
                             SCAN_MAX_ITEM >> 20);
    }
    s->key[n] = '\0';
    return MT_OK;
}

static int scan_fail_char(struct scan *s, int c, const char *expected, struct mt_err *e)
{
    if (c >= 0x20 && c < 0x7f)
        return scan_fail(s, MT_EPARSE, e, "expected %s, got '%c'", expected, c);
    return scan_fail(s, MT_EPARSE, e, "expected %s, got byte 0x%02x", expected, c);
}

/* scan_next in state ST_OBJ_KEY, c the next byte: a top-level member. "traceEvents" opens
 * the event array; a member the scanner skips moves on; any other is the item (*got). */
static int scan_member(struct scan *s, int c, struct scan_item *it, bool *got, struct mt_err *e)
{
    if (c == -1)
        return scan_fail(s, MT_EPARSE, e,
                         "the file ends before the top-level object is closed: the "
                         "trace is truncated");
    if (c == '}' && !s->after_comma) {
        scan_adv(s);
        s->st = ST_AFTER_TOP;
        return MT_OK;
    }
    if (c != '"')
        return scan_fail_char(s, c, "a member name", e);
    s->mark = s->pos;
    TRY(scan_key(s, e));
    c = scan_ws(s, e);
    if (c == -2)
        return e ? e->code : MT_EIO;
    if (c != ':')
        return c == -1 ? scan_fail(s, MT_EPARSE, e,
                                   "the file ends after member name "
                                   "\"%s\": the trace is truncated",
                                   s->key)
                       : scan_fail_char(s, c, "':' after a member name", e);
    scan_adv(s);
    c = scan_ws(s, e);
    if (c == -2)
        return e ? e->code : MT_EIO;
    if (strcmp(s->key, "traceEvents") == 0) {
        if (c != '[')
            return c == -1 ? scan_truncated(s, false, s->line, s->col, e)
                           : scan_fail_char(s, c, "an array for \"traceEvents\"", e);
        scan_adv(s);
        s->st = ST_ARR_ELEM;
        s->after_comma = false;
        return MT_OK;
    }
    s->mark = s->pos;
    long line = s->line, col = s->col;
    bool skipped;
    TRY(scan_value(s, false, &skipped, e));
    s->st = ST_OBJ_NEXT;
    if (skipped) {
        s->mark = s->pos;
        return MT_OK;
    }
    it->kind = SCAN_MEMBER;
    it->key = s->key;
    it->text = s->buf + s->mark;
    it->len = s->pos - s->mark;
    it->line = line;
    it->col = col;
    *got = true;
    return MT_OK;
}

/* The file ended inside the event array: the bare-array form may end so, without ']' (even
 * after ','); "traceEvents" may not. */
static int scan_array_eof(struct scan *s, struct mt_err *e)
{
    if (s->top_array) {
        s->st = ST_DONE;
        return MT_OK;
    }
    return scan_fail(s, MT_EPARSE, e,
                     "the file ends inside \"traceEvents\" after %zu events: the trace is "
                     "truncated",
                     s->index);
}

/* scan_next in state ST_ARR_ELEM, c the next byte: an event (*got), the array's end, or the
 * end of a bare array's file (ST_DONE). */
static int scan_element(struct scan *s, int c, struct scan_item *it, bool *got, struct mt_err *e)
{
    if (c == -1)
        return scan_array_eof(s, e);
    if (c == ']' && (!s->after_comma || s->top_array)) {
        scan_adv(s);
        s->st = s->top_array ? ST_AFTER_TOP : ST_OBJ_NEXT;
        return MT_OK;
    }
    if (c == ']')
        return scan_fail(s, MT_EPARSE, e, "a ',' before ']' after event %zu", s->index - 1);
    s->mark = s->pos;
    long line = s->line, col = s->col;
    bool skipped;
    TRY(scan_value(s, true, &skipped, e));
    s->st = ST_ARR_NEXT;
    it->kind = SCAN_EVENT;
    it->text = s->buf + s->mark;
    it->len = s->pos - s->mark;
    it->index = s->index++;
    it->line = line;
    it->col = col;
    *got = true;
    return MT_OK;
}

int scan_next(struct scan *s, struct scan_item *it, struct mt_err *e)
{
    memset(it, 0, sizeof *it);
    it->kind = SCAN_END;
    s->mark = s->pos; /* the previous item may go */
    for (;;) {
        int c = ST_DONE == s->st ? -1 : scan_ws(s, e);
        if (c == -2)
            return e ? e->code : MT_EIO;
        switch (s->st) {
        case ST_DONE: return MT_OK;
        case ST_START:
            if (c == -1)
                return scan_fail(s, MT_EPARSE, e,
                                 "empty file: expected a Chrome trace (a JSON object with "
                                 "\"traceEvents\", or an array of events)");
            if (c == '[') {
                scan_adv(s);
                s->top_array = true;
                s->st = ST_ARR_ELEM;
            } else if (c == '{') {
                scan_adv(s);
                s->st = ST_OBJ_KEY;
            } else {
                return scan_fail_char(s, c, "a JSON object or array at the top level", e);
            }
            s->after_comma = false;
            continue;
        case ST_OBJ_KEY: {
            bool got = false;
            TRY(scan_member(s, c, it, &got, e));
            if (got)
                return MT_OK;
            continue;
        }
        case ST_OBJ_NEXT:
            if (c == ',') {
                scan_adv(s);
                s->st = ST_OBJ_KEY;
                s->after_comma = true;
                continue;
            }
            if (c == '}') {
                scan_adv(s);
                s->st = ST_AFTER_TOP;
                continue;
            }
            if (c == -1)
                return scan_fail(s, MT_EPARSE, e,
                                 "the file ends before the top-level object is closed: the "
                                 "trace is truncated");
            return scan_fail_char(s, c, "',' or '}' after a top-level member", e);
        case ST_ARR_ELEM: {
            bool got = false;
            TRY(scan_element(s, c, it, &got, e));
            if (got || s->st == ST_DONE)
                return MT_OK;
            continue;
        }
        case ST_ARR_NEXT:
            if (c == ',') {
                scan_adv(s);
                s->st = ST_ARR_ELEM;
                s->after_comma = true;
                continue;
            }
            if (c == ']') {
                scan_adv(s);
                s->st = s->top_array ? ST_AFTER_TOP : ST_OBJ_NEXT;
                continue;
            }
            if (c == -1)
                return scan_array_eof(s, e);
            return scan_fail_char(s, c, "',' or ']' after an event", e);
        case ST_AFTER_TOP:
            if (c == -1) {
                s->st = ST_DONE;
                return MT_OK;
            }
            return scan_fail_char(s, c, "the end of the file after the top-level value", e);
        }
    }
}

void scan_where(const struct scan_item *it, size_t off, long *line, long *col)
{
    long l = it->line, c = it->col;
    for (size_t i = 0; i < off && i < it->len; i++) {
        if (it->text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}
