/* tests/fuzz/replay.c: main() for a fuzz target outside libFuzzer (sqlite's fuzzcheck): runs
 * LLVMFuzzerTestOneInput over every file of the target's corpus, so that every seed and every
 * input that once crashed is replayed by the normal tests, under the sanitizers when they are
 * on. Each input is copied into a buffer of exactly its size (no NUL after it), so that a
 * parser reading past the end is caught by ASan.
 *
 *   replay_<target> [FILE|DIR]...   default: $top_srcdir/tests/fuzz/corpus/<target>/
 *
 * The target is the program name after "replay_"; <target>_parse replays <target>'s corpus. Files are replayed in name order; an empty
 * or missing corpus is a failure, so that a wrong path cannot pass silently. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

#define REPLAY_MAX_BYTES (64u << 20)

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL || len > REPLAY_MAX_BYTES) {
            fprintf(stderr, "replay: %s: too large or out of memory\n", path);
            free(buf);
            fclose(f);
            return -1;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
        if (len == cap) {
            unsigned char *nb = realloc(buf, cap * 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    /* Exactly len bytes: an over-read is a heap-buffer-overflow, not a silent NUL. */
    unsigned char *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int replay_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file in dir (not recursive). Returns the count, or -1. */
static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (nn == NULL)
                abort();
            names = nn;
        }
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        names[n] = malloc(len);
        if (names[n] == NULL)
            abort();
        snprintf(names[n], len, "%s/%s", dir, de->d_name);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, replay_cmp);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0)
                count = -1;
            else if (count >= 0)
                count++;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return replay_dir(path);
    return replay_file(path) == 0 ? 1 : -1;
}

int main(int argc, char **argv)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    const char *target = strncmp(prog, "replay_", 7) == 0 ? prog + 7 : prog;
    /* a parse-only target (config_parse) replays its reader's corpus (config) */
    char corpus[256];
    snprintf(corpus, sizeof corpus, "%s", target);
    size_t tl = strlen(corpus);
    if (tl > 6 && strcmp(corpus + tl - 6, "_parse") == 0)
        corpus[tl - 6] = '\0';
    int total = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            int n = replay_path(argv[i]);
            if (n < 0)
                return 1;
            total += n;
        }
    } else {
        const char *src = getenv("top_srcdir");
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src && src[0] ? src : ".", corpus);
        total = replay_dir(dir);
        if (total < 0)
            return 1;
        if (total == 0) {
            fprintf(stderr, "replay: %s: empty corpus\n", dir);
            return 1;
        }
    }
    printf("replay_%s: %d inputs replayed, no crash\n", target, total);
    return 0;
}
