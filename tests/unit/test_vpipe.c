/* tests/unit/test_vpipe.c: send/receive pairing (sim/core/vpipe.h) on hand-worked placements of
 * V, X (both Chimera pipelines) and W, and on every send of every scheme's built plan: its
 * partner is the matching receive on the device the send names as its peer. */
#include <config.h>

#include <stdio.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static void check_peer_rule(void)
{
    enum op op = OP_FW;
    int stage = -7;
    CHECK(vpipe_peer(OP_SA, 2, &op, &stage));
    CHECK(op == OP_RA && stage == 3);
    CHECK(vpipe_peer(OP_RA, 3, &op, &stage));
    CHECK(op == OP_SA && stage == 2);
    CHECK(vpipe_peer(OP_SG, 2, &op, &stage));
    CHECK(op == OP_RG && stage == 1);
    CHECK(vpipe_peer(OP_RG, 1, &op, &stage));
    CHECK(op == OP_SG && stage == 2);
    op = OP_FW, stage = -7;
    CHECK(!vpipe_peer(OP_BW, 2, &op, &stage));
    CHECK(op == OP_FW && stage == -7);
    CHECK(vpipe_is_send(OP_SG) && !vpipe_is_send(OP_RG) && vpipe_is_recv(OP_RA));
    CHECK(!vpipe_is_p2p(OP_FW));
}

/* The (device, part) of instruction (op, mb, stage)'s partner under geometry g. */
static void check_place(const struct plan_geom *g, enum op op, int mb, int stage, int dev,
                        int part)
{
    struct instr in = {op, mb, 0, stage, -1, 0, 0, 0};
    int d = -1, p = -1;
    CHECK(vpipe_peer_place(g, &in, &d, &p));
    CHECK_EQ_INT(d, dev);
    CHECK_EQ_INT(p, part);
}

static void check_hand_places(void)
{
    struct plan_geom v = {SCHEME_V, 4, 1, 4, 4};
    check_place(&v, OP_SA, 0, 0, 1, 0);
    check_place(&v, OP_RA, 2, 3, 2, 0);
    check_place(&v, OP_SG, 1, 3, 2, 0);
    check_place(&v, OP_RG, 1, 0, 1, 0);
    struct instr last = {OP_SA, 0, 0, 3, -1, 0, 0, 0};
    int d, p;
    CHECK(!vpipe_peer_place(&v, &last, &d, &p));

    /* Chimera: the down pipeline runs stage s on device s (part 0), the up one on D-1-s
     * (part 1), so an up micro-batch sends its activations to a lower device. */
    struct plan_geom x = {SCHEME_X, 4, 2, 4, 4};
    int down = -1, up = -1;
    for (int mb = 0; mb < x.mbs; mb++)
        *(vpipe_mb_part(&x, mb) ? &up : &down) = mb;
    CHECK(down >= 0 && up >= 0);
    check_place(&x, OP_SA, down, 0, 1, 0);
    check_place(&x, OP_SA, up, 0, 2, 1);
    check_place(&x, OP_SA, up, 2, 0, 1);
    check_place(&x, OP_SG, up, 1, 3, 1);
    check_place(&x, OP_RA, up, 3, 1, 1);

    /* Interleaved, 2 chunks on 4 devices: stage s on device s mod 4, chunk s / 4. */
    struct plan_geom w = {SCHEME_W, 4, 2, 8, 4};
    check_place(&w, OP_SA, 0, 3, 0, 1);
    check_place(&w, OP_SA, 0, 4, 1, 1);
    check_place(&w, OP_SG, 0, 4, 3, 0);
    check_place(&w, OP_RA, 0, 4, 3, 0);
}

/* vpipe_wrap on hand-placed instructions: ops and peers in order, mb, part, stage and step
 * kept on the messages. */
static void check_wrap_one(const struct plan_geom *g, int dev, struct instr in, int n,
                           const enum op *ops, const int *peers)
{
    struct instr out[VPIPE_WRAP_MAX];
    int got = vpipe_wrap(g, dev, in, out);
    CHECK_EQ_INT(got, n);
    for (int i = 0; i < n && i < got; i++) {
        CHECK_EQ_INT(out[i].op, ops[i]);
        CHECK_EQ_INT(out[i].peer, peers[i]);
        CHECK(out[i].mb == in.mb && out[i].part == in.part && out[i].stage == in.stage &&
              out[i].step == in.step);
    }
}

