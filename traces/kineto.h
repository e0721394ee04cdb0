/* traces/kineto.h: what the PyTorch profiler (Kineto) writes, as far as a pipeline trace
 * needs it: device activity ("cat": "kernel", "gpu_memcpy", "gpu_memset"), NCCL kernels
 * (names starting "ncclKernel" or "ncclDevKernel": communication, AllReduce -> AR), the
 * "ProfilerStep#N" spans that delimit iterations, the "[memory]" instant events whose
 * args carry "Total Allocated" bytes per device, and torch.distributed.pipelining's "PP:"
 * action ranges. Other host-side ops are left out unless a mapping rule names them. */
#ifndef MT_TRACES_KINETO_H
#define MT_TRACES_KINETO_H

#include <stdbool.h>

struct cJSON;
struct mapping;
struct trace_event;

enum kineto_kind {
    KINETO_IGNORE, /* not kept */
    KINETO_EVENT,  /* out holds op (enum op, TRACE_OP_COMPUTE, TRACE_OP_COMM), mb, stage... */
    KINETO_STEP,   /* a ProfilerStep#N span: out->step = N */
};

/* Classifies a complete ("X") event named name in category cat (may be NULL). out's times
 * are left to the caller; its keys are set (-1 where unknown). With a mapping that has rules,
 * only mapped events and NCCL kernels are kept; without, every device activity is. */
enum kineto_kind kineto_classify(const char *name, const char *cat, const struct mapping *map,
                                 struct trace_event *out);
/* A "[memory]" instant event: *bytes = Total Allocated, *gpu whether it is device memory
 * ("Device Type" 1), *device_id its "Device Id". False when ev is not one. */
bool kineto_memory(const struct cJSON *ev, double *bytes, bool *gpu, int *device_id);
bool kineto_is_nccl(const char *name);
/* The lenient number rule of the Chrome-format readers (ours, Kineto's, PiPPy's): a finite
 * number, or a string holding one (some exporters quote them); "1e999" and "nan" are not
 * numbers here (issue 9). */
bool kineto_number(const struct cJSON *j, double *out);
/* torch.distributed.pipelining wraps each action of its schedule in a profiler range named
 * "PP:" + the action: stage index, then F (forward) | I (input gradient) | W (weight gradient)
 * | B (whole backward) | SEND_F | RECV_F | SEND_B | RECV_B | REDUCE_GRAD, then micro-batch
 * ("PP:0F1", "PP:1I0", "PP:2SEND_F3", "PP:0REDUCE_GRAD"). Returns 1 and sets out's op
 * (FW, B, W, BW, SA, RA, SG, RG, AR), stage and mb for one of those; 0 for another "PP:" name
 * (UNSHARD, RESHARD, OVERLAP_F_B: not instructions here); -1 for a name that is not one.
 * Without a mapping file kineto_classify reads them so. */
int kineto_pp_action(const char *name, struct trace_event *out);
/* N of "ProfilerStep#N", or -1. */
int kineto_step_number(const char *name);

#endif
