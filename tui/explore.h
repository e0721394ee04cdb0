/* tui/explore.h: the explorer's state and actions (issue: `mario-tui explore`). The state is
 * plain data: the config being edited, the pass pipeline of its plan (every step kept for the
 * before/after view), the viewport and cursor, the tuner's results. Actions change the state
 * and return reaction flags; views (tui/view_*.c) draw it into a cell canvas
 * (render/paint_cells.h); tui/screen.c shows the canvas with curses. Nothing here draws to
 * the terminal, so the whole explorer runs headless for tests (--dump-screen). */
#ifndef MT_TUI_EXPLORE_H
#define MT_TUI_EXPLORE_H

#include <stdbool.h>

#include "model/config.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/tune/tune.h"
#include "traces/align.h"
#include "traces/replay.h"

struct cells;
struct gantt_cache;
struct copy_cache;
struct explore_job;
struct explore_build;
struct mt_err;
struct ckpt_plan;
struct ckpt_plan_report;

/* Reactions (htop's Htop_Reaction): what the loop must do after an action. */
#define R_NONE 0x0
#define R_REDRAW 0x1
#define R_QUIT 0x2
#define R_STATUS 0x4 /* only the status line changed (a stopped wait: the frame is as it was) */

#define EXPLORE_MIN_W 80
#define EXPLORE_MIN_H 24
#define EXPLORE_TICK_MS 40 /* the search's progress redrawn at most this often */

enum explore_mode { MODE_GANTT, MODE_HELP, MODE_TUNE, MODE_PROMPT, MODE_BUCKETS };
enum explore_prompt { PROMPT_SEARCH, PROMPT_EXPORT, PROMPT_TRACE };

