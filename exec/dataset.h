/* exec/dataset.h: the executor's training data: byte-level tokens (vocabulary 256) of a
 * text file shipped in the repo (data/corpus.txt), cut into deterministic batches (issue 7). */
#ifndef MT_EXEC_DATASET_H
#define MT_EXEC_DATASET_H

#include <stddef.h>

struct mt_err;
struct dataset;

#define DATASET_VOCAB 256
#define DATASET_MAX_BYTES ((size_t)64 << 20)

/* Reads the whole file (at most DATASET_MAX_BYTES). A missing, unreadable or empty file is
 * an error whose message names it. */
int dataset_open(const char *path, struct dataset **out, struct mt_err *e);
void dataset_close(struct dataset *ds);
size_t dataset_ntokens(const struct dataset *ds);

/* Batch k (k >= 0, a global index: every rank that asks for batch k gets the same tokens):
 * B rows of T+1 consecutive tokens; row b starts at ((k * B + b) * T) mod (n - T), so
 * successive batches walk the file in windows of T and wrap around. inputs[b*T + t] is token
 * t of row b and targets[b*T + t] token t+1 (both B*T ints in [0, 256)). Either output may be
 * NULL. A file of fewer than T+1 tokens is an error that names it. */
int dataset_batch(const struct dataset *ds, long k, int B, int T, int *inputs, int *targets,
                  struct mt_err *e);

#endif
