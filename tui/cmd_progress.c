/* tui/cmd_progress.c: the progress line of a long command on stderr (issue 27 item 2): what runs
 * now (Mario's pass and its round, the search's schedules), drawn only when stderr is a
 * terminal and the command was not asked to be quiet, first after CMD_PROGRESS_AFTER_MS (a
 * quick run prints nothing), at most every CMD_PROGRESS_EVERY_MS, and cleared at the end so that
 * the report starts on a clean line. */
#include <config.h>
#include "tui/cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "sim/passes/pass.h"

#define CMD_PROGRESS_AFTER_MS 200
#define CMD_PROGRESS_EVERY_MS 100

static double cmd_progress_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

void cmd_progress_start(struct cmd_progress *pr, const char *cmd, bool quiet)
{
    *pr = (struct cmd_progress){.on = !quiet && isatty(STDERR_FILENO), .cmd = cmd};
    pr->t0_ms = cmd_progress_now_ms();
}

void cmd_progress_say(struct cmd_progress *pr, const char *fmt, ...)
{
    if (!pr->on)
        return;
    double now = cmd_progress_now_ms();
    if (now - pr->t0_ms < CMD_PROGRESS_AFTER_MS ||
        (pr->shown && now - pr->last_ms < CMD_PROGRESS_EVERY_MS))
        return;
    pr->shown = true;
    pr->last_ms = now;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r\033[K%s: %s (%.1f s)", pr->cmd, line, (now - pr->t0_ms) * 1e-3);
    fflush(stderr);
}

void cmd_progress_end(struct cmd_progress *pr)
{
    if (pr->shown)
        fprintf(stderr, "\r\033[K");
    pr->shown = false;
}

bool cmd_progress_pass(void *ctx, const struct pass_pipeline *pl, const char *next, int round)
{
    if (round > 0)
        cmd_progress_say(ctx, "Mario's passes: %s, round %d (%d step%s done)", next, round, pl->n,
                         pl->n == 1 ? "" : "s");
    else
        cmd_progress_say(ctx, "Mario's passes: %s (%d step%s done)", next, pl->n,
                         pl->n == 1 ? "" : "s");
    return true;
}

bool cmd_progress_search(void *ctx, long done, long budget)
{
    struct cmd_progress *pr = ctx;
    int width = 30, fill = budget > 0 ? (int)(done * width / budget) : 0;
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    /* the offload search (sim/search/search_offload.h) reports from 0 again after the schedule
     * search's last report (done = budget) */
    if (pr->search_done && done < pr->search_last)
        pr->offload_phase = true;
    pr->search_done = done >= budget;
    pr->search_last = done;
    cmd_progress_say(pr, "%s [%s] %ld of %ld schedules",
                     pr->offload_phase ? "offload search" : "search", bar, done, budget);
    return true;
}
