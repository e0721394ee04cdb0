/* render/layout_lanes.c: render/layout_lanes.h. Two ways in, one way out: the rows of a panel
 * made from its plan and simulation (layout_lanes_build, what the explorer draws: no layout of
 * the whole plan) or read from a layout's items (layout_lanes_of, for any layout), each row
 * then sorted and indexed the same (lanes_finish). */
#include <config.h>
#include "render/layout_lanes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout_gantt.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/xalloc.h"

static int lanes_seg_cmp(const struct layout_seg *p, const struct layout_seg *q)
{
    if (p->t0 != q->t0)
        return p->t0 < q->t0 ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

/* Sorts a row's intervals as lanes_seg_cmp orders them (a total order: no two intervals of a
 * row start together with the same id). A row is a few runs already in order (its idle time,
 * then its boxes, each in time order), so runs are merged pairwise until one is left: linear
 * for a row of two runs, where a general sort spent most of a frame. */
static void lanes_sort(struct layout_seg *a, int n, struct layout_seg *tmp)
{
    for (;;) {
        int i = 0;
        while (i < n) {
            int j = i + 1;
            while (j < n && lanes_seg_cmp(&a[j - 1], &a[j]) <= 0)
                j++;
            if (i == 0 && j == n)
                return; /* one run: sorted */
            int k = j < n ? j + 1 : n;
            while (k < n && lanes_seg_cmp(&a[k - 1], &a[k]) <= 0)
                k++;
            int p = i, q = j, o = i; /* merge [i, j) and [j, k) into tmp[i, k) */
            while (p < j && q < k)
                tmp[o++] = lanes_seg_cmp(&a[q], &a[p]) < 0 ? a[q++] : a[p++];
            while (p < j)
                tmp[o++] = a[p++];
            while (q < k)
                tmp[o++] = a[q++];
            i = k;
        }
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
}

static struct layout_lanes *lanes_new(int rows)
{
    struct layout_lanes *ln = xcalloc(1, sizeof *ln);
    ln->rows = rows;
    ln->lane = xcalloc((size_t)rows + 1, sizeof *ln->lane);
    ln->off = xcalloc((size_t)rows + 1, sizeof *ln->off);
    return ln;
}

struct lanes_by_id {
    int id, at;
};

static int lanes_by_id_cmp(const void *a, const void *b)
{
    const struct lanes_by_id *p = a, *q = b;
    return (p->id > q->id) - (p->id < q->id);
}

/* Each row's boxes of a row not by_time in plan order: a device's ids follow its plan. */
static void lanes_plan_order(struct layout_lanes *ln)
{
    int total = ln->off[ln->rows];
    ln->plan_order = xmalloc(((size_t)total + 1) * sizeof *ln->plan_order);
    struct lanes_by_id *tmp = xmalloc(((size_t)total + 1) * sizeof *tmp);
    for (int r = 0; r < ln->rows; r++) {
        int n = 0;
        for (int i = ln->off[r]; i < ln->off[r + 1]; i++) {
            ln->plan_order[i] = -1;
            if (ln->seg[i].id >= 0)
                tmp[n++] = (struct lanes_by_id){ln->seg[i].id, i};
        }
        if (ln->lane[r].by_time)
            continue;
        qsort(tmp, (size_t)n, sizeof *tmp, lanes_by_id_cmp);
        for (int k = 0; k < n; k++)
            ln->plan_order[ln->off[r] + k] = tmp[k].at;
    }
    free(tmp);
}

/* Every row's intervals placed (seg[off[r] .. off[r + 1]), in any order): sorted, indexed. */
static void lanes_finish(struct layout_lanes *ln)
{
    int total = ln->off[ln->rows], widest = 0;
    bool all_by_time = true;
    for (int r = 0; r < ln->rows; r++) {
        if (ln->off[r + 1] - ln->off[r] > widest)
            widest = ln->off[r + 1] - ln->off[r];
        all_by_time &= ln->lane[r].by_time;
    }
    struct layout_seg *tmp = xmalloc(((size_t)widest + 1) * sizeof *tmp);
    ln->end_max = xmalloc(((size_t)total + 1) * sizeof *ln->end_max);
    for (int r = 0; r < ln->rows; r++) {
        struct layout_seg *seg = ln->seg + ln->off[r];
        int n = ln->off[r + 1] - ln->off[r];
        lanes_sort(seg, n, tmp);
        double m = -INFINITY;
        for (int i = 0; i < n; i++)
            ln->end_max[ln->off[r] + i] = m = fmax(m, seg[i].t1);
    }
    free(tmp);
    if (!all_by_time)
        lanes_plan_order(ln);
}

static struct layout_seg lanes_idle_seg(double t0, double t1)
{
    return (struct layout_seg){t0, t1, -1, -1, -1, PAL_BUBBLE, OP__COUNT};
}

/* Room for n more intervals. */
static void lanes_reserve(struct layout_lanes *ln, size_t *cap, size_t used, size_t n)
{
    if (used + n <= *cap)
        return;
    while (*cap < used + n)
        *cap = *cap ? 2 * *cap : 1024;
    ln->seg = xreallocarray(ln->seg, *cap, sizeof *ln->seg);
}

/* Device d's timeline sub into its rows (they are consecutive: layout_row_index), idle time
 * first, then the boxes in plan order. box and lane_of: scratch of plan_len(d) entries, at:
 * of lanes; gap: room for layout_idle. Returns the intervals written. */
static size_t lanes_device(struct layout_lanes *ln, size_t *cap, size_t used,
                           const struct layout_panel *p, int d, int sub, double end, double eps,
                           double *gap, struct layout_box *box, int *lane_of, int *at,
                           size_t *mark_cap)
{
    const struct plan *pl = p->plan;
    const struct instr *ins = plan_instrs(pl, d);
    int len = plan_len(pl, d), id0 = len > 0 ? plan_id(pl, d, 0) : 0;
    int lanes = layout_lanes(p), iter_n = layout_iteration_every(pl);
    int row0 = layout_row_index(p, d, sub, 0);
    int gaps = layout_idle(p, d, sub, end, eps, gap);
    for (int k = 0; k < lanes; k++)
        at[k] = gaps;
    for (int i = 0; i < len; i++) {
        lane_of[i] = -1;
        if (layout_box_of(p, lanes, iter_n, &ins[i], id0 + i, sub, &box[i])) {
            lane_of[i] = box[i].lane;
            at[box[i].lane]++;
        }
    }
    size_t n = 0;
    for (int k = 0; k < lanes; k++)
        n += (size_t)at[k];
    lanes_reserve(ln, cap, used, n);
    for (int k = 0, start = (int)used; k < lanes; k++) { /* at[k]: where lane k's boxes go */
        int size = at[k];
        ln->off[row0 + k] = start;
        for (int g = 0; g < gaps; g++)
            ln->seg[start + g] = lanes_idle_seg(gap[2 * g], gap[2 * g + 1]);
        at[k] = start + gaps;
        start += size;
        ln->off[row0 + k + 1] = start;
    }
    for (int i = 0; i < len; i++) {
        int k = lane_of[i];
        if (k < 0)
            continue;
        const struct layout_box *b = &box[i];
        struct layout_lane *row = &ln->lane[row0 + k];
        if (at[k] > ln->off[row0 + k] + gaps && b->t0 < ln->seg[at[k] - 1].t0)
            row->by_time = false;
        ln->seg[at[k]++] = (struct layout_seg){b->t0, b->t1, id0 + i, ins[i].mb, ins[i].stage,
                                               (unsigned char)b->fill, (unsigned char)ins[i].op};
        if (b->iteration) {
            if ((size_t)ln->marks == *mark_cap) {
                *mark_cap = *mark_cap ? 2 * *mark_cap : 64;
                ln->mark = xreallocarray(ln->mark, *mark_cap, sizeof *ln->mark);
            }
            ln->mark[ln->marks++] = (struct layout_mark){row0 + k, b->t0};
        }
    }
    return n;
}

int layout_lanes_build(const struct layout_panel *p, struct layout_lanes **out, struct mt_err *e)
{
    *out = NULL;
    TRY(layout_check_panels(p, 1, e));
    const struct plan *pl = p->plan;
    int devices = plan_devices(pl), subrows = layout_subrows(p), lanes = layout_lanes(p);
    struct layout_lanes *ln = lanes_new(devices * subrows * lanes);
    int longest = 0;
    for (int d = 0; d < devices; d++) {
        for (int sub = 0; sub < subrows; sub++)
            for (int k = 0; k < lanes; k++)
                ln->lane[layout_row_index(p, d, sub, k)] = (struct layout_lane){d, sub, k, true};
        if (plan_len(pl, d) > longest)
            longest = plan_len(pl, d);
    }
    double end[2] = {0, 0}, eps = LAYOUT_IDLE_EPS(layout_span(p, 1, 0));
    for (int sub = 0; sub < subrows; sub++)
        end[sub] = layout_timeline_end(p, sub);
    double *gap = xmalloc(((size_t)longest * 2 + 2) * sizeof *gap);
    struct layout_box *box = xmalloc(((size_t)longest + 1) * sizeof *box);
    int *lane_of = xmalloc(((size_t)longest + 1) * sizeof *lane_of);
    int *at = xmalloc((size_t)lanes * sizeof *at);
    /* A first guess of the size: a box per instruction and timeline (sends and receives draw
     * none: the guess is over, and given back below) */
    size_t cap = (size_t)plan_total(pl) * (size_t)subrows + 1, used = 0, mark_cap = 0;
    ln->seg = xmalloc(cap * sizeof *ln->seg);
    for (int d = 0; d < devices; d++)
        for (int sub = 0; sub < subrows; sub++)
            used += lanes_device(ln, &cap, used, p, d, sub, end[sub], eps, gap, box, lane_of, at,
                                 &mark_cap);
    ln->seg = xreallocarray(ln->seg, used + 1, sizeof *ln->seg);
    free(gap);
    free(box);
    free(lane_of);
    free(at);
    lanes_finish(ln);
    *out = ln;
    return MT_OK;
}

struct layout_lanes *layout_lanes_of(const struct layout *l, int panel)
{
    int nr;
    const struct layout_row *rows = layout_rows(l, panel, &nr);
    struct layout_lanes *ln = lanes_new(rows != NULL ? nr : 0);
    for (int r = 0; r < ln->rows; r++)
        ln->lane[r] = (struct layout_lane){rows[r].dev, rows[r].sub, rows[r].lane, true};
    /* A bubble covers every lane of its (dev, sub-row): those rows, listed once per key. */
    int keys = 0;
    for (int r = 0; r < ln->rows; r++)
        if (2 * rows[r].dev + rows[r].sub + 1 > keys)
            keys = 2 * rows[r].dev + rows[r].sub + 1;
    int *key_off = xcalloc((size_t)keys + 1, sizeof *key_off), *key_rows, *fill;
    for (int r = 0; r < ln->rows; r++)
        if (rows[r].dev >= 0)
            key_off[2 * rows[r].dev + rows[r].sub + 1]++;
    for (int k = 0; k < keys; k++)
        key_off[k + 1] += key_off[k];
    key_rows = xmalloc(((size_t)ln->rows + 1) * sizeof *key_rows);
    fill = xcalloc((size_t)keys + (size_t)ln->rows + 1, sizeof *fill);
    for (int r = 0; r < ln->rows; r++)
        if (rows[r].dev >= 0) {
            int k = 2 * rows[r].dev + rows[r].sub;
            key_rows[key_off[k] + fill[k]++] = r;
        }
    const struct layout_item *items = layout_items(l);
    int n = layout_count(l);
    size_t mark_cap = 0;
    int *after_box = xcalloc((size_t)ln->rows + 1, sizeof *after_box); /* row r's last box + 1 */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* counted: place */
            for (int r = 0; r < ln->rows; r++)
                ln->off[r + 1] += ln->off[r];
            ln->seg = xmalloc(((size_t)ln->off[ln->rows] + 1) * sizeof *ln->seg);
            memset(fill, 0, ((size_t)keys + (size_t)ln->rows + 1) * sizeof *fill);
        }
        for (int i = 0; i < n; i++) {
            const struct layout_item *it = &items[i];
            if (pass == 1 && it->role == LAYOUT_ROLE_ITERATION && it->panel == panel) {
                if ((size_t)ln->marks == mark_cap) {
                    mark_cap = mark_cap ? 2 * mark_cap : 64;
                    ln->mark = xreallocarray(ln->mark, mark_cap, sizeof *ln->mark);
                }
                ln->mark[ln->marks++] = (struct layout_mark){it->row, it->t0};
            }
            if (it->kind != LAYOUT_BOX || it->panel != panel ||
                (it->role != LAYOUT_ROLE_INSTR && it->role != LAYOUT_ROLE_BUBBLE))
                continue;
            int first = it->row, last = it->row + 1; /* an instruction: its own row */
            const int *list = NULL;
            if (it->role == LAYOUT_ROLE_BUBBLE) {
                int k = 2 * it->dev + (it->style & LAYOUT_MEASURED ? 1 : 0);
                if (it->dev < 0 || k >= keys)
                    continue;
                list = key_rows, first = key_off[k], last = key_off[k + 1];
            }
            struct layout_seg s = lanes_idle_seg(it->t0, it->t1);
            if (it->role == LAYOUT_ROLE_INSTR)
                s = (struct layout_seg){it->t0, it->t1, it->id, it->mb, it->stage,
                                        (unsigned char)it->color, (unsigned char)it->op};
            for (int j = first; j < last; j++) {
                int r = list != NULL ? list[j] : j;
                if (r < 0 || r >= ln->rows)
                    continue;
                if (pass == 0) {
                    ln->off[r + 1]++;
                    continue;
                }
                int at = ln->off[r] + fill[r]++;
                if (s.id >= 0 && after_box[r] > 0 && s.t0 < ln->seg[after_box[r] - 1].t0)
                    ln->lane[r].by_time = false;
                if (s.id >= 0)
                    after_box[r] = at + 1;
                ln->seg[at] = s;
            }
        }
    }
    free(key_off);
    free(key_rows);
    free(fill);
    free(after_box);
    lanes_finish(ln);
    return ln;
}

void layout_lanes_free(struct layout_lanes *ln)
{
    if (ln == NULL)
        return;
    free(ln->lane);
    free(ln->off);
    free(ln->seg);
    free(ln->end_max);
    free(ln->plan_order);
    free(ln->mark);
    free(ln);
}

int layout_lanes_first(const struct layout_lanes *ln, int r, double t)
{
    int lo = ln->off[r], hi = ln->off[r + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ln->end_max[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