struct explore {
    struct config cfg;        /* what is being edited */
    struct plan *loaded;      /* a plan given on the command line (owned), used until an edit */
    struct pass_pipeline pl;  /* base, ckpt, overlap, redundancy, prepose (+ rounds), and
                               * the search once the user steps to it (explore_search) */
    bool have_pl;
    int row;                  /* enum pass_row shown; PASS_ROW_SEARCH: the search step */
    double search_ms;         /* how long the last search took (wall clock) */
    /* Says, before something that may keep keys waiting (the search: up to ~1 s at 32 x 64),
     * what it is (tui/screen.c draws it on the status line); NULL headless. */
    void (*busy)(void *ctx, const char *what);
    void *busy_ctx;
    /* While the search runs (searching): how far it is, in schedules evaluated of its budget,
     * which the status line shows as a bar; tick (NULL headless), called at most every
     * tick_every_ms, redraws the frame with it and says whether to go on (false: a key asked
     * to stop; the search then keeps the best it found so far). */
    bool searching;
    long search_done, search_budget;
    double tick_ms;           /* when tick was last called */
    double tick_every_ms;     /* EXPLORE_TICK_MS (tests: 0, a tick each progress report) */
    bool (*tick)(void *ctx);  /* ctx: busy_ctx */
    /* The lower bound of the shown plan's work (sim/core/bound.h): the title shows the bound that
     * holds for the drawn plan and the gap to it (explore_bound_shown). */
    struct bound_result bound;
    bool have_bound;
    const struct plan *bound_of; /* the plan bound holds for; NULL: to compute (an edit, a
                                  * bucket) */
    /* viewport: time at the left edge of the Gantt and time per cell (us, or t) */
    double t0, tpc;
    bool fitted;              /* t0/tpc follow the plan (until the user zooms or pans) */
    int lane_top;             /* first lane shown */
    int sel_lane, sel_idx;    /* cursor: lane (dev * parts + part), index in the device list */
    bool critical;            /* highlight the critical path */
    int marks;                /* the shown pass's change marks (*): 0 automatic (shown unless
                               * they would cover most boxes, explore_marks_shown), 1 on, -1 off */
    unsigned char *on_path;   /* [plan_total]: on the critical path */
    /* What frames reuse while the shown step stays (issue 27: a key at 4,096 micro-batches
     * redrew everything from the plan): every change of a shown plan, simulation or measured
     * row goes through explore_refresh or explore_realign, which count it in shown_gen. The
     * boxes and op kinds of the shown step (explore_shown_*) and the Gantt view's rows of it
     * (render/layout_lanes.h, tui/view_gantt.c) are kept for (step, shown_gen); the rows of
     * the last few steps shown stay while their plans do (n then p). */
    unsigned shown_gen;
    const struct pass_step *summary_of;
    unsigned summary_gen;
    int summary_boxes;
    bool summary_ops[OP__COUNT];
    struct gantt_cache *gantt_cache; /* owned (view_gantt_cache_free): the rows of the last
                                      * steps shown, the shown one first */
    struct copy_cache *copy_cache;   /* owned (view_copy_cache_free) */
    enum explore_mode mode;
    enum explore_prompt prompt;
    char input[128];          /* prompt text */
    bool input_default;       /* input holds a suggestion that the first key replaces */
    char status[1200];
    bool status_err;
    struct tune_result tune;  /* the last tuner run (kept when Esc stopped it: what ran) */
    bool have_tune;
    unsigned cfg_gen;         /* counts the configs shown (explore_build) */
    unsigned tune_gen;        /* cfg_gen the tuner ran on: t shows that run again, unchanged */
    /* Work that may keep keys waiting (a build of a huge config, loading a trace) runs on a
     * thread of its own while tick redraws the frame: the status line says what it is and for
     * how long (waiting, since wait_t0 ms), and Esc stops the wait (wait_stopped): the shown
     * plan stays, the work finishes unseen (orphan: joined and dropped before the next, or at
     * explore_fini). */
    const char *waiting;
    double wait_t0;
    bool wait_stopped;
    struct explore_job *orphan; /* a list of them */
    /* An edit's passes going on behind its base plan (tui/explore_build.c): while build is
     * not NULL, pl mirrors the steps it has made (pl is then not owned) and row_wanted (-1
     * none) is the row shown before the edit, shown again once it is made. */
    struct explore_build *build;
    int row_wanted;
    double build_cpu_base_ms, build_cpu_ms; /* the last build's thread: base, all (bench) */
    bool tune_search;         /* ... with the search as a third checkpointing mode (S) */
    bool tune_offload;        /* ... whose searches may offload (x->offload when it ran) */
    /* Offload (issue 29; --offload, O): the search step, and the tuner's search mode, may
     * offload forwards to host memory (OF/RL), as `optimize --search --offload` does. */
    bool offload;
    int tune_sel;
    int tune_scheme;          /* the tuner view shows this scheme only: its id + 1; 0 all (f) */
    bool utf8;
    int w, h;                 /* canvas size of the last draw (for paging) */
    /* Input-aware checkpointing (tui/view_buckets.c, sim/inputs/ckpt_plan.h): 'a' lists the buckets
     * of the config's sequence lengths; Enter shows a bucket's plan in place of the pass step
     * until n/p (or an edit) returns to the passes. */
    struct ckpt_plan *bucket_planner;  /* owned, NULL until 'a' */
    struct ckpt_plan_report *buckets;  /* owned, NULL until 'a' */
    int bucket_sel;
    bool bucket_on;                    /* explore_step() is bucket_step */
    struct pass_step bucket_step;      /* the shown bucket's plan (owned) and simulation */
    /* A measured run laid beside the simulation (traces/): aligned to the shown step. */
    struct trace *trace;      /* owned; NULL = none loaded */
    char trace_path[256];
    struct align_result meas; /* the trace matched to the shown step's plan */
    bool have_meas;
    bool show_meas;           /* a row under each lane: measured, or replayed (show_rep) */
    /* The replay (traces/replay.h, as `compare` makes it): the shown plan simulated with
     * every measured duration; r shows its timeline in the row under each lane. */
    struct replay_result rep;
    bool have_rep;
    bool show_rep;
    char rep_why[240];        /* why there is no replay */
    /* Where the last draw put the Gantt (tui/view_gantt.c), for the mouse and paging. */
    int gantt_top;            /* screen row of the first lane */
    int lane_rows, lane_h;    /* rows of a lane's boxes; rows from one lane to the next */
    int lanes_shown;          /* lanes the Gantt had room for */
    int copy_rows, copy_parts; /* 1: a copy row under each device's parts lanes (a plan that
                                * offloads, tui/view_copy.c), else 0 */
    int sel_col;              /* screen column of the selection's caret, or -1 */
    int pass_col[8];          /* the pass bar: screen column where each step's item starts */
    int list_first;           /* the tuner's (or buckets') first row shown */
    int help_top;             /* the help's first line shown (it scrolls on short screens) */
    /* A drag in progress (tui/explore_mouse.c): where it began, t0 then, whether it moved. */
    bool drag, drag_moved;
    int drag_col, drag_row;
    double drag_t0;
};

