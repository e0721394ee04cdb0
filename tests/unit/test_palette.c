/* tests/unit/test_palette.c: the critical path's colour (PAL_CRIT) apart from every op fill
 * (issue 27 item 7: its yellow blended with RC's orange), for every reader and every terminal.
 * Each pair (PAL_CRIT, op colour) is compared in CIELAB (ΔE*ab, D65) as seen with normal
 * vision and under full protanopia, deuteranopia and tritanopia (the severity-1.0 matrices of
 * Machado, Oliveira and Fernandes 2009, applied to linear sRGB), and must stay at least
 * CVD_MIN_DE apart: a ΔE of 2.3 is a just-noticeable difference, 30 a different colour at a
 * glance. The old yellow fails it (ΔE 17 from RC under deuteranopia, 25 under protanopia).
 * On a terminal each palette entry becomes the nearest xterm-256 colour or the nearest of 8 or
 * 16 ANSI colours (tui/screen.c): there the critical path's colour must be another index
 * than every op's (the old yellow and RC were both ANSI yellow on 8 colours). */
#include <config.h>

#include <math.h>
#include <stdio.h>

#include "render/palette.h"
#include "tests/check.h"

#define CVD_MIN_DE 30.0

static const enum pal op_fills[] = {PAL_FW, PAL_CFW, PAL_RC, PAL_BW, PAL_B, PAL_W, PAL_SYNC};

/* normal, protan, deutan, tritan (Machado et al. 2009, severity 1.0) */
static const double cvd[4][3][3] = {
    {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216},
     {-0.003882, -0.048116, 1.051998}},
    {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413},
     {-0.011820, 0.042940, 0.968881}},
    {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602},
     {0.004733, 0.691367, 0.303900}},
};

static double srgb_to_linear(double v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
    return t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116;
}

/* c as seen under deficiency k, in CIELAB (D65). */
static void seen_lab(struct rgb c, int k, double lab[3])
{
    double lin[3] = {srgb_to_linear(c.r / 255.0), srgb_to_linear(c.g / 255.0),
                     srgb_to_linear(c.b / 255.0)};
    double s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = cvd[k][i][0] * lin[0] + cvd[k][i][1] * lin[1] + cvd[k][i][2] * lin[2];
        s[i] = s[i] < 0 ? 0 : s[i] > 1 ? 1 : s[i];
    }
    double X = 0.4124564 * s[0] + 0.3575761 * s[1] + 0.1804375 * s[2];
    double Y = 0.2126729 * s[0] + 0.7151522 * s[1] + 0.0721750 * s[2];
    double Z = 0.0193339 * s[0] + 0.1191920 * s[1] + 0.9503041 * s[2];
    double fx = lab_f(X / 0.95047), fy = lab_f(Y), fz = lab_f(Z / 1.08883);
    lab[0] = 116 * fy - 16;
    lab[1] = 500 * (fx - fy);
    lab[2] = 200 * (fy - fz);
}

static double delta_e(struct rgb a, struct rgb b, int k)
{
    double la[3], lb[3];
    seen_lab(a, k, la);
    seen_lab(b, k, lb);
    return sqrt((la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) +
                (la[2] - lb[2]) * (la[2] - lb[2]));
}

/* Known values first: white against black is ΔE 100 for every reader; the CVD matrices keep
 * greys grey (their rows sum to 1). */
static void test_lab_known(void)
{
    struct rgb white = {255, 255, 255}, black = {0, 0, 0}, grey = {0x8c, 0x8c, 0x8c};
    for (int k = 0; k < 4; k++) {
        CHECK_NEAR(delta_e(white, black, k), 100.0, 0.05);
        CHECK_NEAR(delta_e(grey, grey, k), 0.0, 1e-9);
        double lab[3];
        seen_lab(grey, k, lab);
        CHECK_NEAR(lab[1], 0.0, 0.5);
        CHECK_NEAR(lab[2], 0.0, 0.5);
    }
    /* the old critical yellow against RC's orange under deuteranopia: too close */
    struct rgb yellow = {0xf0, 0xe4, 0x42};
    CHECK(delta_e(yellow, palette_rgb(PAL_RC), 2) < CVD_MIN_DE);
}

static void test_crit_apart_under_cvd(void)
{
    struct rgb crit = palette_rgb(PAL_CRIT);
    for (size_t i = 0; i < sizeof op_fills / sizeof op_fills[0]; i++)
        for (int k = 0; k < 4; k++) {
            double de = delta_e(crit, palette_rgb(op_fills[i]), k);
            if (de < CVD_MIN_DE)
                fprintf(stderr, "crit vs %s under vision %d: ΔE %.1f\n",
                        palette_name(op_fills[i]), k, de);
            CHECK(de >= CVD_MIN_DE);
        }
}

/* The ops apart from each other too, as the terminal shows them with 256 colours. */
static void test_crit_apart_on_terminals(void)
{
    struct rgb crit = palette_rgb(PAL_CRIT);
    int c256 = palette_nearest_256(crit), c16 = palette_nearest_ansi(crit, 16);
    int c8 = palette_nearest_ansi(crit, 8);
    for (size_t i = 0; i < sizeof op_fills / sizeof op_fills[0]; i++) {
        struct rgb op = palette_rgb(op_fills[i]);
        CHECK(palette_nearest_256(op) != c256);
        CHECK(palette_nearest_ansi(op, 16) != c16);
        CHECK(palette_nearest_ansi(op, 8) != c8);
        for (size_t j = 0; j < i; j++)
            CHECK(palette_nearest_256(op) != palette_nearest_256(palette_rgb(op_fills[j])));
    }
    /* the quantizers on known points: xterm's cube corners and ANSI's own colours */
    CHECK_EQ_INT(palette_nearest_256((struct rgb){0, 0, 0}), 16);
    CHECK_EQ_INT(palette_nearest_256((struct rgb){255, 255, 255}), 231);
    CHECK_EQ_INT(palette_nearest_256((struct rgb){0x80, 0x80, 0x80}), 244);
    CHECK_EQ_INT(palette_nearest_ansi((struct rgb){205, 205, 0}, 8), 3);
    CHECK_EQ_INT(palette_nearest_ansi((struct rgb){255, 255, 0}, 16), 11);
    CHECK_EQ_INT(palette_nearest_ansi((struct rgb){255, 255, 0}, 8), 3);
}

int main(void)
{
    test_lab_known();
    test_crit_apart_under_cvd();
    test_crit_apart_on_terminals();
    return check_report("test_palette");
}
