/* tui/view_frame.c: the whole screen: a title bar (model, scheme, geometry, step time,
 * throughput, the lower bound and the gap to it, a loaded trace's replayed step), the pass bar
 * (each step's time and its change against base, the shown one highlighted; the search once
 * run), the current view, and the status line. Below 80x24 it says so instead. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "render/paint_cells.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "util/str.h"

/* The title: what is drawn (model, scheme, geometry, device and cap, step time, throughput,
 * the lower bound of any schedule of its work and the gap to it (sim/core/bound.h), and with a
 * trace the replayed step and its error against the measured one) and, when a device is over
 * the cap, an orange-red "OOM: dev 0 231.8G > 40G" at its right end. Fields are shortened and go,
 * least needed first, until the rest fits (issue 27 item 7). */
static void frame_title(struct explore *x, struct cells *g)
{
    const struct pass_step *st = explore_step(x);
    const struct plan_geom *geo = plan_geom(st->plan);
    const struct config *c = plan_config(st->plan);
    char t[32], cap[32], rate[32], oom[128] = ""; /* room for the longest OOM mark */
    explore_fmt_time(x, st->sim.step_time, t, sizeof t);
    explore_fmt_rate(x, st->sim.throughput, rate, sizeof rate);
    if (c->unit.enabled && st->sim.cap > 0) /* M_θ: no θ here, the fit counts bytes */
        snprintf(cap, sizeof cap, "cap %.4g", st->sim.cap);
    else if (c->unit.enabled)
        snprintf(cap, sizeof cap, "unit costs");
    else
        explore_fmt_cap(x, st->sim.cap > 0 ? st->sim.cap : config_mem_cap(c), cap,
                        sizeof cap);
    char device[32]; /* unit costs with a cap: "unit costs cap 1.05" */
    snprintf(device, sizeof device, "%s",
             !c->unit.enabled ? c->cluster.device.name : st->sim.cap > 0 ? "unit costs" : "");
    int worst, n_oom = explore_oom(x, &worst);
    char peak[32] = "";
    if (n_oom > 0) {
        explore_fmt_peak(x, st->sim.dev[worst].peak_mem, st->sim.cap, peak, sizeof peak);
        if (n_oom > 1)
            snprintf(oom, sizeof oom, " OOM: dev %d %s > %s (%d devices) ", worst, peak, cap,
                     n_oom);
        else
            snprintf(oom, sizeof oom, " OOM: dev %d %s > %s ", worst, peak, cap);
    }
    for (int cx = 0; cx < g->w; cx++)
        cells_put(g, cx, 0, ' ', PAL_BG, PAL_TEXT, 0);
    char scheme[48];
    int n_mb = geo->mbs;
    snprintf(scheme, sizeof scheme, "%s", config_scheme_name(geo->scheme));
    if (config_scheme_uses_chunks(geo->scheme))
        snprintf(scheme + strlen(scheme), sizeof scheme - strlen(scheme), " v%d", geo->parts);
    if (config_scheme_async(geo->scheme)) { /* K iterations x N, an update every U */
        snprintf(scheme + strlen(scheme), sizeof scheme - strlen(scheme), " K %d U %d",
                 c->iterations, c->update_interval);
        n_mb = config_microbatches(c);
    }
    char f[10][64], tps[16] = "", tpx[16] = ""; /* " tp 8" and "x8" in the short forms */
    if (c->cluster.tp > 1) {
        snprintf(tps, sizeof tps, " tp %d", c->cluster.tp);
        snprintf(tpx, sizeof tpx, "x%d", c->cluster.tp);
    }
    snprintf(f[0], sizeof f[0], "mario-tui");
    snprintf(f[1], sizeof f[1], "%s", c->model.name);
    snprintf(f[2], sizeof f[2], "%s", scheme);
    config_degrees_text(c, geo->devices, f[3], sizeof f[3]);
    snprintf(f[4], sizeof f[4], "N %d x mbs %d", n_mb, c->micro_batch_size);
    snprintf(f[5], sizeof f[5], "%s%s%s", device, device[0] ? " " : "", cap);
    snprintf(f[6], sizeof f[6], "step %s", t);
    snprintf(f[7], sizeof f[7], "%s %s", rate, c->unit.enabled ? "samples/t" : "samples/s");
    double lb = 0, gap = 0;
    bool bound = explore_bound_shown(x, &lb, &gap), optimal = bound && explore_bound_optimal(x);
    char lbt[32] = "", rpt[32] = "";
    if (bound)
        explore_fmt_time(x, lb, lbt, sizeof lbt);
    if (optimal) /* at the bound under the cap: nothing is faster */
        snprintf(f[8], sizeof f[8], "bound %s optimal", lbt);
    else
        snprintf(f[8], sizeof f[8], "bound %s gap %.1f%%", lbt, gap);
    bool replay = x->have_rep && x->have_meas;
    if (replay)
        explore_fmt_time(x, x->rep.step_us * (st->sim.unit ? 1e-3 : 1.0), rpt, sizeof rpt);
    snprintf(f[9], sizeof f[9], "replay %s %+.1f%%", rpt, replay ? x->rep.err_pct : 0.0);
    /* What is drawn comes first: the model, the scheme, the devices (pp x dp and the device's
     * name), the step and the OOM mark are never dropped. The rest is shortened, then
     * dropped, in this fixed order until the line fits (mario-tui.1, EXPLORER, Screen): the
     * program's name; the bound's and replay's short forms; "pp 32 dp 1", "N 128 mbs 1";
     * "23.49/s"; "gap 0.0%", "rep +1.0%"; the OOM mark's device count; the replay; the cap
     * (the OOM mark names it); the bound; the micro-batches; "pp32x1" and the OOM mark's
     * short form; the throughput. */
    bool keep[10] = {true, true, true, true, true, true, true, true, bound, replay};
    char line[512];
    for (int stage = 0;; stage++) {
        int room = g->w - 2 - (int)strlen(oom);
        size_t len = 0;
        for (int i = 0; i < 10; i++)
            if (keep[i] && f[i][0] && len + strlen(f[i]) + 3 < sizeof line) {
                if (len > 0)
                    line[len++] = ' ', line[len++] = ' ';
                memcpy(line + len, f[i], strlen(f[i]));
                len += strlen(f[i]);
            }
        line[len] = 0;
        if ((int)strlen(line) <= room || stage == 12)
            break;
        switch (stage) {
        case 0: keep[0] = false; break;
        case 1: if (!optimal)
                    snprintf(f[8], sizeof f[8], "bound %s +%.1f%%", lbt, gap);
                snprintf(f[9], sizeof f[9], "rep %s %+.1f%%", rpt, replay ? x->rep.err_pct : 0.0);
                break;
        case 2: snprintf(f[3], sizeof f[3], "pp %d dp %d%s", geo->devices, c->cluster.dp, tps);
                snprintf(f[4], sizeof f[4], "N %d mbs %d", n_mb, c->micro_batch_size); break;
        case 3: snprintf(f[7], sizeof f[7], "%s/%s", rate, c->unit.enabled ? "t" : "s"); break;
        case 4: if (optimal)
                    snprintf(f[8], sizeof f[8], "optimal");
                else
                    snprintf(f[8], sizeof f[8], "gap %.1f%%", gap);
                snprintf(f[9], sizeof f[9], "rep %+.1f%%", replay ? x->rep.err_pct : 0.0);
                break;
        case 5: /* the worst device alone */
            if (n_oom > 1)
                snprintf(oom, sizeof oom, " OOM: dev %d %s > %s ", worst, peak, cap);
            break;
        case 6: keep[9] = false; break;
        case 7: snprintf(f[5], sizeof f[5], "%s", device); break;
        case 8: keep[8] = false; break;
        case 9: keep[4] = false; break;
        case 10: snprintf(f[3], sizeof f[3], "pp%dx%d%s", geo->devices, c->cluster.dp, tpx);
                 if (n_oom > 0)
                     snprintf(oom, sizeof oom, " OOM dev%d %s>%s ", worst, peak, cap);
                 break;
        case 11: keep[7] = false; break;
        }
    }
    cells_text(g, 1, 0, g->w - 2 - (int)strlen(oom), line, PAL_BG, PAL_TEXT, CELL_BOLD);
    if (oom[0])
        cells_text(g, g->w - (int)strlen(oom), 0, 0, oom, PAL_BG, PAL_MEM_OVER, CELL_BOLD);
}