/* Takes ownership of loaded (may be NULL). Builds the first pipeline; on failure e says why. */
int explore_init(struct explore *x, const struct config *cfg, struct plan *loaded, bool utf8,
                 struct mt_err *e);
void explore_fini(struct explore *x);
/* Shows config c when its whole pipeline builds (scheme, validation, passes, simulation):
 * then x->cfg = *c. Otherwise nothing changes and e says why. */
int explore_apply(struct explore *x, const struct config *c, struct mt_err *e);
/* The live edits (tui/explore_edit.c): all or nothing. Each steps the drawn config's value by
 * dir (-1, +1), over values the scheme refuses to the nearest one it allows; when there is
 * none the config stays as drawn and the status line says why. Returns reaction flags. */
enum explore_edit {
    EDIT_DEVICES,    /* d / D: pp (2 at a time for Chimera) */
    EDIT_MB_COUNT,   /* m / M: micro-batches, the micro-batch size kept */
    EDIT_MB_SIZE,    /* b / B: micro-batch size halved / doubled, the global batch kept */
    EDIT_CHUNKS,     /* v / V: chunks per device (W, ZB-W) */
    EDIT_SCHEME,     /* s: the next scheme in the cycle */
    EDIT_CAP,        /* [ / ]: the memory cap / x 1.25, in whole MiB; +- 0.25 M_θ (unit) */
    EDIT_ITERATIONS, /* i / I: iterations one async plan spans */
    EDIT_UPDATE,     /* u / U: backwards per optimizer step (async) */
};
int explore_edit(struct explore *x, enum explore_edit what, int dir);
/* Scheme names for the help and the status line, asked of the scheme registry
 * (model/scheme_registry.h) in its order: the `s` cycle's, and of those the asynchronous ones
 * and those whose chunks the config sets (v/V). */
enum explore_schemes { SCHEMES_CYCLE, SCHEMES_ASYNC, SCHEMES_CHUNKS };
void explore_scheme_names(enum explore_schemes what, const char *sep, char *buf, size_t n);
/* The step shown (plan, sim, changes). */
const struct pass_step *explore_step(const struct explore *x);
int explore_lanes(const struct explore *x);
/* Handles one key (curses key codes or characters). Returns reaction flags. */
int explore_key(struct explore *x, int key);
/* Zoom by factor keeping time center where it is on screen, within the zoom's limits; pan
 * limits (tui/keys.c). */
int explore_zoom_at(struct explore *x, double factor, double center);
void explore_clamp_t0(struct explore *x);
/* The mouse, as htop has it (tui/explore_mouse.c): a click selects the instruction under it
 * (or a lane by its name, a pass step in the pass bar, a row of the tuner or the buckets: a
 * second click on the selected row loads it), the wheel zooms around the time under the
 * pointer, a drag pans. col and row are screen cells of the last draw. */
enum explore_mouse { MOUSE_PRESS, MOUSE_MOVE, MOUSE_RELEASE, MOUSE_WHEEL_UP, MOUSE_WHEEL_DOWN };
int explore_mouse(struct explore *x, enum explore_mouse ev, int col, int row);
/* Draws the whole screen into g (its size is the terminal's). */
void explore_draw(struct explore *x, struct cells *g);
/* Only the status line (its last row), over a frame drawn before: what a wait redraws (a
 * frame of a huge plan takes longer than the wait's tick). */
void explore_draw_status(struct explore *x, struct cells *g);
/* Shows pass row row (enum pass_row, or PASS_ROW_SEARCH). Stepping to the search runs it
 * the first time (explore_search); on failure the row stays and the status says why. */
int explore_set_row(struct explore *x, int row);
/* The search step (sim/search/search.h) under the cap of the drawn config (its memory_per_device;
 * M_θ under unit costs), from every step of the passes, as `optimize --search` makes it;
 * x->busy says so first. MT_EUNSUPPORTED for asynchronous schemes. */
int explore_search(struct explore *x, struct mt_err *e);
/* The pass rows the pass bar shows: the passes' and, but for asynchronous schemes, the
 * search's. */
int explore_rows(const struct explore *x);
/* The lower bound that holds for the shown plan (with the memory part when it is under the
 * cap) and its gap in %; false when there is none. */
