/* sim/recv_order.c: receives reordered into their pair's send order (sim/recv_order.h). */
#include <config.h>
#include "sim/recv_order.h"

#include <stdlib.h>
#include <string.h>

#include "sim/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

bool plan_receive_mismatch(const struct plan *p, int *a_o, int *b_o, int *send_pos,
                           int *recv_pos)
{
    int D = plan_devices(p);
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b)
                continue;
            int i = 0, j = 0;
            for (;;) {
                const struct instr *s = NULL, *r = NULL;
                for (; i < plan_len(p, a); i++) {
                    s = plan_at(p, a, i);
                    if (vpipe_is_send(s->op) && s->peer == b)
                        break;
                }
                for (; j < plan_len(p, b); j++) {
                    r = plan_at(p, b, j);
                    if (vpipe_is_recv(r->op) && r->peer == a)
                        break;
                }
                bool more_s = i < plan_len(p, a), more_r = j < plan_len(p, b);
                if (!more_s && !more_r)
                    break;
                enum op want = OP__COUNT;
                int want_stage = -1;
                if (more_s)
                    vpipe_peer(s->op, s->stage, &want, &want_stage);
                if (!(more_s && more_r && s->mb == r->mb && r->op == want &&
                      r->stage == want_stage)) {
                    *a_o = a;
                    *b_o = b;
                    *send_pos = i;
                    *recv_pos = j;
                    return true;
                }
                i++;
                j++;
            }
        }
    return false;
}

int plan_match_receives(struct plan *p, struct mt_err *e)
{
    int a, b, sp, rp;
    if (!plan_receive_mismatch(p, &a, &b, &sp, &rp))
        return 0;
    struct vpipe_index *x;
    if (vpipe_index_build(p, &x, e) != MT_OK)
        return -1;
    int D = plan_devices(p), total = plan_total(p);
    /* seq[a * D + b]: the ids of b's receives from a, in a's send order */
    int *seq_len = xcalloc((size_t)D * D, sizeof(int));
    int *rank = xmalloc((size_t)total * sizeof(int)); /* a receive's place in its seq */
    for (int id = 0; id < total; id++)
        rank[id] = -1;
    int *send_to = xmalloc((size_t)total * sizeof(int)); /* per receive id: its sender */
    for (int d = 0; d < D; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (!vpipe_is_send(in->op) || in->peer < 0 || in->peer >= D)
                continue;
            int r = vpipe_partner_of(x, in);
            if (r < 0)
                continue;
            int rd, ri;
            plan_locate_id(p, r, &rd, &ri);
            if (rd != in->peer || plan_at(p, rd, ri)->peer != d)
                continue;
            rank[r] = seq_len[d * D + rd]++;
            send_to[r] = d;
        }
    int **seq = xcalloc((size_t)D * D, sizeof(int *));
    for (int k = 0; k < D * D; k++)
        seq[k] = xmalloc(((size_t)seq_len[k] + 1) * sizeof(int));
    for (int id = 0; id < total; id++)
        if (rank[id] >= 0) {
            int rd, ri;
            plan_locate_id(p, id, &rd, &ri);
            seq[send_to[id] * D + rd][rank[id]] = id;
        }
    /* the new lists, from the unchanged plan, then swapped in */
    unsigned char *done = xcalloc((size_t)total, 1);
    int *next = xmalloc((size_t)D * sizeof(int));
    struct instr **lists = xcalloc((size_t)D, sizeof(struct instr *));
    int moved = 0;
    for (int d = 0; d < D; d++) {
        int n = plan_len(p, d), k = 0;
        lists[d] = xmalloc(((size_t)n + 1) * sizeof(struct instr));
        memset(next, 0, (size_t)D * sizeof(int));
        for (int i = 0; i < n; i++) {
            int id = plan_id(p, d, i);
            const struct instr *in = plan_at(p, d, i);
            if (rank[id] < 0) {
                lists[d][k++] = *in;
                continue;
            }
            if (done[id])
                continue;
            int from = send_to[id], *q = seq[from * D + d];
            for (; next[from] <= rank[id]; next[from]++) {
                int r = q[next[from]], rd, ri;
                plan_locate_id(p, r, &rd, &ri);
                lists[d][k++] = *plan_at(p, rd, ri);
                done[r] = 1;
                moved += r != id;
            }
        }
    }
    for (int d = 0; d < D; d++) {
        int n = plan_len(p, d);
        for (int i = n - 1; i >= 0; i--)
            plan_remove(p, d, i);
        for (int i = 0; i < n; i++)
            plan_append(p, d, lists[d][i]);
        free(lists[d]);
    }
    free(lists);
    free(next);
    free(done);
    for (int k = 0; k < D * D; k++)
        free(seq[k]);
    free(seq);
    free(send_to);
    free(rank);
    free(seq_len);
    vpipe_index_free(x);
    return moved;
}
