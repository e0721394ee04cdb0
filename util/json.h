/* util/json.h: the one strict JSON reader behind every input file (configs, plans,
 * calibrations, trace mappings, chart specs). It parses with cJSON and keeps the text beside
 * the tree, so that every error, syntax or semantic, reads "FILE:LINE:COL: json.path: what".
 * It lives in util/ (and so includes cJSON, the one util file that does) because readers in
 * model/, sim/, render/ and traces/ all need it; the values it hands out are cJSON items, so
 * its callers are the *_json.c files that already speak cJSON.
 *
 * Strictness: unknown and duplicate keys are errors (json_fields), integers must be integral
 * and in range, numbers finite, strings are never taken where numbers are due. */
#ifndef MT_UTIL_JSON_H
#define MT_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct mt_err;
struct json_doc; /* the text, its tree and the keys noted while reading; opaque */

#define JSON_NOPOS SIZE_MAX
#define JSON_PATH_LEN 96

/* One value being read: its JSON path ("model.num_layers", "devices[0][3].mb") and where its
 * key (JSON_NOPOS for array elements and the top level) and the value start in the text.
 * An absent field of json_fields has item == NULL. */
struct json_value {
    const struct cJSON *item;
    char path[JSON_PATH_LEN];
    size_t key_off;
    size_t val_off;
};

/* Parses text[0..len) (a leading UTF-8 BOM is skipped; text after the top-level value is an
 * error). Syntax errors are MT_EPARSE "name:line:col: [path: ]syntax error near '...'", path
 * being the field whose value is broken. value_code is the code of value errors (json_fail):
 * MT_EINVAL for files people write, MT_EPARSE for files the tool writes (plans). Errors of
 * the reads that follow go to the same e. */
int json_doc_parse(const char *text, size_t len, const char *name, int value_code,
                   struct json_doc **out, struct mt_err *e);
void json_doc_free(struct json_doc *d);
const char *json_doc_name(const struct json_doc *d);
/* The top-level value (path "", no key). */
void json_doc_root(const struct json_doc *d, struct json_value *out);

/* ---- errors: "name:line:col: path: what" (no line:col at JSON_NOPOS; no path for "") ---- */
/* At v: its key when it has one, else its value. Code: the document's value_code. */
int json_fail(struct json_doc *d, const struct json_value *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* At a byte offset (JSON_NOPOS: none), with a code and path of the caller's. */
int json_fail_at(struct json_doc *d, size_t off, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A helper's error (a preset name, a scheme name) at v, keeping its code. */
int json_fail_from(struct json_doc *d, const struct json_value *v, const struct mt_err *inner);
/* "expected EXPECTED, got string \"8\"" at v. */
int json_type_fail(struct json_doc *d, const struct json_value *v, const char *expected);
/* Copies s into buf for a message: at most n-1 bytes, control characters as '?'. */
const char *json_clip(const char *s, char *buf, size_t n);

/* ---- objects and arrays ----------------------------------------------------------------- */
/* The members of object obj in text order, paths under obj's; caller free()s. Keys are not
 * checked (a Hugging Face config has many we ignore). */
struct json_value *json_members(struct json_doc *d, const struct json_value *obj, size_t *n);
/* obj must be an object whose keys are all in keys[0..nkeys), none twice ("unknown key (did
 * you mean 'x'?)", "duplicate key (first at L:C)"); out[i] is keys[i]'s member. An absent
 * one has item NULL, its path, and obj's place, so "missing" errors point at obj. With
 * json_doc_note_keys on, each key found is noted for json_lookup. */
int json_fields(struct json_doc *d, const struct json_value *obj, const char *const *keys,
                size_t nkeys, struct json_value *out);
/* The elements of array arr (paths "arr[i]"); caller free()s. "expected an array" else. */
int json_elements(struct json_doc *d, const struct json_value *arr, struct json_value **out,
                  size_t *n);

/* ---- typed values: each fails at v with its path when the value does not fit ------------ */
int json_int(struct json_doc *d, const struct json_value *v, long lo, long hi, int *out);
int json_double(struct json_doc *d, const struct json_value *v, double *out); /* finite */
int json_bool(struct json_doc *d, const struct json_value *v, bool *out);
int json_string(struct json_doc *d, const struct json_value *v, const char **out);
/* Printable, 1 to n-1 bytes, copied into dst. */
int json_label(struct json_doc *d, const struct json_value *v, char *dst, size_t n);
/* A number of bytes or a size string ("40G", "80GiB"); finite, > 0. */
int json_bytes(struct json_doc *d, const struct json_value *v, double *out);
/* One of names[0..n) (case-insensitive): its index in *out. what lists them for the message. */
int json_enum(struct json_doc *d, const struct json_value *v, const char *const *names, int n,
              const char *what, int *out);
/* "string", "number", "boolean", "null", "array", "object". */
const char *json_type_name(const struct cJSON *j);
/* A cJSON number, or a raw item holding one (config_to_cjson writes exact numbers raw). */
bool json_number(const struct cJSON *j, double *out);

/* ---- positions of the keys read, for messages that name only a path --------------------- */
/* Whether json_fields notes the keys it finds (off by default: a plan has millions). */
void json_doc_note_keys(struct json_doc *d, bool on);
/* Notes that path's key is at off; alias: the file's own spelling when it differs. */
void json_note(struct json_doc *d, const char *path, size_t off, const char *alias);
bool json_noted(const struct json_doc *d, const char *path);
/* The key offset of path, else of its nearest noted ancestor, else dflt; *alias is the
 * file's own name for path when it has one, else NULL. */
size_t json_lookup(const struct json_doc *d, const char *path, size_t dflt, const char **alias);

/* Adds key: v to o so that it reads back as the same double: integers through cJSON, other
 * numbers as raw text, the shortest of 15..17 significant digits that reads back exactly, with
 * '.' whatever the locale (cJSON's own printing keeps 15 digits and can lose the last bits).
 * Non-finite values become null. */
void json_add_number_exact(struct cJSON *o, const char *key, double v);

#endif
