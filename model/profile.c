/* model/profile.c: a calibration applied to one stage (model/profile.h). Each term of a fit is
 * scaled from the measured shape to the config's by the analytic quantity it stands for:
 * per-layer times by a block's FLOPs, the head's by the LM head's FLOPs (s·b·h·V), the
 * embedding's by its lookups (s·b·h); per-layer bytes by a block's activations, the
 * checkpoint and p2p message by s·b·h, the head's activations by its logits (s·b·V); static
 * bytes by parameters (a block's, or V·h at the ends). Time intercepts (per-stage overheads,
 * the p2p latency) are not scaled; byte intercepts of activations, checkpoints and transients
 * (a stage's input and output buffers) scale by s·b·h. Equal shapes give factors of exactly 1. */
#include <config.h>
#include "model/profile.h"

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"

void profile_shape_of(const struct config *c, struct profile_shape *out)
{
    const struct model_spec *m = &c->model;
    *out = (struct profile_shape){(int)m->arch,        m->hidden_size, m->num_attention_heads,
                                  m->seq_length,       m->vocab_size,  m->ffn_hidden_size,
                                  c->micro_batch_size, c->cluster.tp};
}

static double profile_ratio(double now, double then)
{
    return then > 0 && now > 0 && isfinite(now / then) ? now / then : 1.0;
}

/* a·n scaled by ka, the ends by ke and kh, the intercept by kb */
static double profile_term(const struct profile_fit *f, const struct stage_cost *st, double ka,
                           double ke, double kh, double kb)
{
    return f->a * st->num_layers * ka + f->b * kb + (st->has_embed ? f->embed * ke : 0) +
           (st->has_head ? f->head * kh : 0);
}

/* The factors from the measured shape to c's. */
struct profile_scale {
    double k_sbh, k_fw, k_head, k_act, k_logits, k_par, k_vh;
};

static void profile_scale_of(const struct profile *p, const struct config *c,
                             struct profile_scale *k)
{
    const struct profile_shape *s = &p->shape;
    struct config m = *c; /* the measured shape */
    m.model.arch = (enum model_arch)s->arch;
    m.model.hidden_size = s->hidden_size;
    m.model.num_attention_heads = s->num_attention_heads;
    m.model.seq_length = s->seq_length;
    m.model.vocab_size = s->vocab_size;
    m.model.ffn_hidden_size = s->ffn_hidden_size;
    m.micro_batch_size = s->micro_batch_size;
    m.cluster.tp = s->tp > 0 ? s->tp : 1;
    const struct model_spec *a = &c->model, *b = &m.model;
    double sbh_c = (double)c->micro_batch_size * a->seq_length * a->hidden_size;
    double sbh_m = (double)m.micro_batch_size * b->seq_length * b->hidden_size;
    double k_sbh = profile_ratio(sbh_c, sbh_m);
    double k_fw = profile_ratio(cost_layer_fw_flops(c), cost_layer_fw_flops(&m));
    double k_head =
        profile_ratio(sbh_c * a->vocab_size / c->cluster.tp, sbh_m * b->vocab_size / m.cluster.tp);
    double k_act = profile_ratio(cost_layer_act_bytes(c), cost_layer_act_bytes(&m));
    double k_logits =
        profile_ratio((double)c->micro_batch_size * a->seq_length * a->vocab_size / c->cluster.tp,
                      (double)m.micro_batch_size * b->seq_length * b->vocab_size / m.cluster.tp);
    double k_par = profile_ratio(cost_layer_params(c), cost_layer_params(&m));
    double k_vh = profile_ratio((double)a->vocab_size * a->hidden_size / c->cluster.tp,
                                (double)b->vocab_size * b->hidden_size / m.cluster.tp);
    *k = (struct profile_scale){k_sbh, k_fw, k_head, k_act, k_logits, k_par, k_vh};
}

