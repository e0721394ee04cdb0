/* tui/view_help.c: the key reference (F1 or ?), any key returns. Scheme names come from the
 * scheme registry (a new scheme shows up here by its record): HELP_CYCLE, HELP_ASYNC and
 * HELP_CHUNKS in a line stand for those of the `s` cycle, the asynchronous ones and those whose
 * chunks v/V change. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>
#include <string.h>

#include "render/paint_cells.h"

#define HELP_CYCLE "\x01"
#define HELP_ASYNC "\x02"
#define HELP_CHUNKS "\x03"

static const char *const help_lines[] = {
    "mario-tui explore: keys",
    "",
    "  Left/Right, h/l     previous / next instruction on the lane (the view follows)",
    "  Up/Down, k/j        previous / next lane (device, part)",
    "  + / -   0           zoom in / out around the cursor;  fit the whole step",
    "  H / L, PgUp/PgDn    pan half a screen",
    "  n / p               next / previous step: base ckpt overlap redundancy prepose search"
    " (run when first shown; Esc stops it)",
    "  O                   offload (OF/RL) on / off in the search and the tuner's S",
    "  c                   critical path on / off (a black thread through its boxes)",
    "  *                   change marks on / off (off at first where most boxes changed)",
    "  /                   search: 12 (micro-batch), BW (op), RC3 (op and micro-batch)",
    "  s                   scheme: " HELP_CYCLE,
    "  i / I  u / U        " HELP_ASYNC ": fewer / more iterations; update interval",
    "  d / D               fewer / more devices (pp)",
    "  m / M               fewer / more micro-batches (by one up to 256, then 320, 384, 448, 512, 640, ...)",
    "  b / B               halve / double the micro-batch size (same global batch)",
    "  v / V               fewer / more chunks (" HELP_CHUNKS ")",
    "  [ / ]               lower / raise the memory cap (x 1.25, in whole MiB; 0.25 M_θ with"
    " unit costs)",
    "  t / a               the tuner (S in it: the search as a ckpt mode too; f: one scheme"
    " at a time) / input-aware buckets; Enter loads one",
    "                      Esc while the tuner runs: stop it at once, keeping what ran (t shows it)",
    "  e                   export: file.json (plan), file.trace.json (Perfetto),",
    "                      file.svg / file.pdf / file.png (picture of the shown step)",
    "  T / o               load a measured trace (mario-tui run --trace-out, Kineto) / show",
    "                      or hide its row under each lane",
    "  r                   that row: measured or replayed (every measured duration simulated,"
    " as compare does)",
    "  mouse               click: select an instruction, a lane, a pass step, a tuner row (again:",
    "                      load it);  wheel: zoom around the pointer;  drag: pan",
    "  ?, F1               this help;  q, F10  quit",
    "Edits are all or nothing: a value the scheme refuses is stepped over to the nearest it allows.",
    "An edit shows its base at once, the passes behind it (Esc stops them, keeping the steps made).",
    "",
    "Ops: FW forward, CFW checkpointed forward, RC recompute, BW backward, B and W its input-",
    "and weight-gradient halves (split backward), AR allreduce, OS optimizer step; RA/RG/SA/SG",
    "receive/send activations/gradients. d0.1 = device 0, chunk 1. * = changed by the shown",
    "pass; underlined with a caret on the axis = selected; · = idle; ░▒ = ops finer than a cell.",
    "Offload: a host row per device, ▀ OF, ▄ RL, █ both; its bar host memory.",
    "Bars: grey static, blue activations, orange-red over the cap, │ the cap. Header: bound = the lower",
    "bound of any schedule of the drawn plan's work, gap = its step over it; replay = the replayed",
    "step and its error against the measured one; OOM = over the cap.",
};

/* line with the registry's scheme names in place of HELP_CYCLE, HELP_ASYNC, HELP_CHUNKS. */
static void help_expand(const char *line, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *c = line; *c && len + 1 < n; c++) {
        if (*c != HELP_CYCLE[0] && *c != HELP_ASYNC[0] && *c != HELP_CHUNKS[0]) {
            out[len++] = *c;
            out[len] = '\0';
            continue;
        }
        char names[512];
        explore_scheme_names(*c == HELP_CYCLE[0]   ? SCHEMES_CYCLE
                             : *c == HELP_ASYNC[0] ? SCHEMES_ASYNC
                                                   : SCHEMES_CHUNKS,
                             *c == HELP_CYCLE[0] ? " " : ", ", names, sizeof names);
        len += (size_t)snprintf(out + len, n - len, "%s", names);
        if (len >= n)
            len = n - 1;
    }
}

/* The help wrapped to the width (a key's description goes on under its column, the prose at
 * the end as paragraphs) and, when it is taller than the screen, from line x->help_top on
 * (j/k scroll it, tui/keys.c). */
void view_help_draw(struct explore *x, struct cells *g)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]);
    /* a wrapped line holds a whole screen's width (200 columns and more: 160 bytes cut the
     * prose at 200, issue 41 item 6) */
    static char wrapped[160][512];
    int width = g->w - 4 > 20 ? g->w - 4 : 20;
    if (width > (int)sizeof wrapped[0] - 1)
        width = (int)sizeof wrapped[0] - 1;
    int m = 0;
    for (int i = 0; i < n && m < 160; i++) {
        char para[1024];
        help_expand(help_lines[i], para, sizeof para);
        bool key_line = help_lines[i][0] == ' ';
        while (!key_line && i > 0 && help_lines[i][0] != '\0' && i + 1 < n &&
               help_lines[i + 1][0] != ' ' && help_lines[i + 1][0] != '\0' &&
               strlen(para) + strlen(help_lines[i + 1]) + 2 < sizeof para) {
            i++; /* prose: one paragraph */
            snprintf(para + strlen(para), sizeof para - strlen(para), " %s", help_lines[i]);
        }
        const char *s = para;
        int indent = key_line ? 22 : 0;
        bool first = true;
        do {
            int pad = first ? 0 : indent, room = width - pad, len = (int)strlen(s);
            int cut = len;
            if (len > room) { /* the last space that fits */
                cut = room;
                while (cut > 0 && s[cut] != ' ')
                    cut--;
                if (cut <= 0)
                    cut = room;
            }
            snprintf(wrapped[m], sizeof wrapped[m], "%*s%.*s", pad, "", cut, s);
            m++;
            s += cut;
            while (*s == ' ')
                s++;
            first = false;
        } while (*s && m < 160);
    }
    int rows = g->h - 3; /* between the title, a row for the scroll hint, and the status */
    for (int y = 1; y <= g->h - 2; y++)
        for (int cx = 0; cx < g->w; cx++)
            cells_put(g, cx, y, ' ', PAL_TEXT, PAL_BG, 0);
    if (x->help_top > m - rows)
        x->help_top = m - rows > 0 ? m - rows : 0;
    int top = m <= rows ? 2 + (rows - m) / 2 : 2;
    for (int i = 0; i < rows && x->help_top + i < m; i++)
        cells_text(g, 2, top + i, g->w - 4, wrapped[x->help_top + i], PAL_TEXT, PAL_BG,
                   x->help_top + i == 0 ? CELL_BOLD : 0);
    if (m > rows) /* more above or below: say how to see it */
        cells_printf(g, 2, 1, g->w - 4, PAL_TEXT_DIM, PAL_BG, CELL_BOLD,
                     "lines %d-%d of %d   j/k, PgDn/PgUp: scroll   any other key: back",
                     x->help_top + 1, x->help_top + rows < m ? x->help_top + rows : m, m);
}
