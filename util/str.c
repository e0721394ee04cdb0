/* util/str.c: parsing sizes and numbers from flags and configs, reading and atomically
 * writing files. Every parse is strict: trailing garbage is an error, not ignored. */
#include <config.h>
#include "util/str.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#include "util/err.h"
#include "util/xalloc.h"

int str_parse_bytes(const char *s, double *out_bytes, struct mt_err *e)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !isfinite(v) || v < 0)
        return err_set(e, MT_EINVAL, "'%s' is not a size (expected e.g. 40G, 512M, 80GiB)", s);
    while (*end == ' ')
        end++;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1024.0; end++; break;
    case 'M': mult = 1024.0 * 1024; end++; break;
    case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mult > 1 && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0))
        end += strlen(end);
    else if (mult == 1 && strcasecmp(end, "B") == 0)
        end++;
    if (*end != '\0')
        return err_set(e, MT_EINVAL, "'%s' is not a size (expected e.g. 40G, 512M, 80GiB)", s);
    *out_bytes = v * mult;
    return MT_OK;
}

int str_parse_int(const char *s, long lo, long hi, long *out, struct mt_err *e)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0)
        return err_set(e, MT_EINVAL, "'%s' is not an integer", s);
    if (v < lo || v > hi)
        return err_set(e, MT_EINVAL, "%ld is out of range [%ld, %ld]", v, lo, hi);
    *out = v;
    return MT_OK;
}

int str_parse_double(const char *s, double *out, struct mt_err *e)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
        return err_set(e, MT_EINVAL, "'%s' is not a number", s);
    *out = v;
    return MT_OK;
}

char *str_format_bytes(double bytes, char *buf, size_t n)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = bytes;
    while (fabs(v) >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", v);
    else
        snprintf(buf, n, "%.2f %s", v, unit[u]);
    return buf;
}

int str_text_error(struct mt_err *e, const char *name, const char *text, size_t len, size_t off,
                   const char *what)
{
    long line = 1, col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return err_set(e, MT_EPARSE, "%s:%ld:%ld: %s", name, line, col, what);
}

size_t str_utf8_check(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            if (c == 0xE0)
                lo = 0xA0; /* no overlong forms */
            if (c == 0xED)
                hi = 0x9F; /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F; /* nothing above U+10FFFF */
        } else {
            return i;
        }
        if (i + k >= n) /* cut short */
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t j = 2; j <= k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF)
                return i;
        i += k + 1;
    }
    return n;
}

int str_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len,
                  struct mt_err *e)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) /* an input that is not there is bad input (exit 2), as README says */
        return err_set(e, MT_EINVAL, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return err_set(e, MT_EINVAL, "%s: is a directory, not a file", path);
    }
    /* the first buffer no larger than the limit either, or a small limit would go unchecked */
    size_t cap = max_bytes < 4096 ? max_bytes : 4096, len = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        if (len == cap) {
            if (cap >= max_bytes) {
                free(buf);
                fclose(f);
                return err_set(e, MT_EINVAL, "%s: larger than the limit of %zu bytes", path,
                               max_bytes);
            }
            cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
            buf = xreallocarray(buf, cap + 1, 1);
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return err_set(e, MT_EIO, "%s: read error", path);
    }
    buf[len] = '\0';
    *out = buf;
    if (out_len)
        *out_len = len;
    return MT_OK;
}

/* Writes data to path as it is, through a link or into a device or pipe. */
static int str_write_in_place(const char *path, const char *data, size_t len, struct mt_err *e)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return err_set(e, MT_EIO, "%s: %s", path, strerror(errno));
    size_t put = fwrite(data, 1, len, f);
    int bad = put != len || fflush(f) != 0;
    bad |= fclose(f) != 0;
    if (bad)
        return err_set(e, MT_EIO, "%s: write failed: %s", path, strerror(errno));
    return MT_OK;
}

int str_write_file_atomic(const char *path, const char *data, size_t len, struct mt_err *e)
{
    /* a path that is there and is not a plain file (a link, /dev/null, /dev/stdout, a pipe)
     * is written through: renaming the temporary over it replaced /dev/null with a file */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return str_write_in_place(path, data, len, e);
    size_t n = strlen(path) + 32;
    char *tmp = xmalloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        int rc = err_set(e, MT_EIO, "%s: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    size_t put = fwrite(data, 1, len, f);
    int bad = put != len || fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int rc = err_set(e, MT_EIO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return MT_OK;
}

char *str_format_number(double v, int sig, char *buf, size_t n)
{
    if (sig < 1)
        sig = 1;
    if (!isfinite(v) || v == 0) {
        snprintf(buf, n, "%.*g", sig, v);
        return buf;
    }
    /* the exponent %g would use: that of v rounded to sig digits */
    char e[64];
    snprintf(e, sizeof e, "%.*e", sig - 1, v);
    int exp = atoi(strchr(e, 'e') + 1);
    if (exp >= -4 && exp < sig) { /* %g's own fixed range: exactly what it writes */
        snprintf(buf, n, "%.*g", sig, v);
        return buf;
    }
    int decimals = exp >= sig ? 0 : sig - 1 - exp;
    if (decimals > 30)
        decimals = 30;
    snprintf(buf, n, "%.*f", decimals, v);
    if (decimals > 0 && strchr(buf, '.') != NULL) { /* %g drops trailing zeros: so do we */
        char *end = buf + strlen(buf) - 1;
        while (end > buf && *end == '0')
            *end-- = '\0';
        if (*end == '.')
            *end = '\0';
    }
    return buf;
}

char *str_format_time_left(double elapsed_s, long done, long total, char *buf, size_t n)
{
    if (n > 0)
        buf[0] = '\0';
    if (!(elapsed_s >= 1) || done < 1 || total <= done)
        return buf;
    /* the pieces so far set the rate; candidates and schedules differ, hence "about" */
    double left = elapsed_s / (double)done * (double)(total - done);
    if (left < 90)
        snprintf(buf, n, "about %.0f s left", left < 1 ? 1 : left);
    else if (left < 90 * 60)
        snprintf(buf, n, "about %.0f min left", left / 60);
    else
        snprintf(buf, n, "about %.1f h left", left / 3600);
    return buf;
}

int str_index_of(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}
