/* traces/trace.h: a trace in memory (docs/design.md "traces/"): what a run (or a simulation)
 * recorded, as events keyed like plan instructions (device, op, mb, part, stage, step) and
 * memory samples per device, whatever file format it came from. trace_load reads one file or
 * one file per rank: our Chrome traces (traces/chrome_read.c) and PyTorch profiler traces
 * (traces/kineto.c), plain or gzip, and puts the ranks' clocks on one time line. */
#ifndef MT_TRACES_TRACE_H
#define MT_TRACES_TRACE_H

#include <stdbool.h>
#include <stddef.h>

struct mt_err;
struct mapping;
struct trace;

/* Ops of events that are not plan instructions (besides enum op). */
#define TRACE_OP_COMPUTE (-1) /* device work without a mapping (a Kineto kernel) */
#define TRACE_OP_COMM (-2)    /* communication without a mapping (an NCCL kernel) */
#define TRACE_OP_ALIGN (-3)   /* the alignment event of a rank (dropped once clocks are aligned) */

#define TRACE_MAX_FILES 1024
#define TRACE_MAX_EVENTS (64u << 20) /* more events than this are refused (MT_ENOMEM) */

struct trace_event {
    double start_us, end_us;
    int op;      /* enum op, TRACE_OP_COMPUTE or TRACE_OP_COMM */
    int mb;      /* -1: none (AR, OS) or not known */
    int part;    /* -1: not known (matched by program order) */
    int stage;   /* -1: not known (found from the device's list) */
    int dev;     /* pipeline device */
    int replica; /* data-parallel replica (0 when dp is 1) */
    int rank;    /* process (clock) that recorded it */
    int step;    /* iteration, from 0 */
    int file;    /* index of the file it came from */
    int pid;     /* the event's pid (a string pid: its digits, or 1000000 + its order) */
    int index;   /* its position in its file's event array (from 0; INT_MAX past that), for
                  * messages that name it (traces/import.h finds its line and column) */
};

struct trace_mem {
    double t_us;
    double bytes; /* bytes held (M_theta units in a unit-cost simulation) */
    int dev, replica, rank, file, pid;
};

struct trace_info {
    char source[16]; /* "simulated", "measured" (our writers), "kineto", "chrome" */
    char scheme[16]; /* otherData.scheme when present */
    char model[48];
    char backend[16];
    char device_name[64]; /* Kineto deviceProperties[0].name */
    bool unit;            /* a unit-cost simulation: 1 t written as 1000 us, memory in M_theta */
    double step_time_us;  /* otherData.step_time_us (simulated traces), else 0 */
    int files;
    int devices; /* highest device + 1 */
    int replicas;
    int steps;             /* highest step + 1 */
    size_t events_read;    /* JSON events in the files */
    size_t events_ignored; /* not kept: metadata, host-side ops, flows, ... */
    int align;             /* enum mapping_align actually applied */
    double clock_shift_us; /* the largest shift of a rank's clock made from its messages (our
                            * traces whose ranks' clocks the messages show apart); 0: none */
};

/* A MoE token all-to-all of our executor (Chrome events of category "ep_a2a", exec/capture.h):
 * its span and the bytes the rank sent to other ranks. Every replica's is kept. */
struct trace_a2a {
    double start_us, end_us;
    double bytes;
    int dev, replica, step;
};

struct trace_opts {
    const struct mapping *map; /* NULL: no rules; devices and alignment by default */
    int replica;               /* keep this data-parallel replica (default 0); -1: all */
};

struct trace *trace_new(void);
void trace_free(struct trace *t);

/* Reads n files (one per rank, or one holding every rank) into *out. Errors name the file
 * and the line:col of the offending event: MT_EPARSE malformed or truncated, MT_EIO read and
 * gzip errors, MT_EINVAL events that make no sense (negative duration, unknown op), MT_ENOMEM
 * over the limits above. */
int trace_load(const char *const *paths, int n, const struct trace_opts *o, struct trace **out,
               struct mt_err *e);
/* One trace from memory (plain JSON); name is used in messages (tests, fuzzing). */
int trace_load_mem(const char *data, size_t len, const char *name, const struct trace_opts *o,
                   struct trace **out, struct mt_err *e);

/* Borrowed views, valid until the trace is freed. */
const struct trace_event *trace_events(const struct trace *t, size_t *n);
const struct trace_mem *trace_mems(const struct trace *t, size_t *n);
const struct trace_info *trace_info(const struct trace *t);
const struct trace_a2a *trace_a2as(const struct trace *t, size_t *n);
/* The config a trace of ours carries (otherData.config, JSON text), or NULL. */
const char *trace_config_text(const struct trace *t);

/* ---- for the readers (traces/chrome_read.c, traces/kineto.c) ---------------------------- */
int trace_add_event(struct trace *t, const struct trace_event *ev, struct mt_err *e);
void trace_add_mem(struct trace *t, const struct trace_mem *m);
void trace_add_a2a(struct trace *t, const struct trace_a2a *a);
struct trace_info *trace_info_edit(struct trace *t);
/* Mutable views for the readers' fix-ups after a file (ranks known only at its end). */
struct trace_event *trace_events_edit(struct trace *t, size_t *n);
struct trace_mem *trace_mems_edit(struct trace *t, size_t *n);
/* Keeps a copy of a file's otherData.config (the first one read). */
void trace_set_config_text(struct trace *t, const char *text);
/* Keeps the first n events (n <= their count). */
void trace_events_truncate(struct trace *t, size_t n);

#endif
