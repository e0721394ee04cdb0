/* sim/search/search_internal.h: what the files of the schedule search share (sim/search/search.h): the work of
 * a plan as compute ops with fixed ids, a schedule as each device's order of them plus which
 * forwards are checkpointed, and a fast evaluation of a schedule (times and memory) that gives
 * the simulator's figures for plans with asynchronous sends.
 *
 * Ops: per (mb, stage) key, F (FW or CFW by the schedule's ckpt flag), RC (in the order only
 * when checkpointed), B (BW, or B when the plan splits that backward) and W (split only); id =
 * key * 4 + kind. A schedule lists compute ops only; the plan adds the sends and receives around them and
 * the AR/OS tail as every generator does (scheme_add_comm), so an RC right before its B runs
 * before the B's receive (Mario's overlap-recompute). */
#ifndef MT_SIM_SEARCH_INTERNAL_H
#define MT_SIM_SEARCH_INTERNAL_H

#include <stdbool.h>

#include "model/cost.h"
#include "sim/plan/plan.h"

struct mt_err;
struct mem_step;
struct search_opts;
struct search_exact_result;

enum { SK_F, SK_RC, SK_B, SK_W, SK__COUNT };

#define SEARCH_OP(key, kind) ((key) * SK__COUNT + (kind))
#define SEARCH_KEY(op) ((op) / SK__COUNT)
#define SEARCH_KIND(op) ((op) % SK__COUNT)

struct search_op {
    int mb, stage, part, dev;
    int pred;     /* the op whose end it waits for (data); -1 none. Same-device ones are also
                   * before it in every legal order */
    double lat;   /* added to pred's end: the transfer when pred is on another device */
    double dur;   /* its latency (sim_instr_latency) */
    int in_dev;   /* the device it receives from (RA/RG before it), -1 none */
    int out_dev;  /* the device it sends to (SA/SG after it), -1 none */
};

/* A search's progress (search_opts.progress): evaluations counted where they happen (each
 * schedule timed, each node of the branch and bound, each list schedule), the callback called
 * when `next` is passed; stop once it said so. */
struct search_progress {
    bool (*fn)(void *ctx, long done, long budget);
    void *ctx;
    long done, next, budget;
    bool stop;
    long every; /* evaluations between calls */
    long work;  /* ops of other work since the last call (search_progress_work) */
};

/* What a search of one plan's work holds fixed. */
struct search_ctx {
    const struct config *cfg;
    struct plan_geom geom;
    struct cost_model cost;
    int D, keys, n_ops;
    unsigned char *split;  /* [keys]: the backward is split into B and W (the plan's choice) */
    struct search_op *op;  /* [n_ops]; ops that do not exist (W unsplit) have dev -1 */
    int *dev_cap;          /* [D]: most ops a device's order can hold (every RC in it) */
    int stride;            /* max dev_cap */
    double *stat;          /* [D]: static memory */
    double cap;            /* memory cap per device (static included); 0 none */
    bool replicated;       /* AR before OS (dp > 1 or Chimera) */
    double *ar, *os;       /* [stages]: tail durations */
    struct search_progress *prog; /* NULL: none (search_ctx_init; the driver sets it) */
    bool mixed_channels;   /* a pair of devices carries messages of two lanes (a stage's
                            * forwards or backwards) one way: receives may need reordering
                            * (search_eval_peak; V-shaped placements, Chimera) */
    bool offload;          /* schedules may offload forwards (SEARCH_CK_OFFLOAD; issue 29): set
                            * by the offload search only */
};

/* A forward's flag in search_sched.ck: kept (0), checkpointed (1: CFW, its RC in the order) or
 * offloaded (2: FW with its OF right after it, on the device's D2H copy lane; the RC's slot in
 * the order holds its RL instead, on the H2D lane: the device goes on, and the backward waits
 * for the RL's end). The activations stay until the OF ends and are back from the RL's start
 * (sim/core/memory.h): with copies on a device its memory is walked at the copies' times. */
