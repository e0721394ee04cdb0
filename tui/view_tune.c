/* tui/view_tune.c: the tuner's results, ranked (feasible by throughput, ties to the lower
 * peak, then the rest with why), one selectable row each; Enter loads the candidate into the
 * explorer. S runs it again with the search as a third checkpointing mode (`tune --search`:
 * seconds, so not by default); f shows one scheme at a time (`tune --scheme`), then all. */
#include <config.h>
#include "tui/explore.h"

#include <stdlib.h>
#include <string.h>

#include "render/paint_cells.h"
#include "util/str.h"
#include "util/xalloc.h"

int view_tune_shown(const struct explore *x)
{
    if (!x->have_tune)
        return 0;
    int *order = xmalloc(((size_t)x->tune.n + 1) * sizeof *order);
    int n = explore_tune_rank(x, order);
    free(order);
    return n;
}

int view_tune_filter_next(struct explore *x)
{
    if (!x->have_tune)
        return R_NONE;
    /* the next scheme after the shown one that has a candidate; past the last, all */
    int next = 0;
    for (int s = x->tune_scheme; s < SCHEME__COUNT && next == 0; s++)
        for (int i = 0; i < x->tune.n; i++)
            if ((int)x->tune.cand[i].scheme == s) {
                next = s + 1;
                break;
            }
    x->tune_scheme = next;
    x->tune_sel = 0;
    if (next)
        snprintf(x->status, sizeof x->status, "tuner: %s only (%d candidates); f: next scheme",
                 config_scheme_name((enum scheme_id)(next - 1)), view_tune_shown(x));
    else
        snprintf(x->status, sizeof x->status, "tuner: every scheme (%d candidates); f: one "
                 "scheme", x->tune.n);
    x->status_err = false;
    return R_REDRAW;
}

void view_tune_draw(struct explore *x, struct cells *g, int top, int height)
{
    if (!x->have_tune)
        return;
    int *order = xmalloc(((size_t)x->tune.n + 1) * sizeof *order);
    int n = explore_tune_rank(x, order);
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += x->tune.cand[order[i]].status == TUNE_OK;
    char only[48] = "";
    if (x->tune_scheme)
        snprintf(only, sizeof only, " (%s only)",
                 config_scheme_name((enum scheme_id)(x->tune_scheme - 1)));
    char ran[48] = ""; /* Esc stopped it: what ran is ranked, the rest "not run" */
    if (x->tune.cancelled)
        snprintf(ran, sizeof ran, " (%d ran before Esc)", x->tune.done);
    cells_printf(g, 1, top, g->w - 2, PAL_TEXT, PAL_BG, CELL_BOLD,
                 "tuner%s: %d candidates%s, %d fit the cap   (Enter: load   f: scheme   %s%sEsc: "
                 "back)", only, n, ran, ok, x->tune.cancelled ? "t: run again   " : "",
                 x->tune_search ? "" : "S: add the search   ");
    /* the config column as wide as its longest label ("ZBVZeroBubble-8-16" pushed the rest
     * out of their columns), as far as the width leaves room for the others (53 cells) */
    int cw = 14, room = g->w - 2 - 53;
    for (int i = 0; i < n; i++) {
        char label[48];
        tune_label(&x->tune.cand[order[i]], label, sizeof label);
        cw = (int)strlen(label) > cw ? (int)strlen(label) : cw;
    }
    cw = cw > room && room >= 14 ? room : cw;
    cells_printf(g, 1, top + 1, g->w - 2, PAL_TEXT_DIM, PAL_BG, CELL_UNDERLINE,
                 "%4s  %-*s %-6s %4s %10s %10s %10s  %s", "rank", cw, "config", "ckpt", "dp",
                 x->cfg.unit.enabled ? "samples/t" : "samples/s", "iter", "peak mem", "");
    int rows = height - 3; /* the last row explains the selected row's label */
    int first = x->tune_sel >= rows ? x->tune_sel - rows + 1 : 0;
    x->list_first = first;
    for (int r = 0; r < rows && first + r < n; r++) {
        const struct tune_candidate *k = &x->tune.cand[order[first + r]];
        char label[48], mem[32], note[300];
        tune_label(k, label, sizeof label);
        if (x->cfg.unit.enabled)
            snprintf(mem, sizeof mem, "%.3g", k->peak_mem);
        else
            str_format_bytes(k->peak_mem, mem, sizeof mem);
        if (k->status == TUNE_OK)
            snprintf(note, sizeof note, "%s", k->pareto ? "pareto" : "");
        else if (k->status == TUNE_OOM)
            snprintf(note, sizeof note, "out of memory on device %d", k->oom_device);
        else
            snprintf(note, sizeof note, "%s", k->why);
        bool sel = first + r == x->tune_sel;
        enum pal ink = k->status == TUNE_OK ? PAL_TEXT : PAL_TEXT_DIM;
        /* A candidate that was never simulated (invalid, not run) has no figures; an OOM one
         * has. iter: per iteration of the global batch, so it compares across dp. */
        char tput[32] = "-", step[32] = "-";
        if (k->status == TUNE_OK)
            explore_fmt_rate(x, k->throughput, tput, sizeof tput);
        if (k->status == TUNE_OK || k->status == TUNE_OOM) { /* seconds, or t */
            explore_fmt_time(x, k->iter_time * (x->cfg.unit.enabled ? 1 : 1e6), step,
                             sizeof step);
        } else {
            snprintf(mem, sizeof mem, "-");
        }
        cells_printf(g, 1, top + 2 + r, g->w - 2, ink, PAL_BG, sel ? CELL_REVERSE : 0,
                     "%4d  %-*.*s %-6s %4d %10s %10s %10s  %s", first + r + 1, cw, cw, label,
                     tune_ckpt_name(k), k->dp, tput, step, mem, note);
    }
    if (n > 0 && x->tune_sel < n) {
        const struct tune_candidate *k = &x->tune.cand[order[x->tune_sel]];
        char label[48], chunks[96] = "";
        tune_label(k, label, sizeof label);
        if (config_scheme_uses_chunks(k->scheme))
            snprintf(chunks, sizeof chunks, ", %d chunks", k->chunks);
        if (k->tp > 1)
            snprintf(chunks + strlen(chunks), sizeof chunks - strlen(chunks), ", tp %d", k->tp);
        snprintf(chunks + strlen(chunks), sizeof chunks - strlen(chunks), "%s%s",
                 k->sp ? ", sequence parallel" : "", k->distopt ? ", distributed optimizer" : "");
        cells_printf(g, 1, top + height - 1, g->w - 2, PAL_TEXT_DIM, PAL_BG, 0,
                     "%s (scheme-pp-mbs%s%s%s%s): %s, pp %d, dp %d, micro-batch size %d%s; ckpt %s; "
                     "iter: one iteration of the global batch, all dp replicas",
                     label,
                     config_scheme_uses_chunks(k->scheme) ? "xchunks" : "", k->tp > 1 ? "-tT" : "",
                     k->sp ? "-sp" : "", k->distopt ? "-do" : "",
                     config_scheme_name(k->scheme), k->pp,
                     k->dp, k->mbs, chunks,
                     k->search ? "search = the schedule search under the cap (search)"
                     : k->ckpt ? "mario = Mario's passes (prepose)"
                               : "off = as scheduled (base)");
    }
    free(order);
}
