/* tui/view_units.c: the explorer's numbers in units that fit them (issue 20): a step of the
 * tiny model is "2.593ms", not "0.003s"; 49,650 samples/s is "49.65k"; 2.8 MiB is "2.78M",
 * not "0.0G"; and a peak is printed with as many decimals as it takes to tell it from the
 * cap it is compared with (40.02G against 40G, not "40.0G"). Unit-cost plans count time in t
 * and memory in M_θ. */
#include <config.h>
#include "tui/explore.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/str.h"

/* v in the largest binary unit that keeps it below 1024, with decimals places. */
static void units_bytes_at(double v, int decimals, char *buf, size_t n)
{
    static const char unit[] = {'B', 'K', 'M', 'G', 'T', 'P'};
    int u = 0;
    double a = fabs(v);
    while (a >= 1024 && u < 5) {
        a /= 1024;
        v /= 1024;
        u++;
    }
    if (u == 0)
        decimals = 0;
    snprintf(buf, n, "%.*f%c", decimals, v, unit[u]);
}

void explore_fmt_bytes(const struct explore *x, double v, char *buf, size_t n)
{
    if (x->cfg.unit.enabled) {
        snprintf(buf, n, "%.3g", v);
        return;
    }
    double a = fabs(v);
    while (a >= 1024)
        a /= 1024;
    units_bytes_at(v, a < 10 ? 2 : 1, buf, n);
}

/* The cap as the user wrote it: no decimals that are zeros ("40G", "25.6G", "20.48G"). */
void explore_fmt_cap(const struct explore *x, double cap, char *buf, size_t n)
{
    if (x->cfg.unit.enabled) {
        snprintf(buf, n, "%.3g", cap);
        return;
    }
    char t[48];
    for (int d = 0; d <= 3; d++) {
        units_bytes_at(cap, d, t, sizeof t);
        double a = fabs(cap);
        int u = 0;
        while (a >= 1024 && u < 5)
            a /= 1024, u++;
        if (fabs(a - round(a * pow(10, d)) / pow(10, d)) < 1e-9 * (a > 1 ? a : 1) || d == 3)
            break;
    }
    snprintf(buf, n, "%s", t);
}

void explore_fmt_peak(const struct explore *x, double peak, double cap, char *buf, size_t n)
{
    if (x->cfg.unit.enabled) {
        for (int d = 2; d <= 6; d++) {
            char a[48], b[48];
            snprintf(a, sizeof a, "%.*f", d, peak);
            snprintf(b, sizeof b, "%.*f", d, cap);
            if (cap <= 0 || peak == cap || strcmp(a, b) != 0 || d == 6) {
                snprintf(buf, n, "%s", a);
                return;
            }
        }
    }
    explore_fmt_bytes(x, peak, buf, n);
    if (cap <= 0 || peak == cap)
        return;
    /* more decimals until the two differ in print, in the peak's unit */
    double a = fabs(peak);
    int d0 = 1;
    while (a >= 1024)
        a /= 1024;
    d0 = a < 10 ? 2 : 1;
    for (int d = d0; d <= 4; d++) {
        char p[48], c[48];
        units_bytes_at(peak, d, p, sizeof p);
        units_bytes_at(cap, d, c, sizeof c);
        size_t lp = strlen(p), lc = strlen(c);
        bool same_unit = lp > 0 && lc > 0 && p[lp - 1] == c[lc - 1];
        if (!same_unit || strcmp(p, c) != 0 || d == 4) {
            snprintf(buf, n, "%s", p);
            return;
        }
    }
}

void explore_fmt_time(const struct explore *x, double v, char *buf, size_t n)
{
    char num[48];
    if (x->cfg.unit.enabled) {
        snprintf(buf, n, "%st", str_format_number(v, 4, num, sizeof num));
        return;
    }
    double a = fabs(v);
    if (a >= 1e10) /* 10,000 s and over: whole seconds, never "1.161e+04s" */
        snprintf(buf, n, "%.0fs", v * 1e-6);
    else if (a >= 1e6)
        snprintf(buf, n, "%#.4gs", v * 1e-6);
    else if (a >= 1e3)
        snprintf(buf, n, "%#.4gms", v * 1e-3);
    else
        snprintf(buf, n, "%.4g%s", v, x->utf8 ? "µs" : "us");
}

void explore_fmt_rate(const struct explore *x, double v, char *buf, size_t n)
{
    static const char unit[] = {' ', 'k', 'M', 'G'};
    if (x->cfg.unit.enabled) { /* samples/t: fractions of a sample per t */
        snprintf(buf, n, "%.4f", v);
        return;
    }
    int u = 0; /* samples/s with two decimals, as every command prints them */
    while (fabs(v) >= 1e4 && u < 3) {
        v /= 1e3;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.2f", v);
    else
        snprintf(buf, n, "%.2f%c", v, unit[u]);
}
