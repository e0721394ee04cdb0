/* model/stage_split.c: the layers of each pipeline stage, by the config's rule (one of them).
 *
 * Default (no key): as even as can be, the remainder going to the middle stages, since the
 * first and last already carry the embedding and the head. This was cost_model_build's own
 * rule; it stays bit for bit (tests/unit/test_stage_split.c checks every (layers, stages) up to
 * 128 x 64 against a restatement of it).
 *
 * Megatron-LM (megatron/core/transformer/transformer_block.py get_num_layers_to_build,
 * transformer_config.py __post_init__'s checks, training/arguments.py), in our words:
 *   --pipeline-model-parallel-layout: the string says it all (model/pp_layout.c); it cannot
 *     be given with any of the flags below ("pipeline_model_parallel_layout cannot be set with
 *     other pipeline layout arguments").
 *   --decoder-first-pipeline-num-layers F / --decoder-last-pipeline-num-layers L: the first
 *     (last) pipeline rank holds F (L) layers, each > 0; the other layers are split evenly
 *     over the middle ranks, which must divide them exactly, and there are middle layers
 *     exactly when there are middle ranks. With vpp chunks a rank, each of a rank's chunks
 *     takes its share / vpp, which must divide exactly; rank r's chunk k is stage k pp + r
 *     (interleaving). Not with the two flags below.
 *   --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the
 *     embedding (loss) counts as one layer: num_layers + e + l must divide evenly over pp x vpp
 *     stages, and the first (last) stage holds one transformer layer less.
 * torchtitan (torchtitan/distributed/pipeline_parallel.py _generate_llm_fqn_per_model_part,
 * [parallelism] pipeline_parallel_first_stage_less_layers and _last_stage_less_layers, both 1
 * by default there): the embedding weighs `first` layers and the head `last`; the
 * num_layers + first + last effective layers are split over the stages (model order) as
 * evenly as can be, the remainder to the first stages; the first stage then holds its share
 * less `first` transformer layers, the last its share less `last`. It refuses more stages than
 * effective layers and a weight over the smallest share. One stage holds everything.
 * Both frameworks put the embedding on the first stage and the loss on the last. */
#include <config.h>
#include "model/stage_split.h"

#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/scheme_registry.h"
#include "util/err.h"
#include "util/xalloc.h"

bool stage_split_is_custom(const struct config *c)
{
    return c->pipeline_layout[0] != '\0' || c->decoder_first_pipeline_num_layers > 0 ||
           c->decoder_last_pipeline_num_layers > 0 || c->account_for_embedding_in_pipeline_split ||
           c->account_for_loss_in_pipeline_split || c->stage_less_layers;
}

void stage_split_less_layers_given(struct config *c)
{
    if (!c->stage_less_layers) {
        c->stage_less_layers = true;
        c->first_stage_less_layers = c->last_stage_less_layers = 1;
    }
}

/* The key of the first rule the config sets, and whether a second one is set too. */
static int split_one_rule(const struct config *c, struct mt_err *e)
{
    const char *rule[4] = {NULL, NULL, NULL, NULL};
    int n = 0;
    if (c->pipeline_layout[0] != '\0')
        rule[n++] = "pipeline_layout";
    if (c->decoder_first_pipeline_num_layers > 0)
        rule[n++] = "decoder_first_pipeline_num_layers";
    else if (c->decoder_last_pipeline_num_layers > 0)
        rule[n++] = "decoder_last_pipeline_num_layers";
    if (c->account_for_embedding_in_pipeline_split)
        rule[n++] = "account_for_embedding_in_pipeline_split";
    else if (c->account_for_loss_in_pipeline_split)
        rule[n++] = "account_for_loss_in_pipeline_split";
    if (c->stage_less_layers && n < 4)
        rule[n++] = "pipeline_parallel_first_stage_less_layers";
    if (n < 2)
        return MT_OK;
    if (strcmp(rule[0], "pipeline_layout") == 0)
        return err_set(e, MT_EINVAL,
                       "pipeline_layout: cannot be set with %s: the layout says every stage's "
                       "layers (Megatron: \"pipeline_model_parallel_layout cannot be set with "
                       "other pipeline layout arguments\")", rule[1]);
    return err_set(e, MT_EINVAL,
                   "%s: cannot be set with %s: they are two rules for the same split (Megatron "
                   "refuses the first and last stage's counts with the account-for flags; "
                   "torchtitan's weights are its own rule)", rule[0], rule[1]);
}

/* Today's: even, the remainder to the middle stages. */
static int split_even(const struct config *c, int S, int *layers, struct mt_err *e)
{
    int L = c->model.num_layers;
    if (S > L)
        return err_set(e, MT_EINVAL, "model.num_layers: %d stages but only %d layers", S, L);
    int base = L / S, extra = L % S, extra_from = (S - extra) / 2;
    for (int i = 0; i < S; i++)
        layers[i] = base + (i >= extra_from && i < extra_from + extra);
    return MT_OK;
}

