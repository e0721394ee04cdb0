/* sim/core/jackson.c: Jackson's preemptive schedule, the one-device relaxation behind the lower
 * bound's device term (sim/core/bound.c). */
#include <config.h>
#include "sim/core/jackson.h"

#include <math.h>
#include <string.h>

#include "sim/core/memory.h"

/* Merges jobs[lo, mid) and [mid, hi), each sorted by r, into tmp[lo, hi); ties from the left. */
static void jackson_jobs_merge(const struct jackson_job *jobs, int lo, int mid, int hi,
                               struct jackson_job *tmp)
{
    int i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        tmp[k++] = jobs[j].r < jobs[i].r ? jobs[j++] : jobs[i++];
    while (i < mid)
        tmp[k++] = jobs[i++];
    while (j < hi)
        tmp[k++] = jobs[j++];
}

/* Sorts jobs by r, stably (equal r keep list order: the order the stable merge sort behind
 * qsort gave, so the same schedule to the bit), merging the runs already in order: a device's
 * list is mostly in release order, so O(n log runs) and O(n) when it is. tmp holds n jobs. */
static void jackson_jobs_sort(struct jackson_job *jobs, int n, struct jackson_job *tmp)
{
    for (;;) { /* a pass merges each pair of neighbouring runs (ascending stretches) */
        int merged = 0;
        for (int lo = 0; lo < n;) {
            int mid = lo + 1;
            while (mid < n && !(jobs[mid].r < jobs[mid - 1].r))
                mid++;
            int hi = mid < n ? mid + 1 : n;
            while (hi < n && !(jobs[hi].r < jobs[hi - 1].r))
                hi++;
            if (mid < n) {
                jackson_jobs_merge(jobs, lo, mid, hi, tmp);
                memcpy(jobs + lo, tmp + lo, (size_t)(hi - lo) * sizeof *jobs);
                merged++;
            }
            lo = hi;
        }
        if (merged == 0)
            return;
    }
}

/* A max-heap of job indices by q. */
static void jackson_heap_push(int *h, int *n, const struct jackson_job *jobs, int j)
{
    int i = (*n)++;
    h[i] = j;
    while (i > 0 && jobs[h[(i - 1) / 2]].q < jobs[h[i]].q) {
        int t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void jackson_heap_pop(int *h, int *n, const struct jackson_job *jobs)
{
    h[0] = h[--(*n)];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && jobs[h[l]].q > jobs[h[m]].q)
            m = l;
        if (r < *n && jobs[h[r]].q > jobs[h[m]].q)
            m = r;
        if (m == i)
            break;
        int t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

double jackson_preemptive(struct jackson_job *jobs, int n, int *heap, struct jackson_job *tmp)
{
    jackson_jobs_sort(jobs, n, tmp);
    double t = 0, best = 0;
    int i = 0, hn = 0;
    while (i < n || hn > 0) {
        if (hn == 0 && jobs[i].r > t)
            t = jobs[i].r;
        while (i < n && jobs[i].r <= t)
            jackson_heap_push(heap, &hn, jobs, i++);
        struct jackson_job *j = &jobs[heap[0]];
        double next = i < n ? jobs[i].r : INFINITY;
        if (j->p <= next - t) {
            t += j->p;
            j->p = 0;
            best = mem_max(best, t + j->q);
            jackson_heap_pop(heap, &hn, jobs);
        } else {
            j->p -= next - t;
            t = next;
        }
    }
    return best;
}