/* A pass row's name; the search's is not among pass_row_name's. Level 2 (80 columns) shortens
 * the names of the rows not shown. */
static const char *frame_row_name(int row, int level, bool shown)
{
    static const char *const brief[] = {"base", "ckpt", "ovl", "red", "prepose", "srch"};
    if (level >= 2 && !shown && row <= PASS_ROW_SEARCH)
        return brief[row];
    if (level >= 1 && row == PASS_ROW_REDUNDANCY)
        return "redund";
    return row == PASS_ROW_SEARCH ? "search" : pass_row_name((enum pass_row)row);
}

/* The pass bar's item of row at a level of compactness: 0 every step's time and change
 * against base; 1 the shown step and base keep their time, the others their change; 2 as 1,
 * with base's time only when shown and shorter names. A search not yet run is "search ...". */
static void frame_pass_item(struct explore *x, int row, int level, char *item, size_t n)
{
    const struct pass_step *base = pass_pipeline_row(&x->pl, PASS_ROW_BASE);
    const struct pass_step *st = pass_pipeline_row(&x->pl, (enum pass_row)row);
    bool shown = row == x->row;
    const char *name = frame_row_name(row, level, shown);
    char with_of[16];
    if (row == PASS_ROW_SEARCH && x->offload) { /* O, --offload: the search may offload */
        snprintf(with_of, sizeof with_of, "%s+OF", name);
        name = with_of;
    }
    if (st == NULL) {
        snprintf(item, n, " %s %s ", name, x->utf8 ? "…" : "...");
        return;
    }
    char t[32];
    explore_fmt_time(x, st->sim.step_time, t, sizeof t);
    double change =
        base->sim.step_time > 0 ? 100 * (st->sim.step_time / base->sim.step_time - 1) : 0;
    if (row == 0)
        snprintf(item, n, level >= 2 && !shown ? " %s " : " %s %s ", name, t);
    else if (level >= 1 && !shown)
        snprintf(item, n, " %s %+.0f%% ", name, change);
    else
        snprintf(item, n, " %s %s %+.1f%% ", name, t, change);
}