bool explore_bound_shown(const struct explore *x, double *lb, double *gap_pct);
/* The shown step fits its cap and its step equals the bound: no schedule of its work is faster
 * (bound_optimal, sim/core/bound.h); the title says "optimal" in place of the gap. */
bool explore_bound_optimal(const struct explore *x);
void explore_toggle_critical(struct explore *x);
/* Whether the shown step's change marks (*) are drawn: as the '*' key set them, or, left
 * automatic, unless the step changed more than half of its boxes (after the search nearly all:
 * the marks would hide the colours). */
bool explore_marks_shown(struct explore *x);
/* '*': the change marks on / off (from automatic, the other way from what is shown). */
int explore_toggle_marks(struct explore *x);
/* The keys explore_status_shown ends the status line with; tui/view_frame.c keeps as many of
 * them as the width allows ("?: help" always). */
#define EXPLORE_HINTS "   n/p: passes  arrows: select  +/-/0: zoom  t: tune  e: export  ?: help  q: quit"
/* Candidate indices ranked for the tuner view (feasible by throughput first). */
int explore_tune_rank(const struct explore *x, int *order);
/* Loads the selected tuner candidate into the config (and shows the prepose step when the
 * candidate runs with Mario's checkpointing). */
void explore_tune_load(struct explore *x);
/* Loads a measured trace (ours or Kineto) and aligns it to the shown step; the Gantt then
 * shows a measured row under each lane. On failure the state is unchanged. */
int explore_load_trace(struct explore *x, const char *path, struct mt_err *e);
/* Re-aligns the loaded trace after the shown step changed. */
void explore_realign(struct explore *x);
/* Writes the shown step: .json plan, .trace.json Chrome trace, .svg/.pdf/.png picture. */
int explore_export(struct explore *x, const char *path, struct mt_err *e);
/* Runs the tuner on the current config, with the search as a third checkpointing mode when
 * search (seconds: `tune --search`, with --offload when x->offload); progress calls back (may be NULL) and may stop it: the
 * candidates that ran are kept and ranked, the status line says how many. */
void explore_run_tuner(struct explore *x, bool search, tune_progress_fn progress, void *ctx);
/* The same in two halves, for a tuner on a thread of its own (tui/screen.c): compute touches
 * no explorer state (cfg is a copy; e says why it failed); show takes ownership of *r (made on
 * config generation gen, x->cfg_gen then) and opens the tuner view, or when !open (Esc
 * stopped it and the user went on) keeps it for t and says so. */
int explore_tune_compute(const struct config *cfg, bool search, bool offload,
                         tune_progress_fn progress, void *ctx, struct tune_result *r,
                         struct mt_err *e);
void explore_tune_show(struct explore *x, struct tune_result *r, bool search, unsigned gen,
                       bool open);
/* t: the last tuner run again when it ran on the shown config, whole or as far as it got
 * before Esc (t in the view of a stopped run runs it again); false when the tuner must run. */
bool explore_tune_reopen(struct explore *x);
/* r: the row under each lane shows the replay instead of the measured run, or back. */
int explore_toggle_replay(struct explore *x);
/* Offload for the search step and the tuner's search mode (tui/explore_offload.c): on or off
 * (O toggles it). The search step is made again when shown (else when next stepped to), and
 * the bound drops its memory part while it is on. A plan that offloads, shown as given, and
 * an asynchronous scheme have no search: the status line says so. Returns reaction flags. */
int explore_set_offload(struct explore *x, bool on);
/* --search, --offload (tui/cmd_explore.c): the first frame on the search step, offload on.
 * MT_EINVAL naming the flag when the shown pipeline has no search (asynchronous, or a plan
 * that offloads shown as given) or the search fails. */
int explore_open_search(struct explore *x, bool search, bool offload, struct mt_err *e);
int explore_toggle_offload(struct explore *x);

/* Lowers the calling thread's priority (Linux: nice is per thread, and threads it starts
 * inherit it): background work (the tuner, a build, a trace) yields the CPU to the thread that
 * listens for keys, so Esc is heard at once on a loaded machine. */
void explore_background_thread(void);
/* Work that may keep keys waiting (tui/explore_wait.c): work(arg) on a thread of its own while
 * x->tick shows what on the status line and listens; headless (no tick) here. True when it
 * ran: arg holds its result. False when Esc stopped the wait: arg is the wait's, and drop(arg)
 * releases it (what work made, and arg itself) once work has finished, or at once when it
 * never started. */