static int split_layout(const struct config *c, int S, int *layers, struct mt_err *e)
{
    struct pp_layout l;
    if (pp_layout_parse(c->pipeline_layout, &l, e) != MT_OK)
        return err_wrap(e, "pipeline_layout");
    int v = config_stages_per_device(c), rc = MT_OK;
    if (l.num_stages != S)
        rc = err_set(e, MT_EINVAL,
                     "pipeline_layout: %d stages, but the pipeline has %d (pp %d x %d stages a "
                     "device; Megatron reads pp x vpp stages in virtual-pipeline order)",
                     l.num_stages, S, S / (v > 0 ? v : 1), v);
    else if (l.num_layers != c->model.num_layers)
        rc = err_set(e, MT_EINVAL,
                     "pipeline_layout: %d 't' layers, but model.num_layers is %d (Megatron: "
                     "\"Number of decoder layers ... must match num_layers\")", l.num_layers,
                     c->model.num_layers);
    for (int i = 0; rc == MT_OK && i < S; i++)
        layers[i] = l.layers[i];
    pp_layout_fini(&l);
    return rc;
}

static int split_first_last(const struct config *c, int S, int *layers, struct mt_err *e)
{
    const char *key = c->decoder_first_pipeline_num_layers > 0
                          ? "decoder_first_pipeline_num_layers"
                          : "decoder_last_pipeline_num_layers";
    int F = c->decoder_first_pipeline_num_layers, Z = c->decoder_last_pipeline_num_layers;
    int v = config_stages_per_device(c);
    const struct scheme_record *r = scheme_registry_get(c->scheme);
    if (v < 1 || S % v != 0)
        return err_set(e, MT_EINVAL, "%s: %d stages are not pp x %d stages a device", key, S, v);
    int pp = S / v;
    if (v > 1 && r != NULL && r->place != SCHEME_PLACE_LOOP)
        return err_set(e, MT_EINVAL,
                       "%s: Megatron defines it for interleaving, rank r holding stages r, r + pp, "
                       "...; %s places its %d stages a device otherwise: give the stages' layers "
                       "in pipeline_layout, or torchtitan's pipeline_parallel_first/"
                       "last_stage_less_layers", key, r->name, v);
    if (pp < 2)
        return err_set(e, MT_EINVAL,
                       "%s: needs pp >= 2: with one pipeline rank it is both first and last", key);
    long middle_layers = (long)c->model.num_layers - F - Z;
    int middle_ranks = pp - (F > 0) - (Z > 0);
    if (middle_layers < 0)
        return err_set(e, MT_EINVAL, "%s: first %d + last %d layers are over model.num_layers %d",
                       key, F, Z, c->model.num_layers);
    if ((middle_layers > 0) != (middle_ranks > 0))
        return err_set(e, MT_EINVAL,
                       "%s: %ld middle layers left for %d middle pipeline ranks (Megatron: "
                       "\"Mismatch\": both or neither)", key, middle_layers, middle_ranks);
    if (middle_ranks > 0 && middle_layers % middle_ranks != 0)
        return err_set(e, MT_EINVAL,
                       "%s: the %ld middle layers do not divide over the %d middle ranks "
                       "(Megatron splits them exactly)", key, middle_layers, middle_ranks);
    int per_middle = middle_ranks > 0 ? (int)(middle_layers / middle_ranks) : 0;
    int of_rank[3] = {F > 0 ? F : per_middle, per_middle, Z > 0 ? Z : per_middle};
    static const char *const rank_name[3] = {"first", "middle", "last"};
    for (int k = 0; k < 3; k++)
        if (of_rank[k] % v != 0 && (k != 1 || middle_ranks > 0))
            return err_set(e, MT_EINVAL,
                           "%s: the %s rank's %d layers do not divide over its %d chunks "
                           "(Megatron: each chunk takes an equal share)", key, rank_name[k],
                           of_rank[k], v);
    for (int s = 0; s < S; s++) {
        int rank = s % pp;
        layers[s] = of_rank[rank == 0 ? 0 : rank == pp - 1 ? 2 : 1] / v;
    }
    return MT_OK;
}

