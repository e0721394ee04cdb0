/* render/palette.c: one table of colours, indexed by role. Ops use the Okabe-Ito palette
 * (blue #0072B2, sky blue #56B4E9, orange #E69F00, bluish green #009E73, reddish purple
 * #CC79A7, vermillion #D55E00), which keeps forward, recompute and backward apart for
 * readers with deuteranopia or protanopia; B is a lighter tint of BW's green. */
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
    [PAL_CRIT] = {"crit", {0xf0, 0xe4, 0x42}},
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
