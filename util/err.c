/* util/err.c: the error buffer. Messages are built innermost first; err_wrap adds the
 * outer context in front so the final text reads "file: field: what is wrong". */
#include <config.h>
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(struct mt_err *e, int code, const char *fmt, ...)
{
    if (e == NULL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    return code;
}

int err_wrap(struct mt_err *e, const char *fmt, ...)
{
    if (e == NULL)
        return MT_OK;
    char prefix[MT_ERR_MSG_MAX / 2], old[MT_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t n = strlen(prefix);
    /* the inner message already names this context ("search: ..." wrapped in "search"): one
     * prefix, not "search: search: ..." */
    if (n > 0 && strncmp(old, prefix, n) == 0 && old[n] == ':' && old[n + 1] == ' ')
        return e->code;
    if (n + 2 >= sizeof e->msg)
        n = sizeof e->msg - 3;
    memcpy(e->msg, prefix, n);
    memcpy(e->msg + n, ": ", 2);
    size_t rest = sizeof e->msg - n - 3;
    size_t m = strnlen(old, rest);
    memcpy(e->msg + n + 2, old, m);
    e->msg[n + 2 + m] = '\0';
    return e->code;
}

void err_clear(struct mt_err *e)
{
    if (e == NULL)
        return;
    e->code = MT_OK;
    e->msg[0] = '\0';
}

int err_exit_status(int code)
{
    switch (code) {
    case MT_OK:
        return 0;
    case MT_EINVAL:
    case MT_EPARSE:
        return 2;
    default:
        return 1;
    }
}
