/* util/json.c: the strict JSON reader (util/json.h).
 *
 * Positions. cJSON keeps no offsets, so the reader walks the text beside the tree: cJSON has
 * already checked the syntax and keeps the members of an object (and the elements of an
 * array) in text order, so a small scanner that skips values finds the byte offset of the
 * i-th member's key and value. Keys read are noted with their JSON path, so that a message
 * that names only a path (config_validate's) can be mapped back to "file:line:col: ". */
#include <config.h>
#include "util/json.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* A JSON path and the offset of its key in the text. alias: the key as the file spells it
 * when that differs (a Hugging Face "n_head" read as model.num_attention_heads), else "". */
struct json_pos {
    char path[JSON_PATH_LEN];
    char alias[JSON_PATH_LEN];
    size_t off;
};

struct json_doc {
    char *name;       /* file name (or label) for messages */
    const char *text;
    size_t len;
    size_t top_off;   /* the top-level value */
    cJSON *root;
    int value_code;
    bool note_keys; /* json_fields notes the keys it finds */
    struct json_pos *pos;
    size_t npos, cappos;
    struct mt_err *e;
};

/* ---------------------------------------------------------------------------------------
 * Scanning the (already valid) text beside the cJSON tree
 * ------------------------------------------------------------------------------------- */

static int is_ws(unsigned char c)
{
    return c <= 32; /* what cJSON skips as whitespace */
}

static size_t scan_ws(const struct json_doc *d, size_t i)
{
    while (i < d->len && is_ws((unsigned char)d->text[i]))
        i++;
    return i;
}

static size_t scan_bom(const struct json_doc *d)
{
    if (d->len >= 3 && memcmp(d->text, "\xEF\xBB\xBF", 3) == 0)
        return 3;
    return 0;
}

static size_t scan_string(const struct json_doc *d, size_t i)
{
    for (i++; i < d->len; i++) {
        if (d->text[i] == '\\')
            i++;
        else if (d->text[i] == '"')
            return i + 1;
    }
    return d->len;
}

