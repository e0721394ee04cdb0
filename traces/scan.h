/* traces/scan.h: a streaming reader of trace files (docs/design.md "traces/"): Chrome Trace Event
 * JSON in the object form ({"traceEvents": [...], ...}) or the bare-array form ([...], whose
 * closing bracket may be missing, as the format allows), plain or gzip (told by content).
 * It hands out the elements of the event array one at a time as text slices, and the other
 * top-level members, so that a trace of any size is read in memory bounded by its largest
 * event: the caller parses each slice and lets it go. */
#ifndef MT_TRACES_SCAN_H
#define MT_TRACES_SCAN_H

#include <stdbool.h>
#include <stddef.h>

struct mt_err;
struct scan;

/* An event larger than this is an error; a larger top-level member is skipped unread. */
#define SCAN_MAX_ITEM (16u << 20)
/* Deeper nesting inside one value is an error (cJSON refuses deeper input anyway). */
#define SCAN_MAX_DEPTH 1000

enum scan_kind {
    SCAN_END,    /* the document ended */
    SCAN_EVENT,  /* an element of the event array */
    SCAN_MEMBER, /* a top-level member of the object form other than "traceEvents" */
};

struct scan_item {
    enum scan_kind kind;
    const char *key;  /* SCAN_MEMBER: its key (truncated to 63 bytes) */
    const char *text; /* the value's JSON text, not NUL-terminated; valid until the next call */
    size_t len;
    size_t index;   /* SCAN_EVENT: position in the event array, from 0 */
    long line, col; /* where the value starts, 1-based */
};

/* Opens a file. MT_EIO when it cannot be opened. */
int scan_open(const char *path, struct scan **out, struct mt_err *e);
/* Reads plain (not gzip) JSON from memory; data is borrowed until scan_close. name is used
 * in messages. */
int scan_open_mem(const char *data, size_t len, const char *name, struct scan **out,
                  struct mt_err *e);
/* The next item. Errors name the file, line and column: MT_EPARSE for malformed or truncated
 * JSON, MT_EIO for read and gzip errors, MT_ENOMEM for an event over SCAN_MAX_ITEM. */
int scan_next(struct scan *s, struct scan_item *it, struct mt_err *e);
/* Line and column of byte off of the last item's text (for a parser's error offset). */
void scan_where(const struct scan_item *it, size_t off, long *line, long *col);
/* The name given to scan_open / scan_open_mem. */
const char *scan_name(const struct scan *s);
void scan_close(struct scan *s);

#endif
