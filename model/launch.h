/* model/launch.h: the launchers users already have, read as configs and written from plans
 * (issue 40): a Megatron-LM command line or the shell script around it (model/launch_megatron.c:
 * variables, bash arrays of args, torchrun and Slurm) and a torchtitan job TOML
 * (model/launch_torchtitan.c); the flags or the TOML of a config back out (model/launch_write.c).
 * docs/launchers.md lists what each reader takes, warns about, refuses and skips. */
#ifndef MT_MODEL_LAUNCH_H
#define MT_MODEL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "model/config.h"

struct mt_err;

enum launch_kind { LAUNCH_MEGATRON, LAUNCH_TORCHTITAN, LAUNCH__COUNT };

/* The activation recomputation a launch asks for. The config has no key for it: in mario-tui
 * checkpointing belongs to a plan (Mario's passes, the tuner's ckpt), so a reader reports it
 * (and warns) and a writer is told it by the plan. */
enum launch_recompute {
    LAUNCH_RECOMPUTE_NONE,
    LAUNCH_RECOMPUTE_SELECTIVE, /* Megatron's selective (core attention), torchtitan's selective */
    LAUNCH_RECOMPUTE_FULL,      /* every layer's input kept, the rest recomputed before its
                                 * backward (Megatron full/uniform, torchtitan full) */
};

/* How the recomputed layers are chosen (Megatron-LM --recompute-method with
 * --recompute-num-layers N; torchtitan's selective_ac_option). Megatron's arguments.py:
 * uniform divides a stage's layers into groups of N and keeps only each group's input, every
 * layer recomputed; block recomputes the first N layers of each (virtual) stage, from their
 * input, and keeps the rest whole. torchtitan's selective with an integer option N
 * checkpoints every N-th block whole (torchtitan/.../activation_checkpoint.py); "op" is its
 * per-op policy. */
enum launch_recompute_method {
    LAUNCH_RC_METHOD_NONE,   /* full without a method given (writers: uniform, one a stage) */
    LAUNCH_RC_UNIFORM,
    LAUNCH_RC_BLOCK,
    LAUNCH_RC_EVERY_NTH,     /* torchtitan selective, selective_ac_option = N */
    LAUNCH_RC_PER_OP,        /* torchtitan selective, selective_ac_option = "op" */
};

/* A launch's recompute settings in full, read and written back (model/launch_ac.c maps them
 * onto a plan's checkpoints). */
struct launch_ac {
    enum launch_recompute granularity;
    enum launch_recompute_method method;
    int num_layers;     /* Megatron's --recompute-num-layers, torchtitan's N; 0 = not given */
    char modules[160];  /* Megatron's --recompute-modules, space-separated; "" = not given
                         * (core_attn, Megatron's default) */
};

#define LAUNCH_NOTE_LEN 2048
#define LAUNCH_MAX_BYTES (4 << 20) /* larger launch files are refused */

struct launch_read_opts {
    int devices; /* GPUs to plan for (--devices); 0 = the file's launch */
};

/* What a reader found beside the config. */
struct launch_info {
    enum launch_kind kind;
    int launched_gpus;                /* the GPUs the file starts; 0 = it does not say */
    enum launch_recompute recompute;
    struct launch_ac ac;              /* the recompute settings in full (recompute is
                                       * ac.granularity) */
    char warning[2 * LAUNCH_NOTE_LEN + 64]; /* ONE line: every flag or key that matters and is not
                                       * modelled, and those not recognised; "" if none */
    char assumed[LAUNCH_NOTE_LEN];    /* what was assumed (a vocabulary, the GPU count); "" */
};

/* Whether text looks like a launch file, and which: a TOML with torchtitan's tables
 * ([parallelism], [training], [model], [job]) or a shell text naming a Megatron-LM script
 * (pretrain_*.py) or its model flags (--num-layers). JSON never is. */
bool launch_detect(const char *text, size_t n, enum launch_kind *kind);

/* Reads a launch file of the kind launch_detect finds into *out: config_default(), the
 * file's model, parallelism and batch, then config_validate(). Errors name the place and the
 * flag or key: MT_EINVAL "name:line:col: --num-layers: 'x' is not an integer"; what a plan
 * cannot represent (experts: issue 38) is refused
 * naming it. *out and *info are written only on success. */
int launch_read(const char *text, size_t n, const char *name, const struct launch_read_opts *o,
                struct config *out, struct launch_info *info, struct mt_err *e);
/* The same from a file ("-" is stdin). */
int launch_read_file(const char *path, const struct launch_read_opts *o, struct config *out,
                     struct launch_info *info, struct mt_err *e);

/* "megatron" | "torchtitan" (case-insensitive); MT_EINVAL naming both. */
int launch_kind_parse(const char *s, enum launch_kind *out, struct mt_err *e);
const char *launch_kind_name(enum launch_kind k);
/* "Megatron-LM" | "torchtitan": for messages. */
const char *launch_kind_title(enum launch_kind k);

/* ---- model/launch_write.c ---------------------------------------------------------------- */
struct launch_write_opts {
    enum launch_recompute recompute;
    const struct launch_ac *ac; /* the settings to write when recompute is not NONE (a
                                 * launch's own, read back); NULL: full is uniform with one
                                 * group a stage, selective the framework's default */
    const char *source;   /* where the plan came from, for the header comment; may be NULL */
    const char *csv_name; /* torchtitan: the schedule CSV written beside the TOML (its name as
                           * the TOML refers to it), when launch_needs_csv; else NULL */
};

/* Whether the framework can run config c as planned: MT_EUNSUPPORTED saying what is missing
 * and, in *nearest (when non-NULL), the nearest config it can run (the scheme it has, ...).
 * A torchtitan plan whose schedule only a CSV can give passes (launch_needs_csv). */
int launch_expressible(enum launch_kind k, const struct config *c, struct config *nearest,
                       struct mt_err *e);
/* torchtitan: the scheme has no schedule class of its own, so the TOML names a CSV. */
bool launch_needs_csv(enum launch_kind k, const struct config *c);
/* The launch text of config c (a script for Megatron-LM, a job TOML for torchtitan); caller
 * free()s *out. Fails as launch_expressible. Reading it back (launch_read) gives c's model,
 * degrees, scheme and batch. */
int launch_write(enum launch_kind k, const struct config *c, const struct launch_write_opts *o,
                 char **out, struct mt_err *e);

#endif
