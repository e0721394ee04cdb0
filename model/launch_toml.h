/* model/launch_toml.h: the TOML subset torchtitan's job files use (TOML 1.0: tables, dotted
 * keys, strings, integers, floats, booleans, arrays, inline tables; no dates, no arrays of
 * tables), parsed into a flat list of entries with their line and column, for
 * model/launch_torchtitan.c. Private to model/. */
#ifndef MT_MODEL_LAUNCH_TOML_H
#define MT_MODEL_LAUNCH_TOML_H

#include <stdbool.h>
#include <stddef.h>

struct mt_err;

enum tv_type { TV_STRING, TV_INT, TV_FLOAT, TV_BOOL, TV_ARRAY, TV_TABLE };

struct tentry {
    char table[96];
    char key[96];
    enum tv_type type;
    char *str; /* TV_STRING; TV_ARRAY: its strings joined with ',' */
    long i;
    bool b;
    int line, col;
    bool used;
};

struct toml {
    const char *t;
    size_t n, p;
    int line;
    size_t line_start;
    const char *name;
    struct mt_err *e;
    struct tentry *v;
    int nv, cap;
    char table[96];
};

#define TOML_MAX_ENTRIES 4096
#define TOML_MAX_DEPTH 32

/* Parses m->t[0, m->n) into m->v (m->nv entries; the caller frees each str and v); errors
 * "name:line:col: what" through m->e. MT_OK or MT_EINVAL. */
int tm_parse(struct toml *m);

#endif
