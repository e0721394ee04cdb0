/* util/sysmem.c: the memory left to this process. A command that would need more than this
 * refuses up front with the figure (sim/plan/footprint.h), rather than being killed by the
 * kernel minutes in (issue 41 items 5 and 9). */
#include <config.h>
#include "util/sysmem.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The first number after "key" in a /proc-style file, times scale; -1 if absent. */
static double sysmem_read_key(const char *path, const char *key, double scale)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[256];
    double v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, n) == 0) {
            double x;
            if (sscanf(line + n, " %lf", &x) == 1)
                v = x * scale;
            break;
        }
    fclose(f);
    return v;
}

/* A file holding one number ("max" for none): the number, or -1. */
static double sysmem_read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    double x;
    int ok = fscanf(f, "%lf", &x) == 1;
    fclose(f);
    return ok ? x : -1;
}

static void sysmem_take(double v, const char *name, double *best, const char **from)
{
    if (v >= 0 && (*best < 0 || v < *best)) {
        *best = v;
        *from = name;
    }
}

double sysmem_available(const char **from)
{
    double best = -1;
    const char *name = "nothing";
    sysmem_take(sysmem_read_key("/proc/meminfo", "MemAvailable:", 1024.0), "MemAvailable", &best,
                &name);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        double pages = -1;
        FILE *f = fopen("/proc/self/statm", "r");
        if (f != NULL) {
            if (fscanf(f, "%lf", &pages) != 1)
                pages = -1;
            fclose(f);
        }
        double size = pages > 0 ? pages * (double)sysconf(_SC_PAGESIZE) : 0;
        double left = (double)rl.rlim_cur - size;
        sysmem_take(left > 0 ? left : 0, "ulimit -v", &best, &name);
    }
    double max = sysmem_read_number("/sys/fs/cgroup/memory.max"); /* cgroup v2; "max" reads -1 */
    double cur = sysmem_read_number("/sys/fs/cgroup/memory.current");
    if (max > 0 && cur >= 0)
        sysmem_take(max > cur ? max - cur : 0, "the cgroup's memory.max", &best, &name);
    if (from != NULL)
        *from = name;
    return best;
}
