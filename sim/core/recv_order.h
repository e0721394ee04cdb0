/* sim/core/recv_order.h: receives in the order their sends were issued, per directed pair of
 * devices. NCCL (and any channel without tags) matches a pair's messages in issue order: a
 * device that receives micro-batch 3's activation before micro-batch 2's, when its peer sent
 * 2 first, would be handed the wrong message. V-shaped placements (ZB-V, DualPipeV) carry
 * activations and gradients of two stages over one pair and cross them. */
#ifndef MT_SIM_RECV_ORDER_H
#define MT_SIM_RECV_ORDER_H

#include "sim/plan/plan.h"

struct mt_err;

/* Moves receives earlier, never later, until every device receives from each peer in the
 * order that peer sends to it: a receive met before those sent ahead of it pulls them in just
 * before itself. With asynchronous sends this adds no wait: a message sent earlier on a pair
 * arrives no later than the one that needed it (equal latencies), so only the receive
 * buffers live longer. Compute instructions keep their order. Returns the number of receives
 * moved (0: the plan already matched), or -1 (*e set) when its dependencies cannot be
 * indexed; a send or receive without a partner stays where it is. */
int plan_match_receives(struct plan *p, struct mt_err *e);

/* The first directed pair (a -> b) whose receives on b do not come in a's send order, with
 * the positions of the mismatched send on a and receive on b; false when every pair matches.
 * A send without its receive (or the reverse) is a mismatch at that position. */
bool plan_receive_mismatch(const struct plan *p, int *a, int *b, int *send_pos, int *recv_pos);

#endif
