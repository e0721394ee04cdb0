/* sim/core/recv_order.c: receives reordered into their pair's send order (sim/core/recv_order.h).
 * Both functions are O(n + D) in the plan's messages and devices, never O(D^2) (a 1,024-device
 * plan has a million pairs and talks over a few thousand): the check threads each pair's sends
 * into a list and matches the receives against it (every new plan is checked: no sort); the
 * reordering radix-sorts the sends into per-pair sequences. */
#include <config.h>
#include "sim/core/recv_order.h"

#include <stdlib.h>
#include <string.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* One send or receive: the pair it travels on, its position on its own device, and the
 * receive it is (or pairs with) as (op, stage, mb). */
struct msg {
    int from, to, pos;
    int op, stage, mb;
    int id; /* the receive's id: a receive's own, a send's partner's (-1: absent) */
};

/* Stable counting sort of m by from (by_from) or to: O(n + D). */
static void msg_sort_by(struct msg *m, struct msg *tmp, int n, int D, bool by_from)
{
    int *start = xcalloc((size_t)D + 1, sizeof(int));
    for (int k = 0; k < n; k++)
        start[(by_from ? m[k].from : m[k].to) + 1]++;
    for (int d = 0; d < D; d++)
        start[d + 1] += start[d];
    for (int k = 0; k < n; k++)
        tmp[start[by_from ? m[k].from : m[k].to]++] = m[k];
    memcpy(m, tmp, (size_t)n * sizeof *m);
    free(start);
}

/* The sends (want_sends) or the receives of p, sorted by (from, to, position). */
static struct msg *msg_collect(const struct plan *p, bool want_sends, int *n_out)
{
    int D = plan_devices(p), n = 0;
    struct msg *m = xmalloc(((size_t)plan_total(p) + 1) * sizeof *m);
    for (int d = 0; d < D; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (want_sends ? !vpipe_is_send(in->op) : !vpipe_is_recv(in->op))
                continue;
            struct msg x = {want_sends ? d : in->peer, want_sends ? in->peer : d, i,
                            in->op,   in->stage, in->mb, plan_id(p, d, i)};
            if (want_sends) {
                enum op op = OP__COUNT;
                vpipe_peer(in->op, in->stage, &op, &x.stage);
                x.op = op;
                x.id = -1;
            }
            if (x.from < 0 || x.from >= D || x.to < 0 || x.to >= D)
                continue; /* a peer outside the plan: the validator names it */
            m[n++] = x;
        }
    /* collected in (own device, position) order: a stable sort by the other end, then by
     * from, leaves (from, to, position) order (a radix sort: plans are made by thousands) */
    struct msg *tmp = xmalloc(((size_t)n + 1) * sizeof *tmp);
    if (want_sends) /* collected by from: group by to first */
        msg_sort_by(m, tmp, n, D, false);
    msg_sort_by(m, tmp, n, D, true); /* receives were collected by to already */
    free(tmp);
    *n_out = n;
    return m;
}

static int pair_cmp(const struct msg *a, const struct msg *b)
{
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return (a->to > b->to) - (a->to < b->to);
}

/* One send as its pair's receive must see it: the receive (op, stage, mb) it pairs with, its
 * position on its own device, and the next send of its pair (-1: the last). */
struct sent {
    int op, stage, mb, pos, next;
};

/* A directed pair of devices: its sends in order as a list through sent.next, cur the one its
 * next receive must match (-1: none left), tail the last; bad: a mismatch was found. */
struct pair {
    int from, to, tail, cur;
    bool bad;
};

/* A mismatch on (from, to) replaces *best when its pair comes first in (from, to) order. */
static void mismatch_keep(int from, int to, int send_pos, int recv_pos, int best[4])
{
    if (best[0] >= 0 && (from > best[0] || (from == best[0] && to >= best[1])))
        return;
    best[0] = from, best[1] = to, best[2] = send_pos, best[3] = recv_pos;
}

/* One walk over the sends, threading each pair's into a list, then one over the receives,
 * each matched against its pair's next send: O(n + D) and no sort. A device's peers are found
 * through slot (peer -> pair), set for the device walked and reset after it. */
