/* model/seqlen.h: sequence lengths that vary from batch to batch (docs/design.md "Input-aware
 * checkpointing", Mimose arXiv:2209.02478): a config's lengths as a weighted sample, files of
 * per-batch lengths, and the length buckets plans are cached by. The spec itself
 * (struct seqlen_spec) is a plain part of struct config (model/config.h). */
#ifndef MT_MODEL_SEQLEN_H
#define MT_MODEL_SEQLEN_H

#include <stddef.h>

struct config;
struct json_doc;
struct json_value;
struct mt_err;

#define SEQLEN_FILE_MAX_BYTES (64 << 20) /* larger lengths files are refused */
#define SEQLEN_MAX_BATCHES (1 << 22)     /* lengths in one file */

/* Lengths with weights: one entry per batch of a file (weight 1), per value of a
 * distribution, or the one fixed length. */
struct seqlen_sample {
    int n;
    int *len;       /* [n] tokens, >= 1 */
    double *weight; /* [n] >= 0 */
    int min_len, max_len;
    double total_weight; /* > 0 */
};

/* The largest length the config allows: seqlen.max_positions when set, else
 * model.seq_length (the model's positions). */
int seqlen_limit(const struct config *c);
/* Parses a lengths file's text: positive integers separated by white space, '#' starts a
 * comment to the end of the line. limit > 0 refuses longer lengths. MT_EINVAL (exit 2) with
 * "name:line:col: ..." for text that is not a length, 0, a length over limit ("beyond the
 * model's largest position"), more than SEQLEN_MAX_BATCHES lengths, or no length at all. */
int seqlen_parse(const char *text, size_t len, const char *name, int limit,
                 struct seqlen_sample *out, struct mt_err *e);
/* The same from a file: MT_EIO when it cannot be read or is not a regular file. */
int seqlen_read_file(const char *path, int limit, struct seqlen_sample *out, struct mt_err *e);
/* The config's lengths: its one model.seq_length, its distribution, or its file (read
 * again, and checked against seqlen_limit). */
int seqlen_sample_load(const struct config *c, struct seqlen_sample *out, struct mt_err *e);
void seqlen_sample_fini(struct seqlen_sample *s);
/* The mean length, weighted (the expected tokens of a batch). */
double seqlen_sample_mean(const struct seqlen_sample *s);
/* Makes c's lengths the file's (what `--lengths FILE` does): checks them against
 * seqlen_limit(c), keeps that limit in seqlen.max_positions and sets model.seq_length to the
 * longest. *sample (may be NULL) receives the lengths read. */
int seqlen_config_use_file(struct config *c, const char *path, struct seqlen_sample *sample,
                           struct mt_err *e);
/* Checks c->seqlen (called by config_validate): counts, values in [1, limit], weights
 * finite, >= 0 and not all 0, model.seq_length within the limit. Messages start with
 * "model.seq_length" or "model.max_position_embeddings". */
int seqlen_validate(const struct config *c, struct mt_err *e);

/* model/seqlen_json.c: after the rest of the config's model object (a preset or a number may
 * set model.seq_length first), reads its max_position_embeddings and a seq_length that is a
 * distribution or a lengths file (relative to the config file's folder). model.seq_length
 * becomes the longest length given. A Hugging Face model has neither form. */
int seqlen_from_json(struct json_doc *d, const struct json_value *model, struct config *c);

/* Buckets of width w >= 1 tokens: bucket b >= 1 holds lengths ((b-1)w, bw]; a bucket's plan
 * is made for its longest length, bw, or max_len when that is shorter (0 = no bound). */
int seqlen_bucket(int s, int width);
int seqlen_bucket_len(int bucket, int width, int max_len);

#endif
