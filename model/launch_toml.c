/* model/launch_toml.c: the TOML subset of model/launch_toml.h. */
#include <config.h>
#include "model/launch_toml.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/launch_internal.h"
#include "util/err.h"
#include "util/xalloc.h"


static int tm_col(const struct toml *m)
{
    return (int)(m->p - m->line_start) + 1;
}

static int tm_fail(struct toml *m, const char *what)
{
    return launch_fail(m->e, m->name, m->line, tm_col(m), "%s", what);
}

static void tm_blank(struct toml *m)
{
    while (m->p < m->n && (m->t[m->p] == ' ' || m->t[m->p] == '\t'))
        m->p++;
}

/* Blanks, newlines and comments (inside arrays). */
static void tm_space(struct toml *m)
{
    for (;;) {
        tm_blank(m);
        if (m->p < m->n && m->t[m->p] == '#')
            while (m->p < m->n && m->t[m->p] != '\n')
                m->p++;
        if (m->p < m->n && (m->t[m->p] == '\n' || m->t[m->p] == '\r')) {
            if (m->t[m->p] == '\n') {
                m->p++;
                m->line++;
                m->line_start = m->p;
            } else {
                m->p++;
            }
            continue;
        }
        return;
    }
}

/* A string at m->p (", ', """ or '''), into a new buffer. */
static int tm_string(struct toml *m, char **out)
{
    char q = m->t[m->p];
    bool multi = m->p + 2 < m->n && m->t[m->p + 1] == q && m->t[m->p + 2] == q;
    m->p += multi ? 3 : 1;
    size_t cap = 64, len = 0;
    char *s = xmalloc(cap);
    for (;;) {
        if (m->p >= m->n) {
            free(s);
            return tm_fail(m, "a string does not end");
        }
        char c = m->t[m->p];
        if (c == q && (!multi || (m->p + 2 < m->n && m->t[m->p + 1] == q && m->t[m->p + 2] == q))) {
            m->p += multi ? 3 : 1;
            break;
        }
        if (c == '\n') {
            if (!multi) {
                free(s);
                return tm_fail(m, "a newline in a one-line string");
            }
            m->line++;
            m->line_start = m->p + 1;
        }
        if (c == '\\' && q == '"') {
            m->p++;
            if (m->p >= m->n) {
                free(s);
                return tm_fail(m, "a string does not end");
            }
            char d = m->t[m->p];
            static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
            const char *k = strchr(from, d);
            if (d == 'u' || d == 'U') {
                int digits = d == 'u' ? 4 : 8;
                for (int i = 1; i <= digits; i++)
                    if (m->p + i >= m->n || !isxdigit((unsigned char)m->t[m->p + i])) {
                        free(s);
                        return tm_fail(m, "a \\u escape needs hex digits");
                    }
                m->p += (size_t)digits;
                c = '?';
            } else if (k != NULL && d != '\0') {
                c = to[k - from];
            } else if (multi && (d == '\n' || d == ' ' || d == '\t' || d == '\r')) {
                while (m->p < m->n && isspace((unsigned char)m->t[m->p])) {
                    if (m->t[m->p] == '\n') {
                        m->line++;
                        m->line_start = m->p + 1;
                    }
                    m->p++;
                }
                continue;
            } else {
                free(s);
                return tm_fail(m, "an unknown escape in a string");
            }
        }
        if (len + 2 > cap)
            s = xreallocarray(s, cap *= 2, 1);
        s[len++] = c;
        m->p++;
        if (len > 65536) {
            free(s);
            return tm_fail(m, "a string longer than 64 KiB");
        }
    }
    s[len] = '\0';
    *out = s;
    return MT_OK;
}

static int tm_value(struct toml *m, struct tentry *v, int depth);

/* [ v, v, ... ]: strings joined with ','; other values counted. */
static int tm_array(struct toml *m, struct tentry *v, int depth)
{
    m->p++;
    size_t cap = 64, len = 0;
    char *joined = xcalloc(cap, 1);
    int rc = MT_OK;
    v->i = 0;
    for (;;) {
        tm_space(m);
        if (m->p < m->n && m->t[m->p] == ']') {
            m->p++;
            break;
        }
        struct tentry x = {0};
        rc = tm_value(m, &x, depth + 1);
        if (rc != MT_OK)
            break;
        v->i++;
        if (x.type == TV_STRING) {
            size_t k = strlen(x.str);
            if (len + k + 2 > cap) {
                cap = 2 * (len + k + 2);
                joined = xreallocarray(joined, cap, 1);
            }
            if (len)
                joined[len++] = ',';
            memcpy(joined + len, x.str, k + 1);
            len += k;
        }
        free(x.str);
        tm_space(m);
        if (m->p < m->n && m->t[m->p] == ',') {
            m->p++;
            continue;
        }
        if (m->p < m->n && m->t[m->p] == ']') {
            m->p++;
            break;
        }
        rc = tm_fail(m, "expected ',' or ']' in an array");
        break;
    }
    if (rc != MT_OK) {
        free(joined);
        return rc;
    }
    v->type = TV_ARRAY;
    v->str = joined;
    return MT_OK;
}

