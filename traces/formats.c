/* traces/formats.c: the table of file formats and their rules (traces/formats.h). The rules
 * look at the first 64 KiB as text; the readers do the parsing and say what is wrong. */
#include <config.h>
#include "traces/formats.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "model/launch.h"
#include "traces/trace.h"
#include "util/err.h"

#define FORMAT_HEAD_BYTES 65536

/* The head of a file as the rules see it: the text after a byte-order mark and blanks. */
struct format_head {
    const char *path;
    const char *raw; /* the bytes read, NUL-terminated */
    size_t n;
    const char *text; /* raw past the mark and the leading blanks */
};

static bool format_has(const struct format_head *h, const char *needle)
{
    return strstr(h->text, needle) != NULL;
}

/* Whether the text holds the tokens in order, blanks allowed between them: "\"args\"", ":",
 * "{", "\"op\"" matches our writer's "args":{"op": and a hand-formatted "args": { "op":. */
static bool format_has_tokens(const struct format_head *h, const char *const *tok, int ntok)
{
    for (const char *at = strstr(h->text, tok[0]); at != NULL; at = strstr(at + 1, tok[0])) {
        const char *p = at + strlen(tok[0]);
        int k = 1;
        for (; k < ntok; k++) {
            while (isspace((unsigned char)*p))
                p++;
            size_t len = strlen(tok[k]);
            if (strncmp(p, tok[k], len) != 0)
                break;
            p += len;
        }
        if (k == ntok)
            return true;
    }
    return false;
}

static bool sniff_gzip(const struct format_head *h)
{
    return h->n >= 2 && (unsigned char)h->raw[0] == 0x1f && (unsigned char)h->raw[1] == 0x8b;
}

/* Launch files (model/launch.h tells them): before the trace rules, since a TOML's first
 * table line starts with '[' as a Chrome array does. */
static bool sniff_launch(const struct format_head *h, enum launch_kind want)
{
    enum launch_kind k;
    return launch_detect(h->raw, h->n, &k) && k == want;
}

static bool sniff_torchtitan(const struct format_head *h)
{
    return sniff_launch(h, LAUNCH_TORCHTITAN);
}

static bool sniff_megatron(const struct format_head *h)
{
    return sniff_launch(h, LAUNCH_MEGATRON);
}

static bool sniff_pippy(const struct format_head *h)
{
    static const char *const f[] = {"\"name\"", ":", "\"F_"};
    static const char *const b[] = {"\"name\"", ":", "\"B_"};
    return h->text[0] == '[' && (format_has_tokens(h, f, 3) || format_has_tokens(h, b, 3));
}

static bool sniff_chrome_array(const struct format_head *h)
{
    return h->text[0] == '[';
}

static bool sniff_plan(const struct format_head *h)
{
    return h->text[0] == '{' && format_has(h, "\"mario-plan\"");
}

static bool format_is_trace_object(const struct format_head *h)
{
    return h->text[0] == '{' && format_has(h, "\"traceEvents\"");
}

static bool sniff_ours(const struct format_head *h)
{
    static const char *const args_op[] = {"\"args\"", ":", "{", "\"op\""};
    return format_is_trace_object(h) && format_has_tokens(h, args_op, 4);
}

static bool sniff_torch_pp(const struct format_head *h)
{
    return format_is_trace_object(h) && format_has(h, "\"PP:");
}

static bool sniff_kineto(const struct format_head *h)
{
    return format_is_trace_object(h) &&
           (format_has(h, "\"schemaVersion\"") || format_has(h, "\"distributedInfo\"") ||
            format_has(h, "\"deviceProperties\"") || format_has(h, "\"ProfilerStep"));
}

static bool sniff_chrome(const struct format_head *h)
{
    return format_is_trace_object(h);
}

/* A torch action cell: stage, F | I | W | B, micro-batch ("0F1"); empty cells are idle. */
static bool format_csv_cell(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i]))
        i++;
    while (n > i && isspace((unsigned char)s[n - 1]))
        n--;
    if (i == n)
        return true;
    size_t d = i;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    if (i == d || i >= n || strchr("FIWB", s[i]) == NULL)
        return false;
    d = ++i;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    return i > d && i == n;
}

