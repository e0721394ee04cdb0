/* util/str.h: small string helpers: sizes with units ("40G"), number lists, formatting. */
#ifndef MT_UTIL_STR_H
#define MT_UTIL_STR_H

#include <stddef.h>

struct mt_err;

/* "40G", "40GiB", "512M", "1.5T", "123456" (bytes). Binary units (G = 2^30). */
int str_parse_bytes(const char *s, double *out_bytes, struct mt_err *e);
/* Strict integer / double parse of the whole string. */
int str_parse_int(const char *s, long lo, long hi, long *out, struct mt_err *e);
int str_parse_double(const char *s, double *out, struct mt_err *e);
/* Formats bytes as "38.2 GiB" into buf. Returns buf. */
char *str_format_bytes(double bytes, char *buf, size_t n);
/* v with sig significant digits as printf's %.<sig>g writes it, but never in scientific
 * notation (issue 41: "1.1614e+05 ms" on a screen): a number of sig digits or more before the
 * point is written whole ("116140"), a small one with the zeros it needs ("0.00001234").
 * Returns buf. */
char *str_format_number(double v, int sig, char *buf, size_t n);
/* The index of s among names[0..n), compared without case (the spellings of an enum: FP8
 * recipes, CP modes, launchers); -1 when it is none of them. */
int str_index_of(const char *s, const char *const *names, int n);
/* The time a long run has left, from the rate so far: "about 12 s left", "about 3 min left",
 * "about 1.5 h left"; "" (nothing to say yet) before the first second or the first piece of
 * work, and once all is done. Returns buf. */
char *str_format_time_left(double elapsed_s, long done, long total, char *buf, size_t n);
/* An error at a position of a text file: MT_EPARSE "name:line:col: what", the position being
 * the byte offset off in text[0..len). */
int str_text_error(struct mt_err *e, const char *name, const char *text, size_t len, size_t off,
                   const char *what);
/* The offset of the first byte of text[0..n) that does not start well-formed UTF-8 (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF, no cut sequence), or n. */
size_t str_utf8_check(const char *text, size_t n);
/* Reads a whole file (limit max_bytes). Caller frees *out. */
int str_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len,
                  struct mt_err *e);
/* Writes atomically: path.tmp.PID then rename(2), so a failure never leaves half a file; a
 * path that is there and is not a plain file (a link, /dev/null, a pipe) is written through. */
int str_write_file_atomic(const char *path, const char *data, size_t len, struct mt_err *e);

#endif