/* Display width of a UTF-8 string (the ellipsis is one cell). */
static int frame_cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void frame_passes(struct explore *x, struct cells *g)
{
    int n_rows = explore_rows(x);
    int extra = 0;
    if (explore_step(x) != NULL && config_scheme_async(plan_geom(explore_step(x)->plan)->scheme))
        extra = 26; /* util and steady utilization */
    int level = 0;
    for (; level < 2; level++) { /* the least compact form that fits */
        int full = 1 + extra;
        for (int row = 0; row < n_rows; row++) {
            char item[96];
            frame_pass_item(x, row, level, item, sizeof item);
            full += frame_cols(item) + (row + 1 < n_rows);
        }
        if (full <= g->w)
            break;
    }
    int cx = 1;
    for (int row = 0; row < n_rows; row++) {
        const struct pass_step *st = pass_pipeline_row(&x->pl, (enum pass_row)row);
        char item[96];
        frame_pass_item(x, row, level, item, sizeof item);
        bool cur = row == x->row;
        if (row < 8)
            x->pass_col[row] = cx;
        if (st == NULL) /* the search, not yet run: dim */
            cx += cells_text(g, cx, 1, g->w - cx, item, PAL_TEXT_DIM, PAL_BG, 0);
        else
            cx += cells_text(g, cx, 1, g->w - cx, item, cur ? PAL_BG : PAL_TEXT_DIM,
                             cur ? PAL_FW : PAL_BG, cur ? CELL_BOLD : 0);
        if (row + 1 < n_rows)
            cx += cells_text(g, cx, 1, g->w - cx, x->utf8 ? "›" : ">", PAL_AXIS, PAL_BG, 0);
    }
    /* Async plans: the shown step's utilization, whole and in the steady state. */
    const struct pass_step *st = explore_step(x);
    if (st != NULL && config_scheme_async(plan_geom(st->plan)->scheme) && cx < g->w - 2) {
        char u[64];
        snprintf(u, sizeof u, "  util %.0f%% steady %.0f%%", 100 * st->sim.utilization,
                 100 * st->sim.steady_utilization);
        cells_text(g, cx, 1, g->w - cx, u, PAL_TEXT, PAL_BG, CELL_BOLD);
    }
}