static int split_account(const struct config *c, int S, int *layers, struct mt_err *e)
{
    bool emb = c->account_for_embedding_in_pipeline_split;
    bool loss = c->account_for_loss_in_pipeline_split;
    const char *key = emb ? "account_for_embedding_in_pipeline_split"
                          : "account_for_loss_in_pipeline_split";
    long total = (long)c->model.num_layers + emb + loss;
    if (total % S != 0)
        return err_set(e, MT_EINVAL,
                       "%s: model.num_layers %d + %d (the ends counted as layers) = %ld does not "
                       "divide over %d stages (Megatron splits them exactly)", key,
                       c->model.num_layers, emb + loss, total, S);
    int per = (int)(total / S);
    for (int s = 0; s < S; s++)
        layers[s] = per;
    layers[0] -= emb;
    layers[S - 1] -= loss;
    if (layers[0] < 0 || layers[S - 1] < 0) /* per == 0: more stages than layers */
        return err_set(e, MT_EINVAL, "%s: %d stages for %ld layers and ends", key, S, total);
    return MT_OK;
}

static int split_less_layers(const struct config *c, int S, int *layers, struct mt_err *e)
{
    int L = c->model.num_layers, in = c->first_stage_less_layers, out = c->last_stage_less_layers;
    const char *key = "pipeline_parallel_first_stage_less_layers";
    if (S == 1) {
        layers[0] = L;
        return MT_OK;
    }
    long eff = (long)L + in + out;
    if (S > eff)
        return err_set(e, MT_EINVAL,
                       "%s: %d stages but %ld effective layers (num_layers %d + first %d + last "
                       "%d; torchtitan refuses more stages)", key, S, eff, L, in, out);
    long per = eff / S, extra = eff % S;
    if (in > per || out > per)
        return err_set(e, MT_EINVAL,
                       "%s: the %s stage's weight %d is over the smallest share, %ld layers "
                       "(torchtitan: \"exceeds minimum layers per stage\")",
                       in > per ? key : "pipeline_parallel_last_stage_less_layers",
                       in > per ? "first" : "last", in > per ? in : out, per);
    for (int s = 0; s < S; s++)
        layers[s] = (int)(per + (s < extra));
    layers[0] -= in;
    layers[S - 1] -= out;
    return MT_OK;
}

int stage_split_layers(const struct config *c, int num_stages, int *layers_out, bool *embed_out,
                       bool *head_out, struct mt_err *e)
{
    int S = num_stages;
    if (S < 1 || S > PP_LAYOUT_MAX_STAGES)
        return err_set(e, MT_EINVAL, "model.num_layers: %d stages", S);
    TRY(split_one_rule(c, e));
    if (c->pipeline_layout[0] != '\0')
        TRY(split_layout(c, S, layers_out, e));
    else if (c->decoder_first_pipeline_num_layers > 0 || c->decoder_last_pipeline_num_layers > 0)
        TRY(split_first_last(c, S, layers_out, e));
    else if (c->account_for_embedding_in_pipeline_split || c->account_for_loss_in_pipeline_split)
        TRY(split_account(c, S, layers_out, e));
    else if (c->stage_less_layers)
        TRY(split_less_layers(c, S, layers_out, e));
    else
        TRY(split_even(c, S, layers_out, e));
    /* Every rule, the layout's too (model/pp_layout.c), has E on the first stage and L on the
     * last. */
    for (int s = 0; s < S; s++) {
        embed_out[s] = s == 0;
        head_out[s] = s == S - 1;
    }
    return MT_OK;
}

int stage_split_check(const struct config *c, int num_stages, struct mt_err *e)
{
    if (num_stages < 1 || num_stages > PP_LAYOUT_MAX_STAGES)
        return err_set(e, MT_EINVAL, "model.num_layers: %d stages", num_stages);
    int *layers = xcalloc((size_t)num_stages, sizeof *layers);
    bool *ends = xcalloc(2 * (size_t)num_stages, sizeof *ends);
    int rc = stage_split_layers(c, num_stages, layers, ends, ends + num_stages, e);
    free(layers);
    free(ends);
    return rc;
}

int stage_split_check_spec(const struct config *c, struct mt_err *e)
{
    TRY(split_one_rule(c, e));
    int L = c->model.num_layers;
    if (c->pipeline_layout[0] != '\0') {
        struct pp_layout l;
        if (pp_layout_parse(c->pipeline_layout, &l, e) != MT_OK)
            return err_wrap(e, "pipeline_layout");
        int n = l.num_layers;
        pp_layout_fini(&l);
        if (n != L)
            return err_set(e, MT_EINVAL,
                           "pipeline_layout: %d 't' layers, but model.num_layers is %d", n, L);
    }
    if ((long)c->decoder_first_pipeline_num_layers + c->decoder_last_pipeline_num_layers > L)
        return err_set(e, MT_EINVAL,
                       "decoder_first_pipeline_num_layers: first %d + last %d layers are over "
                       "model.num_layers %d", c->decoder_first_pipeline_num_layers,
                       c->decoder_last_pipeline_num_layers, L);
    if (c->stage_less_layers && (c->first_stage_less_layers < 0 || c->last_stage_less_layers < 0))
        return err_set(e, MT_EINVAL, "pipeline_parallel_first_stage_less_layers: must be >= 0");
    return MT_OK;
}
