/* traces/formats.h: the files a command may be given, one record per format, told apart by
 * their content (the first 64 KiB, without parsing): our traces, Chrome's, the PyTorch
 * profiler's (Kineto), torch.distributed.pipelining's (`PP:` ranges), PiPPy's array form,
 * gzip-compressed traces, plan files, torch's schedule CSV and configs. Every command that
 * takes "a plan, a config or a trace" asks here (docs/traces.md says what each reader takes
 * from a format). */
#ifndef MT_TRACES_FORMATS_H
#define MT_TRACES_FORMATS_H

#include <stddef.h>

struct mt_err;
struct trace;
struct trace_opts;

/* What a file holds, for the command: which reader takes it. */
enum file_kind {
    FILE_KIND_CONFIG, /* model/config.h config_load_file (also what cannot be read: it says why) */
    FILE_KIND_PLAN,   /* sim/plan/plan.h plan_load, or plan_load_torch_csv_file for torch's CSV */
    FILE_KIND_TRACE,  /* traces/trace.h trace_load (every trace format, one reader) */
};

enum file_format_id {
    FORMAT_GZIP,       /* a gzip-compressed trace (the reader inflates it) */
    FORMAT_LAUNCH_TORCHTITAN, /* a torchtitan job TOML (model/launch.h): a config */
    FORMAT_LAUNCH_MEGATRON,   /* a Megatron-LM command line or script (model/launch.h): a config */
    FORMAT_PIPPY,      /* PiPPy's array form: F_s,m / B_s,m spans, ranks as pids */
    FORMAT_CHROME_ARRAY, /* Chrome's bare-array form */
    FORMAT_PLAN,       /* "format": "mario-plan" */
    FORMAT_OURS,       /* ours (simulate / run --trace-out): events keyed args {op, mb, ...} */
    FORMAT_TORCH_PP,   /* torch.distributed.pipelining's PP: ranges in a profiler trace */
    FORMAT_KINETO,     /* the PyTorch profiler's (schemaVersion, distributedInfo, ...) */
    FORMAT_CHROME,     /* any other Chrome trace object ("traceEvents") */
    FORMAT_TORCH_CSV,  /* torch's schedule CSV: "0F0,1F0,..." rows (or a .csv name) */
    FORMAT_CONFIG,     /* anything else: a config (or a file that cannot be read) */
    FORMAT__COUNT
};

struct file_format {
    enum file_format_id id;
    const char *name; /* "PiPPy trace (array form)": for messages */
    enum file_kind kind;
};

/* The format of the file at path (records in the order above: the first whose rule the
 * content meets). A file that cannot be read is FORMAT_CONFIG: its reader says why. */
const struct file_format *format_of(const char *path);
/* The same for the first n bytes of a file named path (its name only counts for torch's
 * CSV, a .csv file whatever it holds). */
const struct file_format *format_of_head(const char *path, const char *head, size_t n);
/* The record of id. */
const struct file_format *format_get(enum file_format_id id);

/* trace_load for files a user named as traces: a file of another kind (a plan, a config) is
 * refused naming what it is, before the trace reader would stumble on it. */
int format_load_trace(const char *const *paths, int n, const struct trace_opts *o,
                      struct trace **out, struct mt_err *e);

#endif