static size_t scan_value(const struct json_doc *d, size_t i)
{
    if (i >= d->len)
        return d->len;
    char c = d->text[i];
    if (c == '"')
        return scan_string(d, i);
    if (c == '{' || c == '[') {
        size_t depth = 0;
        while (i < d->len) {
            c = d->text[i];
            if (c == '"') {
                i = scan_string(d, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return d->len;
    }
    while (i < d->len) {
        c = d->text[i];
        if (is_ws((unsigned char)c) || c == ',' || c == ']' || c == '}')
            break;
        i++;
    }
    return i;
}

/* Fills key_off (objects) and val_off of the n members of the container at off. */
static void scan_container(const struct json_doc *d, size_t off, struct json_value *m, size_t n)
{
    bool obj = off < d->len && d->text[off] == '{';
    int ok = off < d->len && (d->text[off] == '{' || d->text[off] == '[');
    size_t i = off + 1;
    for (size_t k = 0; k < n; k++) {
        m[k].key_off = m[k].val_off = JSON_NOPOS;
        if (!ok)
            continue;
        i = scan_ws(d, i);
        if (obj) {
            if (i >= d->len || d->text[i] != '"') {
                ok = 0;
                continue;
            }
            m[k].key_off = i;
            i = scan_ws(d, scan_string(d, i));
            if (i < d->len && d->text[i] == ':')
                i++;
            i = scan_ws(d, i);
        }
        m[k].val_off = i;
        i = scan_ws(d, scan_value(d, i));
        if (i < d->len && d->text[i] == ',')
            i++;
    }
}

/* 1-based line and column (in UTF-8 characters; a leading BOM is not a column). */
static void pos_linecol(const struct json_doc *d, size_t off, size_t *line, size_t *col)
{
    size_t l = 1, c = 1;
    for (size_t i = scan_bom(d); i < off && i < d->len; i++) {
        unsigned char ch = (unsigned char)d->text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ---------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------- */

static int fail_va(struct json_doc *d, size_t off, int code, const char *path, const char *fmt,
                   va_list ap)
{
    char what[MT_ERR_MSG_MAX], where[64] = "";
    vsnprintf(what, sizeof what, fmt, ap);
    if (off != JSON_NOPOS) {
        size_t line, col;
        pos_linecol(d, off, &line, &col);
        snprintf(where, sizeof where, ":%zu:%zu", line, col);
    }
    if (path != NULL && path[0] != '\0')
        return err_set(d->e, code, "%s%s: %s: %s", d->name, where, path, what);
    return err_set(d->e, code, "%s%s: %s", d->name, where, what);
}

int json_fail_at(struct json_doc *d, size_t off, int code, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_va(d, off, code, path, fmt, ap);
    va_end(ap);
    return rc;
}

static size_t value_off(const struct json_value *v)
{
    return v->key_off != JSON_NOPOS ? v->key_off : v->val_off;
}

int json_fail(struct json_doc *d, const struct json_value *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_va(d, value_off(v), d->value_code, v->path, fmt, ap);
    va_end(ap);
    return rc;
}

int json_fail_from(struct json_doc *d, const struct json_value *v, const struct mt_err *inner)
{
    return json_fail_at(d, value_off(v), inner->code ? inner->code : d->value_code, v->path, "%s",
                        inner->msg);
}

const char *json_clip(const char *s, char *buf, size_t n)
{
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < n; i++)
        buf[i] = (unsigned char)s[i] < 32 || s[i] == 127 ? '?' : s[i];
    buf[i] = '\0';
    if (s[i] != '\0' && n > 4)
        memcpy(buf + n - 4, "...", 4);
    return buf;
}

bool json_number(const cJSON *j, double *out)
{
    if (cJSON_IsNumber(j)) {
        *out = j->valuedouble;
        return true;
    }
    if (!cJSON_IsRaw(j) || j->valuestring == NULL || j->valuestring[0] == '\0')
        return false;
    char text[64], *end;
    snprintf(text, sizeof text, "%s", j->valuestring);
    char *dot = strchr(text, '.'); /* strtod reads the locale's decimal point */
    if (dot != NULL)
        *dot = localeconv()->decimal_point[0];
    double v = strtod(text, &end);
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

const char *json_type_name(const cJSON *j)
{
    double v;
    if (cJSON_IsString(j))
        return "string";
    if (json_number(j, &v))
        return "number";
    if (cJSON_IsBool(j))
        return "boolean";
    if (cJSON_IsNull(j))
        return "null";
    if (cJSON_IsArray(j))
        return "array";
    if (cJSON_IsObject(j))
        return "object";
    return "invalid value";
}

/* "string \"8\"", "3.5", "array" ... for "expected X, got Y". */
static const char *describe(const cJSON *j, char *buf, size_t n)
{
    char clip[40];
    double v;
    if (cJSON_IsString(j))
        snprintf(buf, n, "string \"%s\"", json_clip(j->valuestring, clip, sizeof clip));
    else if (json_number(j, &v))
        snprintf(buf, n, "%.15g", v);
    else if (cJSON_IsBool(j))
        snprintf(buf, n, "%s", cJSON_IsTrue(j) ? "true" : "false");
    else
        snprintf(buf, n, "%s", json_type_name(j));
    return buf;
}

int json_type_fail(struct json_doc *d, const struct json_value *v, const char *expected)
{
    char got[80];
    return json_fail(d, v, "expected %s, got %s", expected, describe(v->item, got, sizeof got));
}

/* ---------------------------------------------------------------------------------------
 * Documents
 * ------------------------------------------------------------------------------------- */

/* The JSON path ("cluster.dp", "model") of the value that is being read at off, so that a
 * syntax error inside a value (NaN, a cut-off number, a missing value) names its field; ""
 * when off is not inside a value (between members, after the top level). A forward scan
 * that keeps, per open container, the current key or index and whether a value is due. */
static void syntax_path(const struct json_doc *d, size_t off, char *buf, size_t n)
{
    enum { SP_KEY, SP_COLON, SP_VALUE, SP_AFTER };
    struct {
        bool obj;
        int phase, idx;
        char key[48];
    } st[16];
    int depth = 0, lost = 0; /* lost: containers nested deeper than st[] */
    buf[0] = '\0';
    for (size_t i = scan_bom(d); i < off && i < d->len; i++) {
        char ch = d->text[i];
        if (is_ws((unsigned char)ch))
            continue;
        bool in_value = depth > 0 && st[depth - 1].phase == SP_VALUE;
        if (ch == '{' || ch == '[') {
            if (in_value)
                st[depth - 1].phase = SP_AFTER; /* once the container closes */
            if (depth == (int)(sizeof st / sizeof st[0]) || lost > 0) {
                lost++;
                continue;
            }
            st[depth].obj = ch == '{';
            st[depth].phase = ch == '{' ? SP_KEY : SP_VALUE;
            st[depth].idx = 0;
            st[depth].key[0] = '\0';
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (lost > 0)
                lost--;
            else if (depth > 0)
                depth--;
        } else if (lost > 0 || depth == 0) {
            if (ch == '"')
                i = scan_string(d, i) - 1;
        } else if (ch == ',') {
            st[depth - 1].phase = st[depth - 1].obj ? SP_KEY : SP_VALUE;
            st[depth - 1].idx++;
        } else if (ch == ':') {
            st[depth - 1].phase = SP_VALUE;
        } else if (ch == '"' && st[depth - 1].obj && st[depth - 1].phase == SP_KEY) {
            size_t end = scan_string(d, i), k = 0;
            /* a key the text cuts ("num_de) is not a key yet: the error is at the object, and
             * the message must not name a field that is only the cut's prefix */
            if (end >= off || end > d->len || d->text[end - 1] != '"' || end == i + 1)
                break;
            for (size_t j = i + 1; j + 1 < end && k + 1 < sizeof st[0].key; j++)
                st[depth - 1].key[k++] = (unsigned char)d->text[j] < 32 ? '?' : d->text[j];
            st[depth - 1].key[k] = '\0';
            st[depth - 1].phase = SP_COLON;
            i = end - 1;
        } else {
            /* A scalar value: a string, or a literal up to a delimiter. */
            size_t end = ch == '"' ? scan_string(d, i) : scan_value(d, i);
            if (end > off)
                break; /* off is inside it */
            st[depth - 1].phase = SP_AFTER;
            i = end - 1;
        }
    }
    size_t used = 0;
    for (int k = 0; k < depth && used + 1 < n; k++) {
        bool open = st[k].phase == SP_COLON || st[k].phase == SP_VALUE ||
                    (k + 1 < depth); /* an outer container is always inside a value */
        if (!open)
            break;
        if (st[k].obj)
            snprintf(buf + used, n - used, "%s%s", used ? "." : "", st[k].key);
        else
            snprintf(buf + used, n - used, "[%d]", st[k].idx);
        used = strlen(buf);
    }
}

/* A syntax error at off: show what is there, and say so when the text ends inside a value. */
static int syntax_fail(struct json_doc *d, size_t off, const char *why)
{
    char near[24];
    size_t k = 0;
    for (size_t i = off; i < d->len && k + 1 < sizeof near && d->text[i] != '\n'; i++)
        near[k++] = (unsigned char)d->text[i] < 32 || d->text[i] == 127 ? '?' : d->text[i];
    near[k] = '\0';
    /* Unclosed containers or string at the end? */
    size_t depth = 0;
    int in_str = 0;
    for (size_t i = 0; i < d->len; i++) {
        char ch = d->text[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && depth > 0) {
            depth--;
        }
    }
    const char *tail = in_str      ? " (the text ends inside a string)"
                       : depth > 0 ? " (the text ends before every '{' and '[' is closed)"
                                   : "";
    char path[JSON_PATH_LEN];
    syntax_path(d, off, path, sizeof path);
    if (k == 0)
        return json_fail_at(d, off, MT_EPARSE, path, "%s at the end of the text%s", why, tail);
    return json_fail_at(d, off, MT_EPARSE, path, "%s near '%s'%s", why, near, tail);
}

static struct json_doc *doc_new(const char *name, int value_code)
{
    struct json_doc *d = xcalloc(1, sizeof *d);
    d->name = xstrdup(name != NULL ? name : "(json)");
    d->value_code = value_code;
    d->top_off = JSON_NOPOS;
    return d;
}

int json_doc_parse(const char *text, size_t len, const char *name, int value_code,
                   struct json_doc **out, struct mt_err *e)
{
    *out = NULL;
    struct json_doc *d = doc_new(name, value_code);
    d->text = text != NULL ? text : "";
    d->len = text != NULL ? len : 0;
    d->e = e;
    d->top_off = scan_ws(d, scan_bom(d));
    int rc = MT_OK;
    if (d->top_off >= d->len) {
        rc = json_fail_at(d, d->top_off, MT_EPARSE, NULL, "empty file (expected a JSON object)");
    } else {
        const char *end = NULL;
        d->root = cJSON_ParseWithLengthOpts(d->text, d->len, &end, 0);
        size_t stop = end != NULL && end >= d->text ? (size_t)(end - d->text) : 0;
        if (d->root == NULL) {
            rc = syntax_fail(d, stop > d->len ? d->len : stop, "syntax error");
        } else {
            size_t after = end != NULL && end >= d->text ? scan_ws(d, stop) : d->len;
            if (after < d->len)
                rc = syntax_fail(d, after, "syntax error: text after the top-level value");
        }
    }
    if (rc != MT_OK) {
        json_doc_free(d);
        return rc;
    }
    *out = d;
    return MT_OK;
}

void json_doc_free(struct json_doc *d)
{
    if (d == NULL)
        return;
    cJSON_Delete(d->root);
    free(d->pos);
    free(d->name);
    free(d);
}

const char *json_doc_name(const struct json_doc *d)
{
    return d->name;
}

void json_doc_root(const struct json_doc *d, struct json_value *out)
{
    memset(out, 0, sizeof *out);
    out->item = d->root;
    out->key_off = JSON_NOPOS;
    out->val_off = d->top_off;
}

/* ---------------------------------------------------------------------------------------
 * Positions of the keys read
 * ------------------------------------------------------------------------------------- */

void json_doc_note_keys(struct json_doc *d, bool on)
{
    d->note_keys = on;
}

void json_note(struct json_doc *d, const char *path, size_t off, const char *alias)
{
    if (off == JSON_NOPOS || strlen(path) >= JSON_PATH_LEN)
        return;
    if (d->npos == d->cappos) {
        d->cappos = d->cappos ? 2 * d->cappos : 32;
        d->pos = xreallocarray(d->pos, d->cappos, sizeof *d->pos);
    }
    snprintf(d->pos[d->npos].path, JSON_PATH_LEN, "%s", path);
    snprintf(d->pos[d->npos].alias, JSON_PATH_LEN, "%s",
             alias != NULL && strcmp(alias, path) != 0 ? alias : "");
    d->pos[d->npos].off = off;
    d->npos++;
}

bool json_noted(const struct json_doc *d, const char *path)
{
    for (size_t i = 0; i < d->npos; i++)
        if (strcmp(d->pos[i].path, path) == 0)
            return true;
    return false;
}

size_t json_lookup(const struct json_doc *d, const char *path, size_t dflt, const char **alias)
{
    char p[JSON_PATH_LEN];
    *alias = NULL;
    for (size_t i = 0; i < d->npos; i++)
        if (strcmp(d->pos[i].path, path) == 0 && d->pos[i].alias[0] != '\0')
            *alias = d->pos[i].alias;
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        for (size_t i = 0; i < d->npos; i++)
            if (strcmp(d->pos[i].path, p) == 0)
                return d->pos[i].off;
        char *dot = strrchr(p, '.');
        if (dot == NULL)
            break;
        *dot = '\0';
    }
    return dflt;
}

/* ---------------------------------------------------------------------------------------
 * Objects and arrays
 * ------------------------------------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return SIZE_MAX;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t sub =
                diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

/* dst = parent "." key (or key alone at the top), cut to JSON_PATH_LEN - 1 bytes. Paths are
 * built for every value read (a plan has millions), so without printf. */
static void path_join(char *dst, const char *parent, const char *sep, const char *key,
                      size_t keylen)
{
    size_t n = 0;
    for (const char *p = parent; *p != '\0' && n + 1 < JSON_PATH_LEN; p++)
        dst[n++] = *p;
    for (const char *p = parent[0] ? sep : ""; *p != '\0' && n + 1 < JSON_PATH_LEN; p++)
        dst[n++] = *p;
    for (size_t i = 0; i < keylen && n + 1 < JSON_PATH_LEN; i++)
        dst[n++] = key[i];
    dst[n] = '\0';
}

struct json_value *json_members(struct json_doc *d, const struct json_value *obj, size_t *n_out)
{
    size_t n = 0;
    for (const cJSON *it = obj->item->child; it != NULL; it = it->next)
        n++;
    struct json_value *m = xcalloc(n ? n : 1, sizeof *m);
    size_t k = 0;
    for (const cJSON *it = obj->item->child; it != NULL; it = it->next, k++) {
        char clip[64];
        m[k].item = it;
        json_clip(it->string ? it->string : "", clip, sizeof clip);
        path_join(m[k].path, obj->path, ".", clip, strlen(clip));
    }
    scan_container(d, obj->val_off, m, n);
    *n_out = n;
    return m;
}

/* key is not one of keys[]: suggest the nearest, else list them. */
static int unknown_key(struct json_doc *d, const struct json_value *m, const char *key,
                       const char *const *keys, size_t nkeys)
{
    size_t best = SIZE_MAX, bi = 0;
    for (size_t j = 0; j < nkeys; j++) {
        size_t dist = edit_distance(key, keys[j]);
        if (dist < best) {
            best = dist;
            bi = j;
        }
    }
    if (best <= 2)
        return json_fail(d, m, "unknown key (did you mean '%s'?)", keys[bi]);
    char list[512] = "";
    for (size_t j = 0; j < nkeys; j++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", keys[j]);
    }
    return json_fail(d, m, "unknown key (expected one of: %s)", list);
}

int json_fields(struct json_doc *d, const struct json_value *obj, const char *const *keys,
                size_t nkeys, struct json_value *out)
{
    for (size_t i = 0; i < nkeys; i++) { /* absent: named, and placed at obj */
        out[i] = *obj;
        out[i].item = NULL;
        path_join(out[i].path, obj->path, ".", keys[i], strlen(keys[i]));
    }
    if (!cJSON_IsObject(obj->item))
        return json_type_fail(d, obj, "an object");
    size_t n;
    struct json_value *m = json_members(d, obj, &n);
    int rc = MT_OK;
    for (size_t k = 0; k < n && rc == MT_OK; k++) {
        const char *key = m[k].item->string ? m[k].item->string : "";
        size_t i = 0;
        while (i < nkeys && strcmp(keys[i], key) != 0)
            i++;
        if (i == nkeys) {
            rc = unknown_key(d, &m[k], key, keys, nkeys);
        } else if (out[i].item != NULL) {
            size_t line = 0, col = 0;
            if (out[i].key_off != JSON_NOPOS)
                pos_linecol(d, out[i].key_off, &line, &col);
            if (line == 0)
                rc = json_fail(d, &m[k], "duplicate key");
            else
                rc = json_fail(d, &m[k], "duplicate key (first at %zu:%zu)", line, col);
        } else {
            out[i] = m[k];
            if (d->note_keys)
                json_note(d, m[k].path, m[k].key_off, NULL);
        }
    }
    free(m);
    return rc;
}

int json_elements(struct json_doc *d, const struct json_value *arr, struct json_value **out,
                  size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!cJSON_IsArray(arr->item))
        return json_type_fail(d, arr, "an array");
    size_t n = 0;
    for (const cJSON *it = arr->item->child; it != NULL; it = it->next)
        n++;
    struct json_value *m = xcalloc(n ? n : 1, sizeof *m);
    size_t k = 0;
    for (const cJSON *it = arr->item->child; it != NULL; it = it->next, k++) {
        m[k].item = it;
        char idx[24];
        int len = snprintf(idx, sizeof idx, "[%zu]", k);
        path_join(m[k].path, arr->path, "", idx, (size_t)len);
    }
    scan_container(d, arr->val_off, m, n);
    *out = m;
    *n_out = n;
    return MT_OK;
}

/* ---------------------------------------------------------------------------------------
 * Typed values
 * ------------------------------------------------------------------------------------- */

int json_int(struct json_doc *d, const struct json_value *v, long lo, long hi, int *out)
{
    double x;
    if (!json_number(v->item, &x) || !isfinite(x) || x != floor(x))
        return json_type_fail(d, v, "an integer");
    if (x < (double)lo && hi == INT_MAX)
        return json_fail(d, v, "must be >= %ld (got %.15g)", lo, x);
    if (x < (double)lo || x > (double)hi)
        return json_fail(d, v, "must be in [%ld, %ld] (got %.15g)", lo, hi, x);
    *out = (int)x;
    return MT_OK;
}

int json_double(struct json_doc *d, const struct json_value *v, double *out)
{
    double x;
    if (!json_number(v->item, &x) || !isfinite(x))
        return json_type_fail(d, v, "a finite number");
    *out = x;
    return MT_OK;
}

int json_bool(struct json_doc *d, const struct json_value *v, bool *out)
{
    if (!cJSON_IsBool(v->item))
        return json_type_fail(d, v, "true or false");
    *out = cJSON_IsTrue(v->item);
    return MT_OK;
}

int json_string(struct json_doc *d, const struct json_value *v, const char **out)
{
    *out = "";
    if (!cJSON_IsString(v->item) || v->item->valuestring == NULL)
        return json_type_fail(d, v, "a string");
    *out = v->item->valuestring;
    return MT_OK;
}

int json_label(struct json_doc *d, const struct json_value *v, char *dst, size_t n)
{
    const char *s;
    TRY(json_string(d, v, &s));
    size_t len = strlen(s);
    if (len == 0 || len >= n)
        return json_fail(d, v, "must be 1 to %zu characters long", n - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 32 || s[i] == 127)
            return json_fail(d, v, "contains control characters");
    memset(dst, 0, n);
    memcpy(dst, s, len);
    return MT_OK;
}

int json_bytes(struct json_doc *d, const struct json_value *v, double *out)
{
    double x;
    if (cJSON_IsString(v->item)) {
        struct mt_err pe;
        if (str_parse_bytes(v->item->valuestring, &x, &pe) != MT_OK) {
            char clip[40];
            return json_fail(d, v, "'%s' is not a size (expected e.g. 40G, 512M, 80GiB or bytes)",
                             json_clip(v->item->valuestring, clip, sizeof clip));
        }
    } else if (!json_number(v->item, &x)) {
        return json_type_fail(d, v, "a size (\"40G\") or a number of bytes");
    }
    if (!isfinite(x) || x <= 0)
        return json_fail(d, v, "must be a finite size > 0 (got %g)", x);
    *out = x;
    return MT_OK;
}

int json_enum(struct json_doc *d, const struct json_value *v, const char *const *names, int n,
              const char *what, int *out)
{
    if (cJSON_IsString(v->item))
        for (int i = 0; i < n; i++)
            if (strcasecmp(v->item->valuestring, names[i]) == 0) {
                *out = i;
                return MT_OK;
            }
    return json_type_fail(d, v, what);
}

void json_add_number_exact(cJSON *o, const char *key, double v)
{
    char buf[40];
    if (!isfinite(v) || (v == floor(v) && fabs(v) <= (double)INT_MAX)) {
        cJSON_AddNumberToObject(o, key, v); /* exact (non-finite values become null) */
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    for (char *p = buf; *p != '\0'; p++)
        if (!isdigit((unsigned char)*p) && *p != '-' && *p != '+' && *p != 'e')
            *p = '.';
    cJSON_AddRawToObject(o, key, buf);
}