enum { SEARCH_CK_KEEP, SEARCH_CK_CKPT, SEARCH_CK_OFFLOAD };

/* Whether op is the RL of an offloaded forward (it sits in the RC's slot). */
#define SEARCH_IS_RL(s, op) \
    (SEARCH_KIND(op) == SK_RC && (s)->ck[SEARCH_KEY(op)] == SEARCH_CK_OFFLOAD)

/* Evaluations between two progress reports on a plan of n_ops ops: SEARCH_PROGRESS_EVERY at
 * 512 ops, as much work on larger plans (at least one). */
long search_progress_every(int n_ops);

/* The progress of a search of budget evaluations on a plan of n_ops ops, reporting to o's
 * callback (set it as the ctx's prog when o->progress is not NULL). */
struct search_progress search_progress_make(const struct search_opts *o, long budget, int n_ops);

/* Counts n evaluations towards the progress callback, calling it when due. */
void search_progress_add(const struct search_ctx *c, long n);

/* Work that is not an evaluation (the starts: a list schedule, a repair's memory walks), as
 * ops looked at: the callback is called with the evaluations so far after about as much work
 * as between two reports, so that the set-up of a large search reports and can be stopped. */
void search_progress_work(const struct search_ctx *c, long ops);

/* Whether the progress callback stopped the search: every loop that runs to a budget ends. */
static inline bool search_stopped(const struct search_ctx *c)
{
    return c->prog != NULL && c->prog->stop;
}

/* A schedule: device d's order is ord[d * stride .. + len[d]), ck[key] the checkpoint flags. */
struct search_sched {
    int *ord;
    int *len;
    unsigned char *ck;
};

/* The evaluation's working memory and results. */
struct search_eval {
    double makespan;   /* the step (tail included) */
    double sum_finish; /* the sum over devices of when each finishes: a tie-breaker */
    int n_rc;          /* recomputes */
    double rc_time;    /* their time: the second tie-breaker (a recompute dropped at no cost to
                        * the step leaves a bubble that a later move may use) */
    double *start, *end;
    unsigned char *done, *why; /* why: 0 started at 0, 1 when its device was free, 2 data,
                                * 3 (a backward) its RL */
    int *pos;                  /* [n_ops] position in its device's order */
    int last;                  /* the compute op that ends last */
    /* worklist */
    int *pc, *queue, *wait_head, *wait_next;
    unsigned char *queued;
    double *free_at, *fin;
    struct instr *buf; /* room for one device's expanded list */
    /* the expansion's receive order (search_eval_peak): ops whose receive is placed, each
     * peer's sends to the device in order (seq, by peer slot) and how far they were received */
    unsigned char *rcvd;
    int *seq, *peer_slot, *seq_off, *seq_end, *seq_next;
    /* offload (search_ctx.offload): each key's OF times, each device's two copy lanes, and
     * the timed memory walk's room (the expanded list's times, steps and curve) */
    double *of_start, *of_end, *lane;
    double *xs, *xe, *xafter, *curve_t, *curve_mem;
    struct mem_step *steps;
};

/* What a schedule is judged by: its step, then the sum of the devices' finishes (which moves an
 * unfinished device towards a shorter step), then its recompute time (a recompute dropped at no
 * cost to either leaves a bubble that a later move may use). */
struct search_score {
    double ms, sf, rc;
};

static inline struct search_score search_score_of(const struct search_eval *ev)
{
    return (struct search_score){ev->makespan, ev->sum_finish, ev->rc_time};
}

/* a better than b, lexicographically (with room for rounding) */
static inline bool search_better(struct search_score a, struct search_score b)
{
    double eps = 1e-9 * (b.ms > 1 && b.ms < 1e300 ? b.ms : 1);
    if (a.ms < b.ms - eps || a.ms > b.ms + eps)
        return a.ms < b.ms;
    if (a.sf < b.sf - eps * 4 || a.sf > b.sf + eps * 4)
        return a.sf < b.sf;
    return a.rc < b.rc - eps;
}