/* The status line for width w: a line that ends with the keys (EXPLORE_HINTS) keeps as many
 * of them as fit, dropping q, zoom, arrows, export, tune, passes in that order; "?: help"
 * stays (it lists every key), and when even it does not fit the message is cut with an
 * ellipsis before it. Any other line is drawn as it is. */
static void frame_status_fit(const struct explore *x, int w, char *out, size_t n)
{
    static const char *const hint[] = {"n/p: passes", "arrows: select", "+/-/0: zoom",
                                       "t: tune",     "e: export",      "?: help",
                                       "q: quit"};
    static const int drop_order[] = {6, 2, 1, 4, 3, 0}; /* never 5, "?: help" */
    size_t len = strlen(x->status), hl = strlen(EXPLORE_HINTS);
    if (len < hl || strcmp(x->status + len - hl, EXPLORE_HINTS) != 0 ||
        frame_cols(x->status) <= w) {
        snprintf(out, n, "%s", x->status);
        return;
    }
    char what[sizeof x->status];
    snprintf(what, sizeof what, "%.*s", (int)(len - hl), x->status);
    bool keep[7] = {true, true, true, true, true, true, true};
    char keys[160];
    for (int k = 0;; k++) {
        size_t kl = 0;
        keys[0] = '\0';
        for (int i = 0; i < 7; i++)
            if (keep[i])
                kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "%s%s", kl ? "  " : "   ",
                                       hint[i]);
        if (frame_cols(what) + frame_cols(keys) <= w || k == 6)
            break;
        keep[drop_order[k]] = false;
    }
    int room = w - frame_cols(keys);
    if (frame_cols(what) > room && room > 1) { /* cut the message, the ellipsis its last cell */
        int cols = 0;
        char *c = what;
        for (; *c && cols < room - 1; c++)
            cols += ((unsigned char)*c & 0xC0) != 0x80;
        while (((unsigned char)*c & 0xC0) == 0x80) /* not in the middle of a character */
            c++;
        snprintf(c, sizeof what - (size_t)(c - what), "%s", x->utf8 ? "…" : "~");
    }
    if (snprintf(out, n, "%s%s", what, keys) >= (int)n)
        return; /* longer than the caller's line: cut there, as the screen would */
}

static void frame_status(struct explore *x, struct cells *g)
{
    int y = g->h - 1;
    for (int cx = 0; cx < g->w; cx++)
        cells_put(g, cx, y, ' ', PAL_TEXT, PAL_BG, 0);
    if (x->mode == MODE_PROMPT) {
        cells_printf(g, 0, y, g->w, PAL_TEXT, PAL_BG, CELL_BOLD, "%s%s_",
                     x->prompt == PROMPT_SEARCH  ? "search (mb, op, or op+mb): "
                     : x->prompt == PROMPT_TRACE ? "measured trace (Chrome or Kineto JSON): "
                                                 : "export to (.json .trace.json .svg .pdf .png): ",
                     x->input);
        return;
    }
    if (x->waiting != NULL) { /* work on a thread of its own: what, how long, how to stop */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double s = (ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6 - x->wait_t0) / 1e3;
        cells_printf(g, 0, y, g->w, PAL_TEXT, PAL_BG, CELL_BOLD,
                     "%s... %.1f s   Esc: stop (the plan shown stays)", x->waiting, s);
        return;
    }
    if (x->searching) { /* the search's progress: a bar, the count, how to stop it */
        long done = x->search_done, budget = x->search_budget > 0 ? x->search_budget : 1;
        int cx = cells_text(g, 0, y, g->w, "search [", PAL_TEXT, PAL_BG, CELL_BOLD);
        int width = g->w - 70 > 10 ? g->w - 70 : 10, fill = (int)(done * width / budget);
        for (int i = 0; i < width && cx < g->w; i++)
            cells_put(g, cx++, y, i < fill ? '#' : '.', i < fill ? PAL_FW : PAL_TEXT_DIM, PAL_BG,
                      0);
        cells_printf(g, cx, y, g->w - cx, PAL_TEXT, PAL_BG, CELL_BOLD,
                     "] %3d%%  %ld of %ld schedules   Esc: stop (keeps the best so far)",
                     (int)(100 * done / budget), done, x->search_budget);
        return;
    }
    char line[sizeof x->status + 8], note[200];
    if (explore_build_note(x, note, sizeof note)) { /* an edit's passes, behind its base */
        int cx = cells_printf(g, 0, y, g->w, PAL_TEXT, PAL_BG, CELL_BOLD,
                              "%s   Esc: stop (keeps the steps made)", note);
        if (cx + 3 < g->w)
            cells_printf(g, cx, y, g->w - cx, PAL_TEXT_DIM, PAL_BG, 0, "   %s", x->status);
        return;
    }
    frame_status_fit(x, g->w, line, sizeof line);
    cells_text(g, 0, y, g->w, line, x->status_err ? PAL_MEM_OVER : PAL_TEXT_DIM, PAL_BG,
               x->status_err ? CELL_BOLD : 0);
}