static bool sniff_torch_csv(const struct format_head *h)
{
    size_t len = strlen(h->path ? h->path : "");
    if (len > 4 && strcasecmp(h->path + len - 4, ".csv") == 0)
        return true;
    if (h->text[0] == '{' || h->text[0] == '[' || h->text[0] == '\0')
        return false;
    /* the first line: cells of actions, one at least */
    const char *end = strchr(h->text, '\n');
    size_t line = end ? (size_t)(end - h->text) : strlen(h->text);
    bool any = false;
    for (size_t a = 0; a <= line;) {
        const char *comma = memchr(h->text + a, ',', line - a);
        size_t b = comma ? (size_t)(comma - h->text) : line;
        if (!format_csv_cell(h->text + a, b - a))
            return false;
        for (size_t k = a; k < b; k++)
            any = any || isdigit((unsigned char)h->text[k]);
        a = b + 1;
    }
    return any;
}

static bool sniff_config(const struct format_head *h)
{
    (void)h;
    return true;
}

/* The table: the first record whose rule holds names the format. */
static const struct {
    struct file_format f;
    bool (*sniff)(const struct format_head *h);
} format_table[FORMAT__COUNT] = {
    {{FORMAT_GZIP, "gzip-compressed trace", FILE_KIND_TRACE}, sniff_gzip},
    {{FORMAT_LAUNCH_TORCHTITAN, "torchtitan job TOML", FILE_KIND_CONFIG}, sniff_torchtitan},
    {{FORMAT_LAUNCH_MEGATRON, "Megatron-LM launch", FILE_KIND_CONFIG}, sniff_megatron},
    {{FORMAT_PIPPY, "PiPPy trace (array form)", FILE_KIND_TRACE}, sniff_pippy},
    {{FORMAT_CHROME_ARRAY, "Chrome trace (array form)", FILE_KIND_TRACE}, sniff_chrome_array},
    {{FORMAT_PLAN, "plan file", FILE_KIND_PLAN}, sniff_plan},
    {{FORMAT_OURS, "mario-tui trace", FILE_KIND_TRACE}, sniff_ours},
    {{FORMAT_TORCH_PP, "torch pipelining trace (PP: ranges)", FILE_KIND_TRACE}, sniff_torch_pp},
    {{FORMAT_KINETO, "PyTorch profiler trace (Kineto)", FILE_KIND_TRACE}, sniff_kineto},
    {{FORMAT_CHROME, "Chrome trace", FILE_KIND_TRACE}, sniff_chrome},
    {{FORMAT_TORCH_CSV, "torch schedule CSV", FILE_KIND_PLAN}, sniff_torch_csv},
    {{FORMAT_CONFIG, "config", FILE_KIND_CONFIG}, sniff_config},
};

const struct file_format *format_get(enum file_format_id id)
{
    return (unsigned)id < FORMAT__COUNT ? &format_table[id].f : &format_table[FORMAT_CONFIG].f;
}

const struct file_format *format_of_head(const char *path, const char *head, size_t n)
{
    struct format_head h = {path, head, n, head};
    h.text += strspn(h.text, " \t\r\n");
    if (strncmp(h.text, "\xEF\xBB\xBF", 3) == 0) /* a byte-order mark */
        h.text += 3 + strspn(h.text + 3, " \t\r\n");
    for (int i = 0; i < FORMAT__COUNT; i++)
        if (format_table[i].sniff(&h))
            return &format_table[i].f;
    return &format_table[FORMAT_CONFIG].f;
}

/* The first bytes of path into buf (NUL-terminated); false when it cannot be opened. */
static bool format_read_head(const char *path, char *buf, size_t cap, size_t *n)
{
    *n = 0;
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    *n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[*n] = '\0';
    return true;
}

const struct file_format *format_of(const char *path)
{
    char buf[FORMAT_HEAD_BYTES];
    size_t n;
    if (!format_read_head(path, buf, sizeof buf, &n))
        return &format_table[FORMAT_CONFIG].f;
    return format_of_head(path, buf, n);
}

int format_load_trace(const char *const *paths, int n, const struct trace_opts *o,
                      struct trace **out, struct mt_err *e)
{
    *out = NULL;
    for (int i = 0; i < n; i++) {
        char buf[FORMAT_HEAD_BYTES];
        size_t len;
        if (!format_read_head(paths[i], buf, sizeof buf, &len))
            continue; /* the trace reader names the error */
        const struct file_format *f = format_of_head(paths[i], buf, len);
        if (f->kind != FILE_KIND_TRACE && len > 0) /* empty: the reader says so */
            return err_set(e, MT_EINVAL,
                           "%s: a %s, not a trace (Chrome's, the PyTorch profiler's, torch "
                           "pipelining's, PiPPy's or ours)",
                           paths[i], f->name);
    }
    return trace_load(paths, n, o, out, e);
}