typedef void (*explore_work_fn)(void *arg);
bool explore_wait(struct explore *x, explore_work_fn work, explore_work_fn drop, void *arg,
                  const char *what);
/* explore_wait, watched (either may be NULL): describe(arg, buf, n), asked on the waiting
 * thread before each tick, says what runs now (in place of what: "building: Mario's passes:
 * prepose, round 1"); stop(arg), when Esc stops the wait, asks work to end early, so that the
 * next wait does not wait for it (it is still dropped unseen). */
bool explore_wait_watched(struct explore *x, explore_work_fn work, explore_work_fn drop,
                          explore_work_fn stop, void (*describe)(void *arg, char *buf, size_t n),
                          void *arg, const char *what);
/* explore_wait_watched that ends once ready(arg) holds (or work has ended), work going on
 * behind: *behind is then its thread (NULL when it ran here), to be asked explore_job_ended,
 * joined (explore_job_join: the thread, not arg), or left to end unseen (explore_job_orphan:
 * then dropped). The keys wait for what work makes first: its thread keeps their priority
 * until work calls explore_background_thread, once ready. Headless work runs here to its end. */
bool explore_wait_ready(struct explore *x, explore_work_fn work, explore_work_fn drop,
                        explore_work_fn stop, void (*describe)(void *arg, char *buf, size_t n),
                        bool (*ready)(void *arg), void *arg, const char *what,
                        struct explore_job **behind);
bool explore_job_ended(const struct explore_job *j);
void explore_job_join(struct explore_job *j);
void explore_job_orphan(struct explore *x, struct explore_job *j);
/* Joins the stopped pieces of work and drops them (explore_fini); or only those that have
 * ended (as the loop goes). The next wait waits for them first. */
void explore_wait_reap(struct explore *x);
void explore_wait_reap_ended(struct explore *x);

/* An edit's build (tui/explore_build.c). Shows config cfg (or the plan loaded, when given)
 * once its base plan is made: headless, once every step is; on a terminal (x->tick) the
 * bound, the passes and the search step (when it was shown) go on behind it, and the pass
 * bar fills in as explore_build_poll finds their steps. On failure nothing changes and e
 * says why. */
int explore_build(struct explore *x, const struct config *cfg, struct plan *loaded,
                  struct mt_err *e);
/* Takes the steps made since the last call, and the whole pipeline once the build has ended;
 * the row asked for before it was made is then shown. R_REDRAW when the frame changed,
 * R_STATUS (the status line's progress) while it runs, R_NONE when no build runs. The
 * loop calls it every ~100 ms while explore_build_running. */
int explore_build_poll(struct explore *x);
bool explore_build_running(const struct explore *x);
/* Esc while the passes run: they stop at the next one, the steps made are kept and the status
 * line says so. R_NONE when none run. */
int explore_build_stop(struct explore *x);
/* A row not made (yet): the status line says so; shown when it comes (the search is then run
 * after the passes). R_REDRAW. */
int explore_build_wait_row(struct explore *x, int row);
/* What the running passes do, for the status line ("passes 2/4: overlap (2 steps made),
 * 1.2 s"); false when none run. */
bool explore_build_note(const struct explore *x, char *buf, size_t n);
/* The shown pipeline released: a build going on is stopped and dropped once it ends
 * (explore_build_fini: joined now). */
void explore_build_release(struct explore *x);
void explore_build_fini(struct explore *x);

/* Views (tui/view_*.c). */
void view_gantt_draw(struct explore *x, struct cells *g, int top, int height);
void view_gantt_legend(struct explore *x, struct cells *g, int y);
void view_inspect_draw(struct explore *x, struct cells *g, int top, int height);
void view_tune_draw(struct explore *x, struct cells *g, int top, int height);
/* The tuner view's rows (its scheme filter applied), and f: the next scheme in the results,
 * then all again. */
int view_tune_shown(const struct explore *x);
int view_tune_filter_next(struct explore *x);
void view_help_draw(struct explore *x, struct cells *g);
void view_buckets_draw(struct explore *x, struct cells *g, int top, int height);
/* The bucket list (tui/view_buckets.c): made once per config from its lengths (model/seqlen.h),
 * then MODE_BUCKETS; its keys; what it owns, released (also when the config changes). */
