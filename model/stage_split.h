/* model/stage_split.h: which transformer layers each pipeline stage holds and which stages hold
 * the embedding and the loss (LM head): the even split of today, Megatron-LM's uneven-stage
 * flags and layout string, torchtitan's first/last stage weights (issue 39 item 2). */
#ifndef MT_MODEL_STAGE_SPLIT_H
#define MT_MODEL_STAGE_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct mt_err;

/* The most stages a layout may name: every device holding the most chunks. */
#define PP_LAYOUT_MAX_STAGES (4096 * 64) /* CONFIG_MAX_DEVICES x CONFIG_MAX_CHUNKS */

/* The layers of each of num_stages stages in model order (stage s takes the layers after those
 * of stages 0 .. s-1; with v stages a device, num_stages = pp x v and the order is Megatron's
 * virtual-pipeline order: stage k pp + r is chunk k of rank r under interleaving, the scheme's
 * placement otherwise) into layers_out[num_stages], and whether each holds the embedding
 * (embed_out) and the loss and LM head (head_out). The rule is the config's, at most one of:
 *   pipeline_layout                    Megatron's --pipeline-model-parallel-layout string
 *   decoder_first/last_pipeline_num_layers   Megatron's uneven first and last ranks
 *   account_for_embedding/loss_in_pipeline_split   Megatron: the ends counted as a layer
 *   pipeline_parallel_first/last_stage_less_layers  torchtitan's weights of the ends
 *   none                               today's: as even as can be, the remainder to the
 *                                      middle stages (the ends carry the embedding and head)
 * The source of each rule is in model/stage_split.c. The layers sum to model.num_layers;
 * stages may hold none under the layout and the ends' rules, never under the default.
 * MT_EINVAL naming the key ("decoder_first_pipeline_num_layers: ..."). */
int stage_split_layers(const struct config *c, int num_stages, int *layers_out, bool *embed_out,
                       bool *head_out, struct mt_err *e);
/* What can be checked without the pipeline's geometry (the tuner chooses it): at most one rule,
 * the layout readable with model.num_layers layers, the first and last counts within the
 * model. MT_EINVAL naming the key. */
int stage_split_check_spec(const struct config *c, struct mt_err *e);
/* stage_split_layers for a pipeline of num_stages stages, its results dropped (config_validate). */
int stage_split_check(const struct config *c, int num_stages, struct mt_err *e);
/* Whether the config asks for a split other than the default. */
bool stage_split_is_custom(const struct config *c);
/* torchtitan's weights given (either key or flag): the other one takes torchtitan's default, 1. */
void stage_split_less_layers_given(struct config *c);

/* ---- model/pp_layout.c: Megatron's layout string, read and written -------------------------
 * Megatron-LM megatron/core/transformer/pipeline_parallel_layer_layout.py (parse_str_to_list,
 * validate_layer_layout) and docs/user-guide/features/pipeline_parallel_layout.md. The rules,
 * in our words (pp_layout.c has the details):
 *   - '|' separates stages; a stage may be empty ("E||t|L" has an empty second stage);
 *   - E the embedding, t a transformer (decoder) layer, m an MTP layer, L the loss;
 *   - x*n repeats the symbol or '|' before it n times (n >= 0 digits); (…)*n repeats a
 *     parenthesised run, which may hold '|' and x*n but no parentheses;
 *   - commas are cosmetic and ignored anywhere, even between a count's digits;
 *   - no whitespace (Megatron's parser takes none);
 *   - E exactly once, opening the first stage; L exactly once, closing the last stage;
 *   - the stages are pp x vpp, in virtual-pipeline order (vpp = stages / pp).
 * MTP layers ('m') are refused: the cost model has none (issue 38). */
struct pp_layout {
    int num_stages;
    int num_layers; /* t's in all */
    int *layers;    /* [num_stages] t's of each stage */
    bool *embed;    /* [num_stages] holds E (stage 0 only) */
    bool *loss;     /* [num_stages] holds L (the last stage only) */
};

/* Reads s into *out (owned: pp_layout_fini). MT_EINVAL "column 12: 't*' needs a count" (no
 * key in front: callers add "pipeline_layout: " or the flag's name); *out is zeroed then. */
int pp_layout_parse(const char *s, struct pp_layout *out, struct mt_err *e);
void pp_layout_fini(struct pp_layout *l);
/* Writes the layout of num_stages stages (layers, and E and L where embed and loss say) into buf
 * of n bytes, NUL-ended, in a form Megatron reads back: each stage E?, t or t*k, L?; runs of
 * equal stages as (S|)*k where that is shorter ("Et*3|(t*4|)*6,t*3L"). MT_EINVAL if it does
 * not fit in n bytes. */
int pp_layout_write(int num_stages, const int *layers, const bool *embed, const bool *loss,
                    char *buf, size_t n, struct mt_err *e);

#endif
