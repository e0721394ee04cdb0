/* render/palette.h: the semantic colours every painter uses (htop's ColorElements): one enum
 * of roles, one RGB table. Op colours come from the Okabe-Ito set, which stays apart under
 * the common colour-vision deficiencies; greys carry everything that is not an op. */
#ifndef MT_RENDER_PALETTE_H
#define MT_RENDER_PALETTE_H

#include <stdbool.h>

#include "sim/plan/plan.h"

enum pal {
    PAL_FW,         /* forward: blue */
    PAL_CFW,        /* checkpointed forward: sky blue */
    PAL_RC,         /* recompute: orange */
    PAL_BW,         /* backward: bluish green */
    PAL_B,          /* split backward, input gradient: light green */
    PAL_W,          /* split backward, weight gradient: reddish purple */
    PAL_SYNC,       /* allreduce and optimizer step: mid grey */
    PAL_COMM,       /* send -> receive marks: dark grey */
    PAL_BUBBLE,     /* idle device time: light grey (hatched by painters) */
    PAL_MEM_STATIC, /* weights, gradients, optimizer state: grey */
    PAL_MEM_DYN,    /* activations and checkpoints: blue */
    PAL_MEM_OVER,   /* memory above the cap: vermillion (the palette's red) */
    PAL_CAP,        /* the memory cap line: near black */
    PAL_TEXT,       /* ink */
    PAL_TEXT_DIM,   /* secondary ink: lane labels, units */
    PAL_AXIS,       /* axes and ticks */
    PAL_GRID,       /* faint gridlines */
    PAL_ROW,        /* alternate device row band */
    PAL_BG,         /* page, and the thin borders between adjacent boxes */
    PAL_DEFAULT,    /* terminal cells only: the terminal's own colour (curses -1), not the page's
                     * white; what an empty Gantt cell shows on a light or a dark theme */
    PAL_CRIT,       /* the critical path (terminal): Okabe-Ito black, the set's one colour that no
                     * op fill takes; yellow sat beside RC's orange (8 colours: the same) */
    PAL__COUNT
};

struct rgb {
    unsigned char r, g, b;
};

struct rgb palette_rgb(enum pal p);
/* "#0072b2" into buf (8 bytes). Returns buf. */
char *palette_hex(enum pal p, char buf[8]);
/* Short name used as a CSS class and in legends: "FW", "bubble", "mem-static". */
const char *palette_name(enum pal p);
/* The colour of a compute (or AR/OS) instruction. */
enum pal palette_of_op(enum op op);
/* The ink readable on a fill: PAL_TEXT or PAL_BG. */
enum pal palette_text_on(enum pal fill);
/* True for fills dark enough to need light ink. */
bool palette_is_dark(enum pal p);
/* The terminal colour a painter of cells uses for c: the nearest xterm-256 colour (the
 * 6x6x6 cube or the grey ramp, 16..255), or the nearest of the first n (8 or 16) ANSI
 * colours, as xterm draws them. */
int palette_nearest_256(struct rgb c);
int palette_nearest_ansi(struct rgb c, int n);

#endif