int explore_buckets_open(struct explore *x);
int explore_buckets_key(struct explore *x, int key);
void explore_buckets_fini(struct explore *x);
/* After the shown step changed (or its plan, simulation or measured row): the cursor back on
 * it, the bound and the critical path again, what frames keep of it dropped. */
void explore_refresh(struct explore *x);
/* The shown step's boxes (compute, allreduce, optimizer: what the Gantt draws as boxes) and
 * whether it holds each op kind, counted once per shown step. */
int explore_shown_boxes(struct explore *x);
const bool *explore_shown_ops(struct explore *x);
/* What the Gantt view keeps between frames (the rows of the last steps shown), released
 * (explore_fini, a new pipeline); or only the rows with a measured row (aligned to the step
 * that was shown). */
void view_gantt_cache_free(struct explore *x);
/* The copy rows of a plan that offloads (tui/view_copy.c): whether the shown step has them (1)
 * or not (0); screen rows from the Gantt's top of lane's first row and of device dev's copy row
 * (as the last draw placed them: lane_top, lane_h, copy_rows); the lane under a screen row, or
 * -1 with *copy_dev the device whose copy row it is (else -1); how many lanes from lane_top fit
 * avail rows; the rows drawn (their copies, the host memory beside them), over the lanes'
 * [top, bottom), sel_id the selected instruction, mem_scale the memory bars'; what the rows
 * keep between frames, released. */
int view_copy_rows(struct explore *x);
int explore_lane_y(const struct explore *x, int lane);
int explore_copy_y(const struct explore *x, int dev);
int explore_row_lane(const struct explore *x, int row, int *copy_dev);
int view_copy_fit(const struct explore *x, int lane_top, int lanes, int avail);
void view_copy_draw(struct explore *x, struct cells *g, int top, int bottom, int sel_id,
                    double mem_scale);
void view_copy_cache_free(struct explore *x);
/* The legend's swatch of op (OF or RL): its glyph on the copy row. */
void view_copy_swatch(struct explore *x, struct cells *g, int col, int y, enum op op);
void view_gantt_cache_forget_measured(struct explore *x);

/* With offload on (O, --offload) the search's schedules may offload: the shown bound drops its
 * memory part, as `optimize --search --offload` has it (sim/core/bound.h). */
void explore_bound_offload(struct explore *x);

/* Numbers in units that fit them (tui/view_units.c); unit-cost plans in t and M_θ. */
void explore_fmt_bytes(const struct explore *x, double v, char *buf, size_t n); /* "2.78M" */
void explore_fmt_cap(const struct explore *x, double cap, char *buf, size_t n);  /* "40G" */
/* A peak with the decimals that tell it from cap: 40.02G beside a 40G cap. */
void explore_fmt_peak(const struct explore *x, double peak, double cap, char *buf, size_t n);
void explore_fmt_time(const struct explore *x, double us, char *buf, size_t n); /* "2.593ms" */
/* samples/s with two decimals ("56.43", "49.65k"); samples/t (unit costs) with four */
void explore_fmt_rate(const struct explore *x, double v, char *buf, size_t n);
/* The last draw was below EXPLORE_MIN_W x EXPLORE_MIN_H: only "too small" is on screen, and
 * keys other than quit are not acted on unseen. */
bool explore_too_small(const struct explore *x);
/* The status line for the shown step: its name, time and change against base, the keys. */
void explore_status_shown(struct explore *x);
/* The devices over the cap in the shown step: how many, and the one furthest over. */
int explore_oom(const struct explore *x, int *worst_dev);
/* An over-the-cap plan makes the status line an error that says so (first: before what it
 * says, else after). */
void explore_status_oom(struct explore *x, bool first);

/* Geometry shared by the views. */
#define EXPLORE_GUTTER 7   /* lane labels */
#define EXPLORE_MEM_W 24   /* memory bar column (16 below 110 columns: explore_mem_width) */
#define EXPLORE_BOTTOM 7   /* inspect + memory-over-time panel */
int explore_gantt_width(const struct explore *x, int w);
int explore_mem_width(const struct explore *x, int w);
/* The time the Gantt's width stands for when fitted: the longest pass step, or the measured
 * step when a trace is shown and longer. '0' (explore_fit) shows it whole; zoom goes from
 * there in to EXPLORE_ZOOM_MAX times, pan no further than half a screen past its end. */
double explore_longest(const struct explore *x);
void explore_fit(struct explore *x);
#define EXPLORE_ZOOM_MAX 4096

#endif
