/* exec/dataset.c: a text file as byte-level tokens. Token i is byte i of the file
 * (0..255), so no tokenizer or vocabulary file is needed and every byte sequence is valid
 * input. Batches are fixed windows of the file, a pure function of (k, B, T), so ranks
 * that read the same batch index agree without talking to each other. */
#include <config.h>
#include "exec/dataset.h"

#include <stdlib.h>

#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

struct dataset {
    char *path;
    unsigned char *bytes;
    size_t n;
};

int dataset_open(const char *path, struct dataset **out, struct mt_err *e)
{
    *out = NULL;
    char *buf;
    size_t len;
    if (str_read_file(path, DATASET_MAX_BYTES, &buf, &len, e) != MT_OK)
        return err_wrap(e, "dataset");
    if (len == 0) {
        free(buf);
        return err_set(e, MT_EINVAL, "dataset: %s: empty file, no tokens", path);
    }
    struct dataset *ds = xmalloc(sizeof *ds);
    ds->path = xstrdup(path);
    ds->bytes = (unsigned char *)buf;
    ds->n = len;
    *out = ds;
    return MT_OK;
}

void dataset_close(struct dataset *ds)
{
    if (ds == NULL)
        return;
    free(ds->bytes);
    free(ds->path);
    free(ds);
}

size_t dataset_ntokens(const struct dataset *ds)
{
    return ds->n;
}

int dataset_batch(const struct dataset *ds, long k, int B, int T, int *inputs, int *targets,
                  struct mt_err *e)
{
    if (k < 0 || B < 1 || T < 1)
        return err_set(e, MT_EINVAL, "dataset: %s: bad batch request (k=%ld, B=%d, T=%d)", ds->path,
                       k, B, T);
    if (ds->n < (size_t)T + 1)
        return err_set(e, MT_EINVAL,
                       "dataset: %s: %zu tokens, shorter than one sample of T+1 = %d tokens",
                       ds->path, ds->n, T + 1);
    /* row starts in [0, n - T - 1], so row + T is the last token read */
    unsigned long long span = ds->n - (size_t)T;
    for (int b = 0; b < B; b++) {
        unsigned long long row = (unsigned long long)k * (unsigned long long)B + (unsigned)b;
        size_t pos = (size_t)((row % span) * ((unsigned long long)T % span) % span);
        const unsigned char *p = ds->bytes + pos;
        for (int t = 0; t < T; t++) {
            if (inputs != NULL)
                inputs[(size_t)b * T + t] = p[t];
            if (targets != NULL)
                targets[(size_t)b * T + t] = p[t + 1];
        }
    }
    return MT_OK;
}
