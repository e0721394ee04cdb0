/* model/launch_internal.h: what the launch readers and the writer share (model/launch.c):
 * the notes that become a reader's one warning line, errors at a file's line and column, the
 * preset a shape is, and each framework's names (torchtitan's schedule classes). Only
 * model/launch*.c include it. */
#ifndef MT_MODEL_LAUNCH_INTERNAL_H
#define MT_MODEL_LAUNCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "model/config.h"
#include "model/launch.h"

struct mt_err;

/* What a reader collects on its way: the pieces of the warning line and the assumptions. */
struct launch_notes {
    char unmodelled[LAUNCH_NOTE_LEN]; /* "--fp4-recipe nvfp4 (FP4), ..." */
    char unknown[LAUNCH_NOTE_LEN];    /* flags or keys not recognised */
    char assumed[LAUNCH_NOTE_LEN];
};

/* Appends one item to a ", "-separated list buf of n bytes (cut with "..." when full; an item
 * already there is not repeated). */
void launch_note(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The notes as info's warning line and assumptions. */
void launch_notes_finish(const struct launch_notes *nt, struct launch_info *info);
/* MT_EINVAL "name:line:col: what" (line 0: "name: what"). */
int launch_fail(struct mt_err *e, const char *name, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The model's name: a preset's when the shape is one (arch, h, L, a, FFN, K/V heads, the
 * vocabulary padded to vocab_multiple (Megatron's; 1: as it is) and the family's parts; any
 * sequence length), else "custom". */
void launch_name_model(struct model_spec *m, int vocab_multiple);
/* A launch that trains in FP8 on the default device (the A100-40G, which has none): the
 * device becomes the H100-80G (B200 for mxfp8), said in nt->assumed (a --device flag after
 * the file wins). No change when the device has what the recipe needs. */
void launch_fp8_device(struct config *c, struct launch_notes *nt);
/* c->recompute from a launch's recompute settings where one policy is them (model/launch.c);
 * what is not, noted. per_rank: the layers of a pipeline rank. */
void launch_apply_recompute(struct config *c, const struct launch_ac *ac, int per_rank,
                            struct launch_notes *nt);
/* The llama3 flavor of torchtitan a shape is ("8B", "70B", "405B", "debugmodel"), or NULL. */
const char *launch_torchtitan_flavor_of(const struct model_spec *m);
/* torchtitan's model name and flavor of a shape: llama3's flavors, deepseek_v3's 16B and 671B,
 * qwen3's 30B-A3B and 235B-A22B (the MoE presets of the same shapes, issue 38); NULL. */
const char *launch_torchtitan_model_of(const struct model_spec *m, const char **flavor);
/* The shape of torchtitan's llama3 flavor (any sequence length: the TOML's seq_len sets it);
 * false for a flavor it does not know. */
bool launch_torchtitan_flavor(const char *flavor, struct model_spec *out);
/* torchtitan's (torch.distributed.pipelining's) schedule class name of a scheme, or NULL. */
const char *launch_torchtitan_schedule_name(enum scheme_id s);
/* The scheme a torch schedule class name is (case-insensitive, as torch's
 * get_schedule_class); false when none of ours is. */
bool launch_torchtitan_schedule_parse(const char *s, enum scheme_id *out);
/* Megatron-LM's padded vocabulary: V rounded up to make_vocab_size_divisible_by x tp
 * (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding). */
int launch_megatron_padded_vocab(int vocab, int divisible_by, int tp);
/* Megatron-LM's FFN width when --ffn-hidden-size is not given: 4h, or with --swiglu
 * int((4h x 2/3) / 64) x 64 (megatron/training/arguments.py). */
int launch_megatron_ffn_default(int h, bool swiglu);
/* ---- model/launch_moe.c: Megatron-LM's --moe-layer-freq (issue 38) ---------------------- */
/* s (an integer, or a list expression such as "([0]*3+[1]*58)") as model/moe.h's pattern of
 * `layers` blocks: *first_k dense, then every *freq-th MoE. -1 with why when s is not one of
 * that pattern, or not what Megatron takes. */
int launch_moe_layer_freq(const char *s, int layers, int *first_k, int *freq, char *why,
                          size_t n);
/* The --moe-layer-freq value of a pattern ("1"; "([0]*3+[1]*58)"; an explicit list). */
void launch_moe_layer_freq_text(int first_k, int freq, int layers, char *buf, size_t n);

/* ---- model/launch_shell_*.c: the shell subset a Megatron-LM launch script is read with ---- */
/* One word of the launch command after expansion: its text, where it was written (for an
 * array's element, in the array), and why its value is not known ("" when it is). */
struct launch_field {
    char *text;
    int line, col;
    char why[112];
};

struct launch_shell {
    struct launch_field *f; /* the launch command, expanded: the launcher (torchrun, srun,
                             * python) and the script's flags */
    int n;
    int line;               /* where the launch starts */
    /* #SBATCH's --nodes, --ntasks-per-node, --gpus-per-node (0: not given) and their lines */
    int sbatch_nodes, sbatch_tasks_per_node, sbatch_gpus_per_node;
    int sbatch_line;
};

/* Runs the script's assignments (scalars, arrays, +=, export, ${VAR:-default}, $((...)),
 * if/elif/else on [[ ]] / [ ] tests it can decide) and finds the one command holding
 * --num-layers. MT_EINVAL "name:line:col: ..." for what it cannot follow: an assignment or
 * the launch under a condition it cannot decide or in a loop, two launches, none. */
int launch_shell_run(const char *text, size_t n, const char *name, struct launch_shell *out,
                     struct mt_err *e);
void launch_shell_fini(struct launch_shell *s);

int launch_read_megatron(const char *text, size_t n, const char *name,
                         const struct launch_read_opts *o, struct config *out,
                         struct launch_info *info, struct mt_err *e);
int launch_read_torchtitan(const char *text, size_t n, const char *name,
                           const struct launch_read_opts *o, struct config *out,
                           struct launch_info *info, struct mt_err *e);

#endif