static int tm_key(struct toml *m, char *key, size_t kn);

/* { k = v, ... }: read and dropped (no torchtitan key that matters is one). */
static int tm_inline_table(struct toml *m, struct tentry *v, int depth)
{
    m->p++;
    tm_blank(m);
    if (m->p < m->n && m->t[m->p] == '}') {
        m->p++;
        v->type = TV_TABLE;
        return MT_OK;
    }
    for (;;) {
        char key[96];
        tm_blank(m);
        TRY(tm_key(m, key, sizeof key));
        tm_blank(m);
        if (m->p >= m->n || m->t[m->p] != '=')
            return tm_fail(m, "expected '=' after a key");
        m->p++;
        tm_blank(m);
        struct tentry x = {0};
        TRY(tm_value(m, &x, depth + 1));
        free(x.str);
        tm_blank(m);
        if (m->p < m->n && m->t[m->p] == ',') {
            m->p++;
            continue;
        }
        if (m->p < m->n && m->t[m->p] == '}') {
            m->p++;
            v->type = TV_TABLE;
            return MT_OK;
        }
        return tm_fail(m, "expected ',' or '}' in an inline table");
    }
}

static int tm_value(struct toml *m, struct tentry *v, int depth)
{
    if (depth > TOML_MAX_DEPTH)
        return tm_fail(m, "values nested too deep");
    v->line = m->line;
    v->col = tm_col(m);
    if (m->p >= m->n || m->t[m->p] == '\n' || m->t[m->p] == '#')
        return tm_fail(m, "a value is missing");
    char c = m->t[m->p];
    if (c == '"' || c == '\'') {
        v->type = TV_STRING;
        return tm_string(m, &v->str);
    }
    if (c == '[')
        return tm_array(m, v, depth);
    if (c == '{')
        return tm_inline_table(m, v, depth);
    size_t a = m->p;
    while (m->p < m->n && (isalnum((unsigned char)m->t[m->p]) || strchr("+-._:", m->t[m->p])))
        m->p++;
    size_t len = m->p - a;
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return tm_fail(m, len == 0 ? "not a TOML value" : "a number too long");
    memcpy(buf, m->t + a, len);
    buf[len] = '\0';
    if (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0) {
        v->type = TV_BOOL;
        v->b = buf[0] == 't';
        return MT_OK;
    }
    /* digits with '_' between them (TOML), a sign, then an integer or a float */
    char clean[64];
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '_') {
            if (i == 0 || i + 1 == len || !isalnum((unsigned char)buf[i - 1]) ||
                !isalnum((unsigned char)buf[i + 1])) {
                m->p = a + i;
                return tm_fail(m, "'_' must sit between digits");
            }
            continue;
        }
        clean[k++] = buf[i];
    }
    clean[k] = '\0';
    char *end;
    long iv = strtol(clean, &end, 10);
    if (*end == '\0' && end != clean && strchr("+-0123456789", clean[0]) &&
        !(clean[0] == '0' && clean[1] != '\0') &&
        !((clean[0] == '+' || clean[0] == '-') && clean[1] == '0' && clean[2] != '\0')) {
        v->type = TV_INT;
        v->i = iv;
        return MT_OK;
    }
    double dv = strtod(clean, &end);
    (void)dv;
    if ((*end == '\0' && end != clean && strpbrk(clean, ".eE") != NULL &&
         !strpbrk(clean, "xX")) ||
        strcmp(clean, "inf") == 0 || strcmp(clean, "+inf") == 0 || strcmp(clean, "-inf") == 0 ||
        strcmp(clean, "nan") == 0 || strcmp(clean, "+nan") == 0 || strcmp(clean, "-nan") == 0) {
        v->type = TV_FLOAT;
        return MT_OK;
    }
    if (strncmp(clean, "0x", 2) == 0 || strncmp(clean, "0o", 2) == 0 ||
        strncmp(clean, "0b", 2) == 0) {
        long x = strtol(clean + 2, &end, clean[1] == 'x' ? 16 : clean[1] == 'o' ? 8 : 2);
        if (*end == '\0' && end != clean + 2) {
            v->type = TV_INT;
            v->i = x;
            return MT_OK;
        }
    }
    m->p = a;
    return tm_fail(m, strchr(clean, ':') || (k == 10 && clean[4] == '-')
                          ? "a date or time (torchtitan's keys take none)"
                          : "not a TOML value (a string needs quotes)");
}

