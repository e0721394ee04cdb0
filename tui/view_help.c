/* tui/view_help.c: the key reference (F1 or ?), any key returns. */
#include <config.h>
#include "tui/explore.h"

#include "render/paint_cells.h"

static const char *const help_lines[] = {
    "mario-tui explore: keys",
    "",
    "  Left/Right, h/l     previous / next instruction on the lane (the view follows)",
    "  Up/Down, k/j        previous / next lane (device, part)",
    "  + / -   0           zoom in / out around the cursor;  fit the whole step",
    "  H / L, PgUp/PgDn    pan half a screen",
    "  n / p               next / previous pass step: base, ckpt, overlap, redundancy, prepose",
    "  c                   critical path on / off (a yellow thread through its boxes)",
    "  /                   search: 12 (micro-batch), BW (op), RC3 (op and micro-batch)",
    "  s                   scheme: V X W GPipe Async PipeDream ZB-H1 ZB-H2 ZB-V ZB-W DualPipeV",
    "  i / I  u / U        Async, PipeDream: fewer / more iterations; update interval",
    "  d / D               fewer / more devices (pp)",
    "  m / M               fewer / more micro-batches",
    "  b / B               halve / double the micro-batch size (same global batch)",
    "  v / V               fewer / more chunks (W, ZB-W)",
    "  [ / ]               lower / raise the memory cap (x 1.25, in whole MiB)",
    "  t / a               the tuner / input-aware length buckets; Enter loads one",
    "  e                   export: file.json (plan), file.trace.json (Perfetto),",
    "                      file.svg / file.pdf / file.png (picture of the shown step)",
    "  T / o               load a measured trace (mario-tui run --trace-out, Kineto) / show",
    "                      or hide its row under each lane",
    "  mouse               click: select an instruction, a lane, a pass step, a tuner row (again:",
    "                      load it);  wheel: zoom around the pointer;  drag: pan",
    "  ?, F1               this help;  q, F10  quit",
    "Edits are all or nothing: a value the scheme refuses is stepped over to the nearest it allows.",
    "Ops: FW forward, CFW checkpointed forward, RC recompute, BW backward, B and W its input-",
    "and weight-gradient halves (split backward), AR allreduce, OS optimizer step; RA/RG/SA/SG",
    "receive/send activations/gradients. d0.1 = device 0, chunk 1. * = changed by the shown",
    "pass; underlined with a caret on the axis = selected; · = idle; ░▒ = ops finer than a cell.",
    "Bars: grey static, blue activations, red over the cap, │ the cap. Header: OOM = over it.",
};

void view_help_draw(struct explore *x, struct cells *g)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]);
    int top = (g->h - n) / 2 > 1 ? (g->h - n) / 2 : 1;
    for (int i = 0; i < n; i++)
        cells_text(g, 2, top + i, g->w - 4, help_lines[i], PAL_TEXT, PAL_BG,
                   i == 0 ? CELL_BOLD : 0);
}
