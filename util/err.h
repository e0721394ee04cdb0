/* util/err.h: error codes and a message buffer that climbs the call stack (docs/design.md "Conventions": checked calls).
 * Fallible functions return int (MT_OK = 0) and take `struct mt_err *e` last. */
#ifndef MT_UTIL_ERR_H
#define MT_UTIL_ERR_H

enum {
    MT_OK = 0,
    MT_EINVAL,       /* bad input value or usage */
    MT_EPARSE,       /* malformed file */
    MT_EIO,          /* file system */
    MT_ENOMEM,       /* allocation refused (size from input over a limit) */
    MT_EINFEASIBLE,  /* a plan that cannot run: deadlock, out of memory */
    MT_EDEVICE,      /* MPI, CUDA, NCCL */
    MT_EUNSUPPORTED, /* built without the feature */
    MT_ETIMEOUT,
};

#define MT_ERR_MSG_MAX 1024

struct mt_err {
    int code;
    char msg[MT_ERR_MSG_MAX];
};

/* Formats into e (which may be NULL) and returns code. */
int err_set(struct mt_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "context: " to e->msg; returns e->code (MT_OK if e is NULL). */
int err_wrap(struct mt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void err_clear(struct mt_err *e);
/* Exit status for a command: 0 ok, 2 bad usage or input, 1 any other failure. */
int err_exit_status(int code);

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ != MT_OK)                                                                          \
            return rc_;                                                                            \
    } while (0)

#endif