/* A key: bare (A-Za-z0-9_-) or quoted; dotted parts are joined with '.'. */
static int tm_key(struct toml *m, char *key, size_t kn)
{
    size_t len = 0;
    for (;;) {
        tm_blank(m);
        char *part = NULL;
        if (m->p < m->n && (m->t[m->p] == '"' || m->t[m->p] == '\'')) {
            TRY(tm_string(m, &part));
        } else {
            size_t a = m->p;
            while (m->p < m->n && (isalnum((unsigned char)m->t[m->p]) || m->t[m->p] == '_' ||
                                   m->t[m->p] == '-'))
                m->p++;
            if (m->p == a)
                return tm_fail(m, "a key is missing");
            part = xmalloc(m->p - a + 1);
            memcpy(part, m->t + a, m->p - a);
            part[m->p - a] = '\0';
        }
        size_t k = strlen(part);
        if (len + k + 2 > kn) {
            free(part);
            return tm_fail(m, "a key longer than 90 bytes");
        }
        if (len)
            key[len++] = '.';
        memcpy(key + len, part, k + 1);
        len += k;
        free(part);
        tm_blank(m);
        if (m->p < m->n && m->t[m->p] == '.') {
            m->p++;
            continue;
        }
        return MT_OK;
    }
}

int tm_parse(struct toml *m)
{
    while (m->p < m->n) {
        tm_space(m);
        if (m->p >= m->n)
            break;
        int line = m->line, col = tm_col(m);
        if (m->t[m->p] == '[') {
            if (m->p + 1 < m->n && m->t[m->p + 1] == '[')
                return tm_fail(m, "arrays of tables ([[...]]) are not a torchtitan job's");
            m->p++;
            char key[96];
            TRY(tm_key(m, key, sizeof key));
            if (m->p >= m->n || m->t[m->p] != ']')
                return tm_fail(m, "expected ']' after a table name");
            m->p++;
            for (int i = 0; i < m->nv; i++)
                if (m->v[i].key[0] == '\0' && strcmp(m->v[i].table, key) == 0)
                    return launch_fail(m->e, m->name, line, col,
                                       "[%s] a second time (first at line %d)", key,
                                       m->v[i].line);
            snprintf(m->table, sizeof m->table, "%s", key);
            if (m->nv == m->cap)
                m->v = xreallocarray(m->v, (size_t)(m->cap = m->cap ? 2 * m->cap : 64),
                                     sizeof *m->v);
            m->v[m->nv++] = (struct tentry){.type = TV_TABLE, .line = line, .col = col};
            snprintf(m->v[m->nv - 1].table, sizeof m->v[m->nv - 1].table, "%s", key);
        } else {
            char key[96], full_table[200];
            TRY(tm_key(m, key, sizeof key));
            if (m->p >= m->n || m->t[m->p] != '=')
                return tm_fail(m, "expected '=' after a key");
            m->p++;
            tm_blank(m);
            struct tentry v = {0};
            TRY(tm_value(m, &v, 0));
            /* a dotted key a.b = v sits in table "table.a" */
            char *dot = strrchr(key, '.');
            snprintf(full_table, sizeof full_table, "%s%s%.*s", m->table,
                     m->table[0] && dot ? "." : "", dot ? (int)(dot - key) : 0, key);
            if (strlen(full_table) >= sizeof v.table) {
                free(v.str);
                return launch_fail(m->e, m->name, line, col, "a table name over 95 bytes");
            }
            snprintf(v.table, sizeof v.table, "%s", full_table);
            snprintf(v.key, sizeof v.key, "%s", dot ? dot + 1 : key);
            v.line = line;
            v.col = col;
            for (int i = 0; i < m->nv; i++)
                if (strcmp(m->v[i].key, v.key) == 0 && strcmp(m->v[i].table, v.table) == 0) {
                    free(v.str);
                    return launch_fail(m->e, m->name, line, col,
                                       "%s%s%s a second time (first at line %d)", v.table,
                                       v.table[0] ? "." : "", v.key, m->v[i].line);
                }
            if (m->nv == TOML_MAX_ENTRIES) {
                free(v.str);
                return tm_fail(m, "more than 4096 keys");
            }
            if (m->nv == m->cap)
                m->v = xreallocarray(m->v, (size_t)(m->cap = m->cap ? 2 * m->cap : 64),
                                     sizeof *m->v);
            m->v[m->nv++] = v;
            tm_blank(m);
            if (m->p < m->n && m->t[m->p] == '#')
                while (m->p < m->n && m->t[m->p] != '\n')
                    m->p++;
            if (m->p < m->n && m->t[m->p] == '\r')
                m->p++;
            if (m->p < m->n && m->t[m->p] != '\n')
                return tm_fail(m, "text after a value (one key = value a line)");
        }
    }
    return MT_OK;
}
