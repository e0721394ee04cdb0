/* tests/unit/test_validate.c: the validator's structural errors (sim/plan/validate.c), each on a
 * hand-edited 2-device, 2-micro-batch plan whose lists are known by hand:
 *   V      device 0: FW0 SA0 FW1 SA1 RG0 BW0 RG1 BW1 OS
 *          device 1: RA0 FW0 BW0 SG0 RA1 FW1 BW1 SG1 OS
 *   ZB-H1  device 0: FW0 SA0 FW1 SA1 RG0 B0 W0 RG1 B1 W1 OS
 * Each message names the device, the position and the instruction. A missing or extra message
 * is named whichever side lacks it, as is one out of the last stage. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/recv_order.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/plan/validate.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static struct plan *build(enum scheme_id s)
{
    struct config c = test_unit_config(s, 2, 2, 1, 2, 1);
    struct plan *p = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK_EQ_INT(validate_plan(p, &e), MT_OK);
    return p;
}

/* Replaces the instruction at (dev, pos) with in. */
static void set(struct plan *p, int dev, int pos, struct instr in)
{
    plan_remove(p, dev, pos);
    plan_insert(p, dev, pos, in);
}

/* p fails validation with exactly want; frees p. */
static void expect(struct plan *p, const char *want)
{
    struct mt_err e = {0};
    CHECK_EQ_INT(validate_plan(p, &e), MT_EINFEASIBLE);
    CHECK(strcmp(e.msg, want) == 0);
    if (strcmp(e.msg, want) != 0)
        fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", e.msg, want);
    plan_free(p);
}

static void test_structure_errors(void)
{
    struct plan *p = build(SCHEME_V);
    CHECK_EQ_INT(plan_at(p, 1, 2)->op, OP_BW);
    plan_move(p, 1, 2, 1); /* device 1: RA0 BW0 FW0 */
    expect(p, "device 1, instruction 1 (BW0): backward before its forward (FW0 at 2)");

    p = build(SCHEME_V);
    struct instr fw1 = *plan_at(p, 0, 2);
    fw1.op = OP_CFW;
    set(p, 0, 2, fw1);
    expect(p, "device 0, instruction 2 (CFW1): checkpointed forward without a recompute");

    p = build(SCHEME_V);
    plan_insert(p, 0, 5, (struct instr){OP_RC, 0, 0, 0, -1, 0, 0, 0}); /* RC0 before BW0 */
    expect(p, "device 0, instruction 0 (FW0): recompute of a forward that kept its activations");

    p = build(SCHEME_V);
    struct instr fw0 = *plan_at(p, 0, 0);
    fw0.op = OP_CFW;
    set(p, 0, 0, fw0);
    plan_insert(p, 0, 6, (struct instr){OP_RC, 0, 0, 0, -1, 0, 0, 0}); /* RC0 after BW0 (at 5) */
    expect(p, "device 0, instruction 6 (RC0): recompute outside its forward (0) .. backward (5)");

    p = build(SCHEME_ZBH1);
    CHECK_EQ_INT(plan_at(p, 0, 6)->op, OP_W);
    plan_remove(p, 0, 6);
    expect(p, "device 0, instruction 5 (B0): split backward B without its W");

    p = build(SCHEME_V);
    CHECK_EQ_INT(plan_at(p, 0, 8)->op, OP_OS);
    plan_move(p, 0, 8, 5); /* OS before BW0 */
    expect(p, "device 0, instruction 5 (OS): before the last backward of its stage (at 8)");
}

/* Sends and receives: the first one unpaired in list order is named. */
static void test_pairing_errors(void)
{
    struct plan *p = build(SCHEME_V);
    CHECK_EQ_INT(plan_at(p, 0, 6)->op, OP_RG);
    plan_remove(p, 0, 6); /* RG1 gone: device 1's SG1 (at 7) has no receive */
    expect(p, "device 1, instruction 7 (SG1): no matching RG1 on device 0");

    p = build(SCHEME_V);
    struct instr sa0 = *plan_at(p, 0, 1);
    sa0.peer = 0; /* SA0 names the wrong device: it is the first unpaired */
    set(p, 0, 1, sa0);
    expect(p, "device 0, instruction 1 (SA0): no matching RA0 on device 0");

    p = build(SCHEME_V);
    struct instr ra1 = *plan_at(p, 1, 4);
    ra1.peer = 1; /* a receive naming the wrong device: its send is found, but not named back */
    set(p, 1, 4, ra1);
    expect(p, "device 0, instruction 3 (SA1): no matching RA1 on device 1");

    /* every send paired, one receive more than the sends: the receive is named */
    p = build(SCHEME_V);
    CHECK_EQ_INT(plan_at(p, 0, 3)->op, OP_SA);
    plan_remove(p, 0, 3); /* SA1 gone: device 1's RA1 (at 4) has no send */
    expect(p, "device 1, instruction 4 (RA1): no matching SA1 on device 0");

    /* a send out of the last stage, where no stage follows to receive it */
    p = build(SCHEME_V);
    plan_insert(p, 1, 3, (struct instr){OP_SA, 0, 0, 1, 0, 0, 0, 0}); /* after BW0, to device 0 */
    expect(p, "device 1, instruction 3 (SA0): no matching RA0 on device 0");

    /* a receive moved after the forward that needs it: the run names the deadlock */
    p = build(SCHEME_V);
    struct instr ra0 = *plan_at(p, 1, 0);
    plan_remove(p, 1, 0);
    plan_insert(p, 1, 4, ra0); /* device 1: FW0 BW0 SG0 RA0 RA1 ... */
    expect(p, "deadlock: device 0 stalls at instruction 4 (RG0, stage 0) waiting for SG0 on "
              "device 1; device 1 stalls at instruction 0 (FW0, stage 1) waiting for RA0 on "
              "device 1");

    /* receives crossed, each still before its forward: paired and deadlock-free, so valid;
     * the order a tagless channel needs is sim/core/recv_order.h's to name (SA0 at 1 on
     * device 0 against RA1 at 0 on device 1), not the validator's */
    p = build(SCHEME_V);
    struct instr crossed = *plan_at(p, 1, 4);
    plan_remove(p, 1, 4);
    plan_insert(p, 1, 0, crossed); /* device 1: RA1 RA0 FW0 BW0 SG0 FW1 ... */
    struct mt_err e = {0};
    CHECK_EQ_INT(validate_plan(p, &e), MT_OK);
    int a = -1, b = -1, sp = -1, rp = -1;
    CHECK(plan_receive_mismatch(p, &a, &b, &sp, &rp));
    CHECK(a == 0 && b == 1 && sp == 1 && rp == 0);
    plan_free(p);
}

int main(void)
{
    test_structure_errors();
    test_pairing_errors();
    return check_report("test_validate");
}