/* Words wrapped to width w into lines (at most max); returns the count. */
static int frame_wrap(const char *const *words, int nw, int w, char lines[][96], int max)
{
    int n = 0;
    lines[0][0] = '\0';
    for (int i = 0; i < nw; i++) {
        size_t len = strlen(lines[n]);
        if (words[i][0] == '\n' || (len > 0 && (int)(len + 1 + strlen(words[i])) > w)) {
            if (n + 1 >= max)
                return max + 1; /* does not fit */
            lines[++n][0] = '\0';
            len = 0;
            if (words[i][0] == '\n')
                continue;
        }
        snprintf(lines[n] + len, 96 - len, "%s%s", len > 0 ? " " : "", words[i]);
    }
    return n + 1;
}

/* Below 80x24: what the terminal is and needs, wrapped to its width, centred; a shorter form
 * when the long one does not fit its height. */
static void frame_too_small(struct cells *g)
{
    char need[32], have[32], small[48];
    snprintf(need, sizeof need, "(need %dx%d,", EXPLORE_MIN_W, EXPLORE_MIN_H);
    snprintf(have, sizeof have, "have %dx%d)", g->w, g->h);
    snprintf(small, sizeof small, "%dx%d<%dx%d", g->w, g->h, EXPLORE_MIN_W, EXPLORE_MIN_H);
    const char *const full[] = {"terminal", "too", "small", need, have, "\n", "q quits"};
    const char *const brief[] = {"too", "small:", small};
    char lines[8][96];
    int n = frame_wrap(full, 7, g->w, lines, g->h < 8 ? g->h : 8);
    if (n > (g->h < 8 ? g->h : 8))
        n = frame_wrap(brief, 3, g->w, lines, 8);
    int top = (g->h - n) / 2 > 0 ? (g->h - n) / 2 : 0;
    for (int i = 0; i < n && i < 8 && top + i < g->h; i++) {
        int len = (int)strlen(lines[i]);
        cells_text(g, g->w > len ? (g->w - len) / 2 : 0, top + i, g->w, lines[i], PAL_TEXT,
                   PAL_BG, CELL_BOLD);
    }
}

void explore_draw_status(struct explore *x, struct cells *g)
{
    if (!explore_too_small(x) && explore_step(x) != NULL)
        frame_status(x, g);
}

void explore_draw(struct explore *x, struct cells *g)
{
    x->w = g->w;
    x->h = g->h;
    cells_clear(g, PAL_BG);
    if (explore_too_small(x)) { /* the message, in words that fit, and nothing else */
        frame_too_small(g);
        return;
    }
    if (explore_step(x) == NULL)
        return;
    frame_title(x, g);
    frame_passes(x, g);
    switch (x->mode) {
    case MODE_HELP:
        view_help_draw(x, g);
        break;
    case MODE_TUNE:
        view_tune_draw(x, g, 3, g->h - 4);
        break;
    case MODE_BUCKETS:
        view_buckets_draw(x, g, 3, g->h - 4);
        break;
    default: {
        int gantt_h = g->h - 3 - EXPLORE_BOTTOM;
        view_gantt_legend(x, g, 2);
        view_gantt_draw(x, g, 3, gantt_h);
        view_inspect_draw(x, g, 3 + gantt_h, EXPLORE_BOTTOM - 1);
        break;
    }
    }
    frame_status(x, g);
}
