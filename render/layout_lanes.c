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

static void lanes_mark(struct layout_lanes *ln, size_t *cap, int row, double t)
{
    if ((size_t)ln->marks == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        ln->mark = xreallocarray(ln->mark, *cap, sizeof *ln->mark);
    }
    ln->mark[ln->marks++] = (struct layout_mark){row, t};
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

/* The blocks of row r (struct layout_lanes_block), its intervals in place and the rows
 * before it indexed: appended to ln->block (*cap of room). */
static void lanes_blocks_row(struct layout_lanes *ln, size_t *cap, int r)
{
    int first = ln->block_off[r];
    int n = (ln->off[r + 1] - ln->off[r] + LAYOUT_LANES_BLOCK - 1) / LAYOUT_LANES_BLOCK;
    if ((size_t)first + (size_t)n + 1 > *cap) {
        while ((size_t)first + (size_t)n + 1 > *cap)
            *cap = *cap ? 2 * *cap : 256;
        ln->block = xreallocarray(ln->block, *cap, sizeof *ln->block);
    }
    double end = -INFINITY;
    for (int b = 0; b < n; b++) {
        int i0 = ln->off[r] + b * LAYOUT_LANES_BLOCK;
        int i1 = i0 + LAYOUT_LANES_BLOCK < ln->off[r + 1] ? i0 + LAYOUT_LANES_BLOCK
                                                            : ln->off[r + 1];
        struct layout_lanes_block k = {end, -1, 0, -1};
        for (int i = i0; i < i1; i++) {
            const struct layout_seg *s = &ln->seg[i];
            if (s->t1 > k.end) /* as fmax: a NaN end leaves it */
                k.end = s->t1;
            if (s->id < 0)
                continue;
            if (s->t1 - s->t0 > k.longest)
                k.longest = s->t1 - s->t0;
            if (k.id_hi < k.id_lo)
                k.id_lo = k.id_hi = s->id;
            k.id_lo = s->id < k.id_lo ? s->id : k.id_lo;
            k.id_hi = s->id > k.id_hi ? s->id : k.id_hi;
        }
        ln->block[first + b] = k;
        end = k.end;
    }
    ln->block_off[r + 1] = first + n;
}

/* Every row's intervals placed (seg[off[r] .. off[r + 1])), sorted when `sorted` is false,
 * and indexed (blocks: those rows not yet, from block_off[*blocked]). */
static void lanes_finish(struct layout_lanes *ln, bool sorted, int blocked, size_t block_cap)
{
    bool all_by_time = true;
    int widest = 0;
    for (int r = 0; r < ln->rows; r++) {
        all_by_time &= ln->lane[r].by_time;
        if (ln->off[r + 1] - ln->off[r] > widest)
            widest = ln->off[r + 1] - ln->off[r];
    }
    if (!sorted) {
        struct layout_seg *tmp = xmalloc(((size_t)widest + 1) * sizeof *tmp);
        for (int r = 0; r < ln->rows; r++)
            lanes_sort(ln->seg + ln->off[r], ln->off[r + 1] - ln->off[r], tmp);
        free(tmp);
    }
    if (ln->block_off == NULL)
        ln->block_off = xcalloc((size_t)ln->rows + 1, sizeof *ln->block_off);
    for (int r = blocked; r < ln->rows; r++)
        lanes_blocks_row(ln, &block_cap, r);
    ln->block = xreallocarray(ln->block, (size_t)ln->block_off[ln->rows] + 1, sizeof *ln->block);
    if (!all_by_time)
        lanes_plan_order(ln);
}

static struct layout_seg lanes_idle_seg(double t0, double t1)
{
    return (struct layout_seg){t0, t1, -1, PAL_BUBBLE};
}

/* What one device's timeline is made into before its rows: its boxes in plan order (and
 * each one's lane), the intervals of those that last, per lane how many and whether in time
 * order. Room for the device's instructions, reused device after device. */
struct lanes_scratch {
    struct layout_seg *box;
    unsigned char *lane_of;
    double *iv; /* 2 * (len + 1) */
    int *count;
    bool *by_time;
    double *last_t0;
};

/* Room for n more intervals. */
static void lanes_reserve(struct layout_lanes *ln, size_t *cap, size_t used, size_t n)
{
    if (used + n <= *cap)
        return;
    while (*cap < used + n)
        *cap = *cap ? 2 * *cap : 1024;
    ln->seg = xreallocarray(ln->seg, *cap, sizeof *ln->seg);
}

/* Device d's timeline sub into its rows (they are consecutive: layout_row_index), each row
 * its idle time and its lane's boxes merged by time (sorted after, for a lane out of order).
 * Returns the intervals written from seg[used]. */
static size_t lanes_device(struct layout_lanes *ln, size_t *cap, size_t used,
                           const struct layout_box_rules *rules, int d, int sub, double end,
                           double eps, struct lanes_scratch *sc, size_t *mark_cap,
                           size_t *block_cap)
{
    const struct plan *pl = rules->p->plan;
    const struct instr *ins = plan_instrs(pl, d);
    int len = plan_len(pl, d), id0 = len > 0 ? plan_id(pl, d, 0) : 0, lanes = rules->lanes;
    int row0 = layout_row_index(rules->p, d, sub, 0), boxes = 0, n_iv = 0;
    for (int k = 0; k < lanes; k++)
        sc->count[k] = 0, sc->by_time[k] = true, sc->last_t0[k] = -INFINITY;
    for (int i = 0; i < len; i++) {
        struct layout_box b;
        if (!layout_box_of(rules, &ins[i], id0 + i, sub, &b))
            continue;
        sc->box[boxes] = (struct layout_seg){b.t0, b.t1, id0 + i, (unsigned char)b.fill};
        sc->lane_of[boxes++] = (unsigned char)b.lane;
        if (b.t1 > b.t0) /* what keeps the device busy */
            sc->iv[2 * n_iv] = b.t0, sc->iv[2 * n_iv + 1] = b.t1, n_iv++;
        sc->count[b.lane]++;
        if (b.t0 < sc->last_t0[b.lane])
            sc->by_time[b.lane] = false;
        sc->last_t0[b.lane] = b.t0;
        if (b.iteration)
            lanes_mark(ln, mark_cap, row0 + b.lane, b.t0);
    }
    int gaps = layout_idle_of(sc->iv, n_iv, end, eps);
    lanes_reserve(ln, cap, used, (size_t)gaps * (size_t)lanes + (size_t)boxes);
    size_t at = used;
    for (int k = 0; k < lanes; k++) {
        int r = row0 + k;
        struct layout_seg *out = ln->seg + at;
        ln->off[r] = (int)at;
        ln->lane[r].by_time = sc->by_time[k];
        int g = 0, o = 0;
        for (int j = 0; j < boxes; j++) { /* the lane's boxes, idle time merged in */
            if (lanes > 1 && sc->lane_of[j] != k)
                continue;
            const struct layout_seg *s = &sc->box[j];
            while (sc->by_time[k] && g < gaps && sc->iv[2 * g] <= s->t0) /* idle id -1 first */
                out[o++] = lanes_idle_seg(sc->iv[2 * g], sc->iv[2 * g + 1]), g++;
            out[o++] = *s;
        }
        for (; g < gaps; g++)
            out[o++] = lanes_idle_seg(sc->iv[2 * g], sc->iv[2 * g + 1]);
        if (!sc->by_time[k]) { /* its boxes, then its idle time: sorted (a measured row) */
            struct layout_seg *tmp = xmalloc(((size_t)o + 1) * sizeof *tmp);
            lanes_sort(out, o, tmp);
            free(tmp);
        }
        at += (size_t)o;
        ln->off[r + 1] = (int)at;
        lanes_blocks_row(ln, block_cap, r); /* while the row is in the cache */
    }
    return at - used;
}

int layout_lanes_build(const struct layout_panel *p, struct layout_lanes **out, struct mt_err *e)
{
    *out = NULL;
    TRY(layout_check_panels(p, 1, e));
    const struct plan *pl = p->plan;
    int devices = plan_devices(pl), subrows = layout_subrows(p), lanes = layout_lanes(p);
    struct layout_box_rules rules;
    layout_box_rules(p, &rules);
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
    struct lanes_scratch sc = {
        .box = xmalloc(((size_t)longest + 1) * sizeof *sc.box),
        .lane_of = xmalloc((size_t)longest + 1),
        .iv = xmalloc(((size_t)longest * 2 + 2) * sizeof *sc.iv),
        .count = xmalloc((size_t)lanes * sizeof *sc.count),
        .by_time = xmalloc((size_t)lanes * sizeof *sc.by_time),
        .last_t0 = xmalloc((size_t)lanes * sizeof *sc.last_t0),
    };
    /* A first guess of the size: a box per instruction and timeline (sends and receives draw
     * none: the guess is over, and what is not used is given back below) */
    size_t cap = (size_t)plan_total(pl) * (size_t)subrows + 1, used = 0, mark_cap = 0;
    size_t block_cap = cap / LAYOUT_LANES_BLOCK + (size_t)ln->rows + 1;
    ln->seg = xmalloc(cap * sizeof *ln->seg);
    ln->block_off = xcalloc((size_t)ln->rows + 1, sizeof *ln->block_off);
    ln->block = xmalloc(block_cap * sizeof *ln->block);
    for (int d = 0; d < devices; d++)
        for (int sub = 0; sub < subrows; sub++)
            used += lanes_device(ln, &cap, used, &rules, d, sub, end[sub], eps, &sc, &mark_cap,
                                 &block_cap);
    ln->seg = xreallocarray(ln->seg, used + 1, sizeof *ln->seg);
    free(sc.box);
    free(sc.lane_of);
    free(sc.iv);
    free(sc.count);
    free(sc.by_time);
    free(sc.last_t0);
    lanes_finish(ln, true, ln->rows, block_cap);
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
            if (pass == 1 && it->role == LAYOUT_ROLE_ITERATION && it->panel == panel)
                lanes_mark(ln, &mark_cap, it->row, it->t0);
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
                s = (struct layout_seg){it->t0, it->t1, it->id, (unsigned char)it->color};
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
    lanes_finish(ln, false, 0, 0);
    return ln;
}

void layout_lanes_free(struct layout_lanes *ln)
{
    if (ln == NULL)
        return;
    free(ln->lane);
    free(ln->off);
    free(ln->seg);
    free(ln->block_off);
    free(ln->block);
    free(ln->plan_order);
    free(ln->mark);
    free(ln);
}

int layout_lanes_first(const struct layout_lanes *ln, int r, double t)
{
    /* the first block whose latest end passes t, then the interval in it that does */
    int lo = ln->block_off[r], hi = ln->block_off[r + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ln->block[mid].end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ln->block_off[r + 1])
        return ln->off[r + 1];
    int i = ln->off[r] + (lo - ln->block_off[r]) * LAYOUT_LANES_BLOCK;
    double m = lo > ln->block_off[r] ? ln->block[lo - 1].end : -INFINITY;
    for (; i < ln->off[r + 1]; i++) {
        m = fmax(m, ln->seg[i].t1);
        if (m > t)
            return i;
    }
    return ln->off[r + 1];
}

int layout_lanes_next(const struct layout_lanes *ln, int r, int i, double len, int id)
{
    int end = ln->off[r + 1];
    while (i < end) {
        int b = ln->block_off[r] + (i - ln->off[r]) / LAYOUT_LANES_BLOCK;
        int block_end = ln->off[r] + (b - ln->block_off[r] + 1) * LAYOUT_LANES_BLOCK;
        if (block_end > end)
            block_end = end;
        const struct layout_lanes_block *k = &ln->block[b];
        if (k->longest >= len || (id >= k->id_lo && id <= k->id_hi)) {
            for (; i < block_end; i++) {
                const struct layout_seg *s = &ln->seg[i];
                if (s->id >= 0 && (s->t1 - s->t0 >= len || s->id == id))
                    return i;
            }
        }
        i = block_end;
    }
    return end;
}
