/* sim/core/recv_order.c: receives reordered into their pair's send order (sim/core/recv_order.h).
 * Both functions are O(n + D) in the plan's messages and devices: the sends and receives of
 * every pair are radix-sorted into per-pair sequences rather than walked pair by pair (a
 * 1,024-device plan has a million pairs and talks over a few thousand). */
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

bool plan_receive_mismatch(const struct plan *p, int *a_o, int *b_o, int *send_pos,
                           int *recv_pos)
{
    int ns, nr;
    struct msg *s = msg_collect(p, true, &ns), *r = msg_collect(p, false, &nr);
    bool found = false;
    int i = 0, j = 0;
    while ((i < ns || j < nr) && !found) {
        /* the next pair in (from, to) order, from either side */
        const struct msg *pair = i >= ns ? &r[j] : j >= nr ? &s[i] : pair_cmp(&s[i], &r[j]) <= 0
                                                                        ? &s[i]
                                                                        : &r[j];
        int from = pair->from, to = pair->to;
        for (;;) {
            bool more_s = i < ns && s[i].from == from && s[i].to == to;
            bool more_r = j < nr && r[j].from == from && r[j].to == to;
            if (!more_s && !more_r)
                break;
            if (!(more_s && more_r && s[i].mb == r[j].mb && s[i].op == r[j].op &&
                  s[i].stage == r[j].stage)) {
                *a_o = from;
                *b_o = to;
                *send_pos = more_s ? s[i].pos : plan_len(p, from);
                *recv_pos = more_r ? r[j].pos : plan_len(p, to);
                found = true;
                break;
            }
            i++;
            j++;
        }
    }
    free(s);
    free(r);
    return found;
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
