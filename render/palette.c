/* render/palette.c: one table of colours, indexed by role. Ops use the Okabe-Ito palette
 * (blue #0072B2, sky blue #56B4E9, orange #E69F00, bluish green #009E73, reddish purple
 * #CC79A7, vermillion #D55E00), which keeps forward, recompute and backward apart for
 * readers with deuteranopia or protanopia; B is a lighter tint of BW's green. The critical
 * path takes the set's black: under every simulated colour-vision deficiency it stays further
 * from each op fill than any other colour does (tests/unit/test_palette checks every pair). */
#include <config.h>
#include "render/palette.h"

#include <math.h>
#include <stdio.h>

static const struct {
    const char *name;
    struct rgb rgb;
} palette_table[PAL__COUNT] = {
    [PAL_FW] = {"FW", {0x00, 0x72, 0xb2}},
    [PAL_CFW] = {"CFW", {0x56, 0xb4, 0xe9}},
    [PAL_RC] = {"RC", {0xe6, 0x9f, 0x00}},
    [PAL_BW] = {"BW", {0x00, 0x9e, 0x73}},
    [PAL_B] = {"B", {0x7f, 0xcf, 0xb0}},
    [PAL_W] = {"W", {0xcc, 0x79, 0xa7}},
    [PAL_SYNC] = {"sync", {0x8c, 0x8c, 0x8c}},
    [PAL_COMM] = {"comm", {0x44, 0x44, 0x44}},
    [PAL_BUBBLE] = {"bubble", {0xe4, 0xe4, 0xe4}},
    [PAL_MEM_STATIC] = {"mem-static", {0xa6, 0xa6, 0xa6}},
    [PAL_MEM_DYN] = {"mem-dyn", {0x00, 0x72, 0xb2}},
    [PAL_MEM_OVER] = {"mem-over", {0xd5, 0x5e, 0x00}},
    [PAL_CAP] = {"cap", {0x20, 0x20, 0x20}},
    [PAL_TEXT] = {"text", {0x1a, 0x1a, 0x1a}},
    [PAL_TEXT_DIM] = {"text-dim", {0x60, 0x60, 0x60}},
    [PAL_AXIS] = {"axis", {0x40, 0x40, 0x40}},
    [PAL_GRID] = {"grid", {0xdc, 0xdc, 0xdc}},
    [PAL_ROW] = {"row", {0xf6, 0xf6, 0xf6}},
    [PAL_BG] = {"bg", {0xff, 0xff, 0xff}},
    [PAL_DEFAULT] = {"default", {0xff, 0xff, 0xff}}, /* a page painter has only the page */
    [PAL_CRIT] = {"crit", {0x00, 0x00, 0x00}},
};

struct rgb palette_rgb(enum pal p)
{
    if ((unsigned)p >= PAL__COUNT)
        p = PAL_TEXT;
    return palette_table[p].rgb;
}

char *palette_hex(enum pal p, char buf[8])
{
    struct rgb c = palette_rgb(p);
    snprintf(buf, 8, "#%02x%02x%02x", c.r, c.g, c.b);
    return buf;
}

const char *palette_name(enum pal p)
{
    return (unsigned)p < PAL__COUNT ? palette_table[p].name : "?";
}

enum pal palette_of_op(enum op op)
{
    switch (op) {
    case OP_FW: return PAL_FW;
    case OP_CFW: return PAL_CFW;
    case OP_RC: return PAL_RC;
    case OP_BW: return PAL_BW;
    case OP_B: return PAL_B;
    case OP_W: return PAL_W;
    case OP_SA:
    case OP_RA:
    case OP_SG:
    case OP_RG: return PAL_COMM;
    case OP_OF:
    case OP_RL: return PAL_COMM; /* transfers, as the send -> receive marks */
    default: return PAL_SYNC;
    }
}

/* WCAG relative luminance of an sRGB channel value. */
static double palette_lin(unsigned char v)
{
    double c = v / 255.0;
    return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

bool palette_is_dark(enum pal p)
{
    struct rgb c = palette_rgb(p);
    double y = 0.2126 * palette_lin(c.r) + 0.7152 * palette_lin(c.g) + 0.0722 * palette_lin(c.b);
    /* White ink wins on contrast (WCAG ratio) when (1.05) / (y + 0.05) > (y + 0.05) / 0.05,
     * i.e. below y = 0.179; ink luminances are taken as 1 (white) and ~0 (PAL_TEXT). */
    return y < 0.179;
}

enum pal palette_text_on(enum pal fill)
{
    return palette_is_dark(fill) ? PAL_BG : PAL_TEXT;
}

static int palette_dist(struct rgb a, int r, int g, int b)
{
    return (a.r - r) * (a.r - r) + (a.g - g) * (a.g - g) + (a.b - b) * (a.b - b);
}

int palette_nearest_256(struct rgb c)
{
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    int best = 16, best_d = 1 << 30;
    for (int i = 0; i < 216; i++) {
        int d = palette_dist(c, level[i / 36], level[(i / 6) % 6], level[i % 6]);
        if (d < best_d)
            best = 16 + i, best_d = d;
    }
    for (int i = 0; i < 24; i++) {
        int v = 8 + 10 * i, d = palette_dist(c, v, v, v);
        if (d < best_d)
            best = 232 + i, best_d = d;
    }
    return best;
}

int palette_nearest_ansi(struct rgb c, int n)
{
    static const int ansi[16][3] = {
        {0, 0, 0},       {205, 0, 0},   {0, 205, 0},   {205, 205, 0},   {0, 0, 238},
        {205, 0, 205},   {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0},
        {0, 255, 0},     {255, 255, 0}, {92, 92, 255}, {255, 0, 255},   {0, 255, 255},
        {255, 255, 255},
    };
    int best = 0, best_d = 1 << 30;
    for (int i = 0; i < n && i < 16; i++) {
        int d = palette_dist(c, ansi[i][0], ansi[i][1], ansi[i][2]);
        if (d < best_d)
            best = i, best_d = d;
    }
    return best;
}
