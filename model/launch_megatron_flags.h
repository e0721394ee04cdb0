/* model/launch_megatron_flags.h: pretrain_gpt.py's flags as model/launch_megatron.c reads them
 * (megatron/training/arguments.py names them; docs/launchers.md lists them): each flag's
 * argument shape and what becomes of it, read into the config (an mf_id), not modelled
 * (F_WARN, with why) or skipped on purpose (F_SKIP). Private to model/. */
#ifndef MT_MODEL_LAUNCH_MEGATRON_FLAGS_H
#define MT_MODEL_LAUNCH_MEGATRON_FLAGS_H

#include <stddef.h>

enum mf_id {
    F_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_GROUPS, F_GQA, F_SWIGLU, F_NORM, F_NOBIAS, F_QKVBIAS,
    F_SEQ, F_MAXPOS, F_VOCAB, F_TOKTYPE, F_TOKMODEL, F_DIVBY, F_UNTIE, F_KVCH, F_QKNORM,
    F_TP, F_PP, F_VPP_LAYERS, F_VPP_STAGES, F_CP, F_EP, F_ETP, F_EXPERTS, F_MLA, F_SP, F_DISTOPT,
    F_MBS, F_GBS, F_RC_GRAN, F_RC_METHOD, F_RC_LAYERS, F_RC_MODULES, F_RC_ACT, F_BF16, F_FP16,
    F_ATTN, F_FLASH,
    F_CP_COMM, /* --cp-comm-type */
    F_TP_OVERLAP, F_GRAD_OVERLAP, F_PARAM_OVERLAP,
    F_FP8_FORMAT, F_FP8_RECIPE, F_FP8_PARAM, /* model/fp8.h */
    F_TORCH_FSDP2, F_MEGATRON_FSDP, F_DP_SHARDING, /* ZeRO / FSDP (model/config_zero.c) */
    /* mixtures of experts and MLA (issue 38): mr_moe */
    F_TOPK, F_MOE_FFN, F_MOE_SHARED, F_MOE_FREQ, F_MOE_GG, F_MOE_DISPATCH, F_MOE_LB, F_MOE_CAP,
    F_MOE_BIAS, F_MOE_GROUPS, F_MOE_GTOPK, F_QLORA, F_KVLORA, F_QKHEAD, F_QKPOS, F_VHEAD, F_MTP,
    F__COUNT,
    F_WARN = 100, /* not modelled: said */
    F_SKIP,       /* skipped on purpose */
};

enum mf_arg { A_NONE, A_ONE, A_LIST, A_THREE, A_MAYBE /* a value when one follows */ };

struct mflag {
    const char *name; /* "--num-layers"; a trailing '*' matches a prefix */
    enum mf_arg arg;
    int id;
    const char *why;  /* F_WARN: what is not modelled */
};

/* The record of a flag name[0, len) ("--num-layers"), or NULL when it is none of them. */
const struct mflag *mflag_find(const char *name, size_t len);

#endif