/* Builds the context from a plan (its work, placement, costs) and a cap. MT_EUNSUPPORTED for
 * asynchronous schemes. */
int search_ctx_init(struct search_ctx *c, const struct plan *p, double cap, struct mt_err *e);
void search_ctx_fini(struct search_ctx *c);

void search_sched_init(const struct search_ctx *c, struct search_sched *s);
void search_sched_fini(struct search_sched *s);
void search_sched_copy(const struct search_ctx *c, struct search_sched *dst,
                       const struct search_sched *src);
/* A plan's compute order (its CFWs are checkpoints of the whole stage). MT_EINVAL when the plan
 * is not of the context's work. */
int search_sched_from_plan(const struct search_ctx *c, const struct plan *p,
                           struct search_sched *s, struct mt_err *e);
/* The plan of a schedule: compute ops in order, then scheme_add_comm. Owned by the caller. */
struct plan *search_sched_plan(const struct search_ctx *c, const struct search_sched *s);

void search_eval_init(const struct search_ctx *c, struct search_eval *ev);
void search_eval_fini(struct search_eval *ev);
/* Times of every op, the makespan and the tie-breaker. false on a deadlock. */
bool search_eval_time(const struct search_ctx *c, const struct search_sched *s,
                      struct search_eval *ev);
/* Device d's peak memory, static included (what sim_run reports as peak_mem). With copies
 * on d, at the times of the last search_eval_time of s. */
double search_eval_peak(const struct search_ctx *c, const struct search_sched *s, int d,
                        struct search_eval *ev);
/* Device d's list as the plan holds it, into ev->buf (what search_eval_peak walks): receives
 * before their ops, sends after, each peer's messages received in the order it sent them. Its
 * length; group (may be NULL, [s->len[d]]) gets where each op's instructions begin (its
 * receives, pulled-in ones included). */
int search_eval_expand(const struct search_ctx *c, const struct search_sched *s, int d,
                       struct search_eval *ev, int *group);
/* Whether a peak fits the cap (the simulator's test, with a little room for rounding). */
bool search_fits(const struct search_ctx *c, double peak);
/* The W a device may run next: that of its oldest backward (keys[nw .. nb)) whose backward is
 * split; -1 when none is (the list schedules and the branch and bound both ask). */
int search_next_w(const struct search_ctx *c, const int *keys, int nw, int nb);
/* Walks op's instructions (its receive, itself — a CFW when ck —, its send) through a device's
 * memory walk w, pending the send buffer to reap; the device's peak so far, static included.
 * The list schedules and the branch and bound place ops one at a time with it. */
struct mem_walk;
double search_mem_walk_op(const struct search_ctx *c, int op, bool ck, struct mem_walk *w,
                          double *pending);

/* Whether op a must come before op b on their device (data, or F < RC < B < W of one key). */
bool search_before(const struct search_ctx *c, int a, int b);
/* Whether a and b, neighbours on one device, may trade places: neither must precede the other
 * and they share no channel (each peer's messages keep their order: NCCL matches in order). */
bool search_may_swap(const struct search_ctx *c, int a, int b);

/* ---- sim/search/search_list.c ---- */

/* Memory-aware list scheduling into s: the op that can start earliest next, backward first
 * (SEARCH_LIST_RC_FIRST: a recompute before anything else at the same time), a lane's forwards
 * in flight held to the stages after it plus extra, activations kept while they fit with room
 * for a recompute and the device can still finish its oldest micro-batch, else checkpointed.
 * A recompute waits until its backward's gradient is on its way (SEARCH_LIST_RC_EARLY: it may
 * run as soon as its forward has). seed != 0 varies each lane's warm-up by -2 .. +5 at random.
 * false when memory locks it (nothing can run). */
enum { SEARCH_LIST_RC_FIRST = 1, SEARCH_LIST_RC_EARLY = 2 };
bool search_list(const struct search_ctx *c, int extra, unsigned flags, unsigned seed,
                 struct search_sched *s);

/* ---- sim/search/search_periodic.c ---- */