void profile_apply(const struct profile *p, const struct config *c, struct stage_cost *st)
{
    if (!p->enabled || c->unit.enabled)
        return;
    struct profile_scale k;
    profile_scale_of(p, c, &k);
    double k_sbh = k.k_sbh, k_fw = k.k_fw, k_head = k.k_head, k_act = k.k_act,
           k_logits = k.k_logits, k_par = k.k_par, k_vh = k.k_vh;

    if (p->fw.points > 0)
        st->fw = profile_term(&p->fw, st, k_fw, k_sbh, k_head, 1);
    if (p->bw.points > 0)
        st->bw = profile_term(&p->bw, st, k_fw, k_sbh, k_head, 1);
    if (p->rc.points > 0)
        st->rc = profile_term(&p->rc, st, k_fw, k_sbh, k_head, 1);
    else if (p->fw.points > 0)
        st->rc = st->fw; /* a recompute is a forward */
    if (p->os.points > 0)
        st->os = profile_term(&p->os, st, k_par, k_vh, k_vh, 1);
    if (p->ar.points > 0 && st->ar > 0)
        st->ar = profile_term(&p->ar, st, k_par, k_vh, k_vh, 1);
    if (p->p2p.points > 0)
        st->p2p = profile_term(&p->p2p, st, k_sbh, k_sbh, k_sbh, 1);
    /* a stage's activation intercept is its input and output buffers: s·b·h */
    if (p->act.points > 0)
        st->act = profile_term(&p->act, st, k_act, k_sbh, k_logits, k_sbh);
    if (p->ckpt.points > 0)
        st->ckpt = profile_term(&p->ckpt, st, k_sbh, k_sbh, k_sbh, k_sbh);
    if (p->static_bytes.points > 0)
        st->static_bytes = profile_term(&p->static_bytes, st, k_par, k_vh, k_vh, 1);
    if (p->fw_work_bytes.points > 0)
        st->fw_work_bytes = profile_term(&p->fw_work_bytes, st, k_act, k_sbh, k_logits, k_sbh);
    if (p->cfw_peak_bytes.points > 0)
        st->cfw_peak_bytes = profile_term(&p->cfw_peak_bytes, st, k_act, k_sbh, k_logits, k_sbh);
    if (p->bw_work_bytes.points > 0)
        st->bw_work_bytes = profile_term(&p->bw_work_bytes, st, k_act, k_sbh, k_logits, k_sbh);
    if (p->msg_bytes.points > 0) /* a message is s·b·h elements */
        st->msg_bytes = profile_term(&p->msg_bytes, st, k_sbh, k_sbh, k_sbh, k_sbh);
    /* fits of noisy points may dip below zero for a shape far from the measured one */
    double *v[] = {&st->fw,           &st->bw,        &st->rc,           &st->os,
                   &st->ar,           &st->p2p,       &st->act,          &st->ckpt,
                   &st->static_bytes, &st->fw_work_bytes, &st->cfw_peak_bytes, &st->bw_work_bytes,
                   &st->msg_bytes};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!(*v[i] >= 0))
            *v[i] = 0;
    if (st->ckpt > st->act)
        st->ckpt = st->act;
}

void profile_apply_split(const struct profile *p, const struct config *c, struct stage_cost *st)
{
    if (!p->enabled || c->unit.enabled)
        return;
    struct profile_scale k;
    profile_scale_of(p, c, &k);
    if (p->b.points > 0 && p->w.points > 0) {
        st->b = fmax(profile_term(&p->b, st, k.k_fw, k.k_sbh, k.k_head, 1), 0);
        st->w = fmax(profile_term(&p->w, st, k.k_fw, k.k_sbh, k.k_head, 1), 0);
    }
    /* the weight GEMMs' inputs and output gradients: a block's activations' kind of bytes */
    if (p->w_keep_bytes.points > 0)
        st->w_keep =
            fmax(profile_term(&p->w_keep_bytes, st, k.k_act, k.k_sbh, k.k_logits, k.k_sbh), 0);
}
