/* sim/schemes/scheme.c: the scheme table and what every generator shares: geometry, costs, and the
 * communication and allreduce instructions that complete a compute order.
 *
 * Receives are posted right before the compute that needs them and sends right after the
 * compute that produces them, as DeepSpeed and Megatron-LM do; Mario's passes move them. */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>

#include "model/cost.h"
#include "model/scheme_registry.h"
#include "sim/core/recv_order.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Each record's generator (model/scheme_registry.c has the rest of the record). Async and
 * PipeDream share one: they differ in what the simulator and executor keep, not in order. */
static const scheme_order_fn scheme_generators[SCHEME__COUNT] = {
    [SCHEME_V] = scheme_order_1f1b,
    [SCHEME_X] = scheme_order_chimera,
    [SCHEME_W] = scheme_order_interleaved,
    [SCHEME_GPIPE] = scheme_order_gpipe,
    [SCHEME_ASYNC] = scheme_order_async,
    [SCHEME_PIPEDREAM] = scheme_order_async,
    [SCHEME_ZBH1] = scheme_order_zbh1,
    [SCHEME_ZBH2] = scheme_order_zbh2,
    [SCHEME_ZBV] = scheme_order_zbv,
    [SCHEME_ZBW] = scheme_order_zbw,
    [SCHEME_DUALPIPEV] = scheme_order_dualpipev,
    [SCHEME_ZBV_TORCH] = scheme_order_zbv_torch,
    [SCHEME_VHALF] = scheme_order_vhalf,
    [SCHEME_VMIN] = scheme_order_vmin,
    [SCHEME_DUALPIPE] = scheme_order_dualpipe,
};

scheme_order_fn scheme_generator(enum scheme_id id)
{
    return (unsigned)id < SCHEME__COUNT ? scheme_generators[id] : NULL;
}

int scheme_geom(const struct config *c, struct plan_geom *g, struct mt_err *e)
{
    TRY(config_validate(c, e));
    const struct scheme_record *r = scheme_registry_get(c->scheme);
    if (scheme_generator(c->scheme) == NULL)
        return err_set(e, MT_EINVAL,
                       "pipeline_scheme: Auto must be resolved by the tuner (mario-tui tune)");
    g->scheme = c->scheme;
    g->devices = config_pp(c);
    g->mbs = config_microbatches(c);
    if (config_scheme_async(c->scheme)) /* K iterations of N: micro-batch k * N + m */
        g->mbs *= c->iterations;
    /* Chimera's two parts are replicas of the device's stage; the others' parts are stages. */
    g->parts = r->replicas > 1 ? r->replicas : config_stages_per_device(c);
    g->stages = g->devices * config_stages_per_device(c);
    if ((double)g->mbs * g->stages * g->parts > SCHEME_MAX_CELLS)
        return err_set(e, MT_EINVAL,
                       "num_microbatches: %d micro-batches x %d stages is over the limit of %d",
                       g->mbs, g->stages, SCHEME_MAX_CELLS);
    return MT_OK;
}

int scheme_costs(const struct config *c, struct cost_model *out, struct mt_err *e)
{
    struct plan_geom g;
    TRY(scheme_geom(c, &g, e));
    /* Chimera keeps two replicas of each stage, which reduce their gradients together; the
     * CP ranks hold the same weights, so Megatron reduces over dp x cp */
    int group = c->cluster.dp * config_cp(c) * scheme_registry_get(g.scheme)->replicas;
    return cost_model_build(c, g.stages, g.parts, group, out, e);
}

static void scheme_add_ar_os(struct plan *p)
{
    const struct plan_geom *g = plan_geom(p);
    bool replicated =
        plan_config(p)->cluster.dp > 1 || scheme_registry_get(g->scheme)->replicas > 1;
    for (int d = 0; d < g->devices; d++) {
        /* Parts in ascending stage order on every device, so the collectives of Chimera's
         * two replicas are entered in the same order on both sides. */
        int part_of[CONFIG_MAX_CHUNKS], n = g->parts;
        for (int i = 0; i < n; i++)
            part_of[i] = i;
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && vpipe_stage(g, d, 0, part_of[j - 1]) >
                                         vpipe_stage(g, d, 0, part_of[j]); j--) {
                int t = part_of[j];
                part_of[j] = part_of[j - 1];
                part_of[j - 1] = t;
            }
        for (int op = replicated ? OP_AR : OP_OS; op <= OP_OS; op++)
            for (int i = 0; i < n; i++)
                plan_append(p, d, (struct instr){(enum op)op, -1, part_of[i],
                                                 vpipe_stage(g, d, 0, part_of[i]), -1, 0, 0, 0});
    }
}

void scheme_add_comm(struct plan *p)
{
    const struct plan_geom *g = plan_geom(p);
    if (config_scheme_async(g->scheme)) {
        scheme_async_add_comm(p);
        return;
    }
    for (int d = 0; d < g->devices; d++) {
        /* each compute gains at most a receive before and a send after: the list is rebuilt
         * in one pass and handed to the plan (inserting in place shifted the rest: quadratic
         * in micro-batches; copying it back cost as much as making it) */
        const struct instr *ins = plan_instrs(p, d);
        int n = plan_len(p, d), cap = VPIPE_WRAP_MAX * n + 2 * g->parts + 1;
        struct instr *list = xreallocarray(NULL, (size_t)cap, sizeof *list);
        plan_adopt_list(p, d, list, vpipe_wrap_list(g, d, ins, n, list), cap);
    }
    /* a V's pair of devices carries two stages' messages: receive them in send order, so any
     * tagless channel (NCCL) can run the plan. A plan it cannot index is left for the
     * validator to name. */
    (void)plan_match_receives(p, NULL);
    scheme_add_ar_os(p);
}

int scheme_build(const struct config *c, struct plan **out, struct mt_err *e)
{
    *out = NULL;
    struct plan_geom g;
    TRY(scheme_geom(c, &g, e));
    struct cost_model cost;
    TRY(scheme_costs(c, &cost, e));
    struct plan *p = plan_new(c, &g);
    int rc = scheme_generator(c->scheme)(p, &cost, e);
    cost_model_fini(&cost);
    if (rc != MT_OK) {
        plan_free(p);
        return rc;
    }
    scheme_add_comm(p);
    *out = p;
    return MT_OK;
}