static void check_wrap(void)
{
    struct plan_geom v = {SCHEME_V, 4, 1, 4, 8};
    check_wrap_one(&v, 1, (struct instr){OP_FW, 2, 0, 1, -1, 3, 0, 0}, 3,
                   (enum op[]){OP_RA, OP_FW, OP_SA}, (int[]){0, -1, 2});
    check_wrap_one(&v, 0, (struct instr){OP_BW, 0, 0, 0, -1, 0, 0, 0}, 2,
                   (enum op[]){OP_RG, OP_BW}, (int[]){1, -1});
    check_wrap_one(&v, 3, (struct instr){OP_B, 5, 0, 3, -1, 0, 0, 0}, 2,
                   (enum op[]){OP_B, OP_SG}, (int[]){-1, 2});
    check_wrap_one(&v, 3, (struct instr){OP_CFW, 5, 0, 3, -1, 0, 2, 0}, 2,
                   (enum op[]){OP_RA, OP_CFW}, (int[]){2, -1});
    /* not forwards or backwards: alone */
    check_wrap_one(&v, 2, (struct instr){OP_RC, 1, 0, 2, -1, 0, 0, 0}, 1, (enum op[]){OP_RC},
                   (int[]){-1});
    check_wrap_one(&v, 2, (struct instr){OP_W, 1, 0, 2, -1, 0, 0, 0}, 1, (enum op[]){OP_W},
                   (int[]){-1});
    /* interleaved, 2 chunks on 4 devices: stage 3's next is stage 4 on device 0 */
    struct plan_geom w = {SCHEME_W, 4, 2, 8, 4};
    check_wrap_one(&w, 3, (struct instr){OP_FW, 0, 0, 3, -1, 0, 0, 0}, 3,
                   (enum op[]){OP_RA, OP_FW, OP_SA}, (int[]){2, -1, 0});
    /* a V on 2 devices: stages 1 and 2 both on device 1, so no message between them */
    struct plan_geom zv = {SCHEME_ZBV, 2, 2, 4, 4};
    check_wrap_one(&zv, 1, (struct instr){OP_FW, 0, 0, 1, -1, 0, 0, 0}, 2,
                   (enum op[]){OP_RA, OP_FW}, (int[]){0, -1});
    check_wrap_one(&zv, 1, (struct instr){OP_B, 0, 1, 2, -1, 0, 0, 0}, 2,
                   (enum op[]){OP_RG, OP_B}, (int[]){0, -1});
}

/* Every send of a built plan pairs (vpipe_partner) with the receive vpipe_peer names, on the
 * device the send's peer field names, and that receive names the send's device back. */
static void check_built(enum scheme_id scheme, int D, int N)
{
    struct config c = test_unit_config(scheme, D, N, 1, 2, 1);
    if (scheme == SCHEME_W)
        c.chunks = 2;
    struct plan *p = NULL;
    struct vpipe_index *x = NULL;
    struct mt_err e = {0};
    int rc = scheme_build(&c, &p, &e);
    if (rc == MT_OK)
        rc = vpipe_index_build(p, &x, &e);
    if (rc != MT_OK) {
        fprintf(stderr, "%s D=%d N=%d: %s\n", config_scheme_name(scheme), D, N, e.msg);
        CHECK(0);
        plan_free(p);
        return;
    }
    int sends = 0;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *s = plan_at(p, d, i);
            if (!vpipe_is_send(s->op))
                continue;
            sends++;
            int id = vpipe_partner(p, x, plan_id(p, d, i)), rd = -1, ri = -1;
            CHECK(id >= 0);
            if (id < 0)
                continue;
            plan_locate_id(p, id, &rd, &ri);
            const struct instr *r = plan_at(p, rd, ri);
            enum op want = OP_FW;
            int stage = -1;
            vpipe_peer(s->op, s->stage, &want, &stage);
            CHECK(vpipe_is_recv(r->op) && r->op == want && r->stage == stage);
            CHECK_EQ_INT(r->mb, s->mb);
            CHECK_EQ_INT(rd, s->peer);
            CHECK_EQ_INT(r->peer, d);
            CHECK_EQ_INT(vpipe_partner(p, x, id), plan_id(p, d, i));
        }
    CHECK(sends > 0);
    vpipe_index_free(x);
    plan_free(p);
}

int main(void)
{
    check_peer_rule();
    check_hand_places();
    check_wrap();
    enum scheme_id schemes[] = {SCHEME_V, SCHEME_X, SCHEME_W, SCHEME_GPIPE, SCHEME_ASYNC,
                                SCHEME_PIPEDREAM};
    for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++) {
        check_built(schemes[k], 4, 8);
        check_built(schemes[k], 8, 16);
    }
    return check_report("test_vpipe");
}