bool plan_receive_mismatch(const struct plan *p, int *a_o, int *b_o, int *send_pos,
                           int *recv_pos)
{
    int D = plan_devices(p), total = plan_total(p), np = 0, ns = 0;
    struct sent *sent = xmalloc(((size_t)total + 1) * sizeof *sent);
    struct pair *pair = xmalloc(((size_t)total + 1) * sizeof *pair);
    int *slot = xmalloc(((size_t)D + 1) * sizeof(int));
    for (int d = 0; d < D; d++)
        slot[d] = -1;
    for (int a = 0; a < D; a++) { /* the sends of a, by peer */
        const struct instr *ins = plan_instrs(p, a);
        int len = plan_len(p, a), first = np;
        for (int i = 0; i < len; i++) {
            int b = ins[i].peer;
            if (!vpipe_is_send(ins[i].op) || b < 0 || b >= D)
                continue; /* a peer outside the plan: the validator names it */
            enum op op = OP__COUNT;
            struct sent *x = &sent[ns];
            vpipe_peer(ins[i].op, ins[i].stage, &op, &x->stage);
            x->op = op, x->mb = ins[i].mb, x->pos = i, x->next = -1;
            int q = slot[b];
            if (q < 0) {
                q = slot[b] = np++;
                pair[q] = (struct pair){a, b, ns, ns, false};
            } else {
                sent[pair[q].tail].next = ns;
                pair[q].tail = ns;
            }
            ns++;
        }
        for (int q = first; q < np; q++)
            slot[pair[q].to] = -1;
    }
    /* the pairs into each device, by that device (a counting sort) */
    int *in_off = xcalloc((size_t)D + 2, sizeof(int));
    int *in_pair = xmalloc(((size_t)np + 1) * sizeof(int));
    for (int q = 0; q < np; q++)
        in_off[pair[q].to + 2]++;
    for (int d = 0; d < D; d++)
        in_off[d + 2] += in_off[d + 1];
    for (int q = 0; q < np; q++)
        in_pair[in_off[pair[q].to + 1]++] = q;
    int best[4] = {-1, -1, -1, -1};
    for (int b = 0; b < D; b++) { /* the receives of b, each against its pair's next send */
        for (int k = in_off[b]; k < in_off[b + 1]; k++)
            slot[pair[in_pair[k]].from] = in_pair[k];
        const struct instr *ins = plan_instrs(p, b);
        int len = plan_len(p, b);
        for (int i = 0; i < len; i++) {
            int a = ins[i].peer;
            if (!vpipe_is_recv(ins[i].op) || a < 0 || a >= D)
                continue;
            int q = slot[a];
            if (q < 0) { /* nothing sent on the pair: its first receive is the mismatch */
                mismatch_keep(a, b, plan_len(p, a), i, best);
                continue;
            }
            struct pair *r = &pair[q];
            if (r->bad)
                continue;
            const struct sent *x = r->cur >= 0 ? &sent[r->cur] : NULL;
            if (x == NULL || x->mb != ins[i].mb || x->op != (int)ins[i].op ||
                x->stage != ins[i].stage) {
                r->bad = true;
                mismatch_keep(a, b, x != NULL ? x->pos : plan_len(p, a), i, best);
                continue;
            }
            r->cur = x->next;
        }
        for (int k = in_off[b]; k < in_off[b + 1]; k++)
            slot[pair[in_pair[k]].from] = -1;
    }
    for (int q = 0; q < np; q++) /* sends left over: the first of them is the mismatch */
        if (!pair[q].bad && pair[q].cur >= 0)
            mismatch_keep(pair[q].from, pair[q].to, sent[pair[q].cur].pos,
                          plan_len(p, pair[q].to), best);
    free(in_pair);
    free(in_off);
    free(slot);
    free(pair);
    free(sent);
    if (best[0] < 0)
        return false;
    *a_o = best[0], *b_o = best[1], *send_pos = best[2], *recv_pos = best[3];
    return true;
}

int plan_match_receives(struct plan *p, struct mt_err *e)
{
    int a, b, sp, rp;
    if (!plan_receive_mismatch(p, &a, &b, &sp, &rp))
        return 0;
    struct vpipe_index *x;
    if (vpipe_index_build(p, &x, e) != MT_OK)
        return -1;
    int D = plan_devices(p), total = plan_total(p), ns;
    struct msg *s = msg_collect(p, true, &ns);
    /* per receive id: its place in its pair's send order, and where that pair's sends start */
    int *rank = xmalloc(((size_t)total + 1) * sizeof(int));
    int *group = xmalloc(((size_t)total + 1) * sizeof(int));
    for (int id = 0; id < total; id++)
        rank[id] = -1;
    for (int k = 0, start = 0; k < ns; k++) {
        if (k > 0 && pair_cmp(&s[k - 1], &s[k]) != 0)
            start = k;
        int rid = vpipe_lookup(x, (enum op)s[k].op, s[k].mb, s[k].stage);
        s[k].id = rid;
        if (rid < 0)
            continue;
        int rd, ri;
        plan_locate_id(p, rid, &rd, &ri);
        if (rd != s[k].to || plan_at(p, rd, ri)->peer != s[k].from)
            continue;
        rank[rid] = k - start;
        group[rid] = start;
    }
    int *next = xcalloc((size_t)ns + 1, sizeof(int)); /* per group start: receives emitted */
    unsigned char *done = xcalloc((size_t)total + 1, 1);
    struct instr **lists = xcalloc((size_t)D, sizeof(struct instr *));
    int moved = 0;
    for (int d = 0; d < D; d++) {
        int n = plan_len(p, d), k = 0;
        lists[d] = xmalloc(((size_t)n + 1) * sizeof(struct instr));
        for (int i = 0; i < n; i++) {
            int id = plan_id(p, d, i);
            if (rank[id] < 0) {
                lists[d][k++] = *plan_at(p, d, i);
                continue;
            }
            if (done[id])
                continue;
            /* this receive, and first every one its sender sent ahead of it */
            int g = group[id];
            for (; next[g] <= rank[id]; next[g]++) {
                int r = s[g + next[g]].id, rd, ri;
                if (r < 0 || rank[r] < 0 || done[r])
                    continue;
                plan_locate_id(p, r, &rd, &ri);
                lists[d][k++] = *plan_at(p, rd, ri);
                done[r] = 1;
                moved += r != id;
            }
        }
    }
    for (int d = 0; d < D; d++) {
        plan_set_list(p, d, lists[d], plan_len(p, d));
        free(lists[d]);
    }
    free(lists);
    free(done);
    free(next);
    free(group);
    free(rank);
    free(s);
    vpipe_index_free(x);
    return moved;
}
