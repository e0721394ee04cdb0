/* traces/mapping.h: how the events of a foreign trace (a PyTorch profiler / Kineto trace, or
 * any Chrome trace without our args) become plan instructions (docs/design.md: a trace records a
 * run with the same (device, op, mb, part, stage) keys). A mapping file holds rules, tried
 * in order, each a POSIX extended regular expression on the event name whose capture groups
 * may give the op, micro-batch, stage, part, device and step; plus how to number devices and
 * how to align the clocks of several ranks. The format is documented in docs/traces.md;
 * mapping_json.c reads it. */
#ifndef MT_TRACES_MAPPING_H
#define MT_TRACES_MAPPING_H

#include <stdbool.h>
#include <stddef.h>

struct mt_err;
struct mapping;

#define MAPPING_MAX_RULES 256
#define MAPPING_MAX_BYTES (1u << 20) /* larger mapping files are refused */

/* Where an event's device comes from when its rule does not say. */
enum mapping_device {
    MAPPING_DEVICE_AUTO, /* the file's distributedInfo.rank, else the file's position among
                          * several files, else the pid (numbers as they are, strings by
                          * their digits or first appearance) */
    MAPPING_DEVICE_RANK, /* distributedInfo.rank (an error when a file lacks it) */
    MAPPING_DEVICE_PID,  /* the event's pid */
    MAPPING_DEVICE_FILE, /* the position of the file on the command line */
};

/* How the clocks of several ranks are put on one time line. */
enum mapping_align {
    MAPPING_ALIGN_AUTO,  /* one clock (none) for our own traces and for a single file, but
                          * "causal" where our messages show the ranks' clocks apart;
                          * "causal" for several Kineto files */
    MAPPING_ALIGN_NONE,  /* the timestamps are on one clock already (one host) */
    MAPPING_ALIGN_FIRST, /* each rank's first kept event starts at the same instant */
    MAPPING_ALIGN_EVENT, /* each rank's first event whose name matches align_event starts (or
                          * ends) at the same instant: a barrier or a collective */
    MAPPING_ALIGN_CAUSAL, /* "first", then each rank at the middle of what its messages (or
                           * its stages' forwards and backwards) allow (traces/trace.c) */
};

struct mapping_opts {
    enum mapping_device device;
    enum mapping_align align;
    bool align_end; /* MAPPING_ALIGN_EVENT: align the events' ends (collectives end together) */
};

/* A rule field: a constant, or the capture group whose text holds it. */
struct mapping_field {
    int group; /* > 0: capture group (1-9); 0: the constant below */
    int value; /* -1: not given */
};

struct mapping_rule {
    const char *match; /* POSIX extended regular expression on the event name */
    const char *cat;   /* NULL: any; else the event's "cat" must be equal */
    int op_group;      /* > 0: the op name is in this capture group */
    int op;            /* enum op when op_group is 0 */
    struct mapping_field mb, part, stage, device, step;
};

/* What a rule says about one event; -1 where it says nothing. */
struct mapping_hit {
    int op, mb, part, stage, device, step;
};

struct mapping *mapping_new(void);
void mapping_free(struct mapping *m);
/* Compiles and appends a rule (strings are copied). MT_EINVAL names the bad pattern, group
 * or field. */
int mapping_add(struct mapping *m, const struct mapping_rule *r, struct mt_err *e);
/* Sets the alignment; pattern (copied, compiled) is needed for MAPPING_ALIGN_EVENT. */
int mapping_set_align(struct mapping *m, enum mapping_align a, const char *pattern, bool end,
                      struct mt_err *e);
void mapping_set_device(struct mapping *m, enum mapping_device d);
const struct mapping_opts *mapping_opts(const struct mapping *m);
int mapping_rules(const struct mapping *m);
/* The first rule whose category and pattern match name and whose captured numbers parse.
 * cat may be NULL. Returns false when none does. */
bool mapping_match(const struct mapping *m, const char *name, const char *cat,
                   struct mapping_hit *hit);
/* Whether name is the alignment event (MAPPING_ALIGN_EVENT). */
bool mapping_is_align_event(const struct mapping *m, const char *name);

/* ---- traces/mapping_json.c: the mapping file ---------------------------------------------
 * {"format": "mario-trace-map", "version": 1, "device": "auto|rank|pid|file",
 *  "align": "auto|none|first" | {"event": REGEX, "edge": "start|end"},
 *  "rules": [{"match": REGEX, "cat": CAT, "op": "FW" | "$1", "mb": 0 | "$2", "part": ...,
 *             "stage": ..., "device": ..., "step": ...}, ...]}
 * Errors read "file:line:col: ..." for syntax and "file: rules[2].op: ..." for values. */
int mapping_load(const char *path, struct mapping **out, struct mt_err *e);
int mapping_load_string(const char *text, size_t len, const char *name, struct mapping **out,
                        struct mt_err *e);

#endif