/* Whether the periodic starts apply: one stage per device, no split backward, a cap. */
bool search_periodic_applies(const struct search_ctx *c);
/* A periodic schedule into s: devices of stage >= binding in blocks of `keep` kept forwards
 * and as many checkpointed ones as fill the kept ones' wait for their gradients, the rest in
 * one block (every forward after the first `keep` checkpointed). It may not fit the cap. */
void search_periodic(const struct search_ctx *c, int binding, int keep, struct search_sched *s);

/* ---- sim/search/search_local.c ---- */

struct search_ls_stats {
    long evals;
    int improvements;
};

/* Every forward of s keeps its activations (its recompute goes). */
void search_strip_checkpoints(const struct search_ctx *c, struct search_sched *s);
/* Local search from s, which must run and fit the cap; s becomes the best schedule found.
 * budget: schedules to evaluate; patience (0: none): it stops early when that many
 * evaluations went by without a better schedule. Deterministic for a seed. Returns its
 * makespan. */
double search_local(const struct search_ctx *c, struct search_sched *s, long budget,
                    long patience, unsigned seed, struct search_ls_stats *st);

/* ---- sim/search/search_repair.c ---- */

/* Checkpoints forwards of s (the whole stage, RC right before its B) until every device fits
 * the cap: on a device over it, every W next to its B first, then the forward kept longest
 * (places to its backward; the first of equals) one at a time. In O((n + checkpoints) log n)
 * a device, the same checkpoints as a walk of the device after each. false when a device
 * cannot be brought under it (or the search was stopped). */
bool search_repair(const struct search_ctx *c, struct search_sched *s, struct search_eval *ev);

/* ---- sim/search/search_lns.c: large-neighbourhood moves ---- */

/* What a node of the branch and bound costs, in evaluations of a schedule (measured: 2-3
 * without a frame, 3-6 with one, on 2 x 6 to 8 x 16), so that budgets mix them. */
#define SEARCH_NODE_COST 4

/* The windows of the large-neighbourhood moves: 3, 2, then 1 consecutive micro-batches ending
 * at the last, then at the one before, ...; each its node limit (doubled when it ran out without an answer) and whether
 * it was searched through on the current schedule (then it is skipped until the schedule
 * changes). */
struct search_lns {
    int n;
    long *limit;
    unsigned char *exhausted;
};

void search_lns_init(const struct search_ctx *c, struct search_lns *z, long limit);
/* Every window open again (the schedule changed). */
void search_lns_reset(const struct search_ctx *c, struct search_lns *z);
void search_lns_fini(struct search_lns *z);
/* One pass of large-neighbourhood moves over s (which must run and fit): each window's ops
 * re-placed by the branch and bound with everything else kept, in at most its limit of nodes,
 * while budget (evaluations) lasts; s becomes the best found. Returns whether it found a faster
 * schedule; st (may be NULL) counts what was spent. */
bool search_lns(const struct search_ctx *c, struct search_sched *s, long budget,
                struct search_lns *z, struct search_ls_stats *st);
/* Whether every window was searched through on the current schedule (nothing left to try). */
bool search_lns_exhausted(const struct search_lns *z);

/* ---- sim/search/search_exact.c ---- */

/* What a large-neighbourhood move keeps of a schedule s: every op that is not free keeps its
 * order on its device relative to the other kept ones and, a forward, its checkpoint flag; a
 * free op may go anywhere on its device (the lanes' and the channels' orders hold as always),
 * and so may the recompute of a free forward, which may be kept instead. */
struct search_frame {
    const struct search_sched *s;
    const unsigned char *free_op; /* [n_ops] */
};

/* The branch and bound of search_exact on a context: only a schedule strictly faster than ub
 * (0 = none) is looked for, in at most limit nodes (0 = 2,000,000); within the frame fr when
 * not NULL (the search then re-optimises its free ops). Returns whether one was found, into
 * out (may be NULL). */
bool search_exact_ctx(const struct search_ctx *c, long limit, double ub,
                      const struct search_frame *fr, struct search_sched *out,
                      struct search_exact_result *res);

#endif
