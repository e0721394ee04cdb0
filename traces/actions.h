/* traces/actions.h: span names that carry a pipeline action, one reader per framework in a
 * table (traces/actions.c): torch.distributed.pipelining's "PP:" ranges (traces/kineto.h
 * kineto_pp_action) and PiPPy's events (its RPC driver names each stage's work "F_1,0": the
 * forward of stage 1, micro-batch 0). A trace without a mapping file's rules is read by them. */
#ifndef MT_TRACES_ACTIONS_H
#define MT_TRACES_ACTIONS_H

struct trace_event;

/* PiPPy (pytorch/PiPPy, its Chrome trace: a bare array of B/E pairs, pid "RANK(host/pid)"):
 * "F_S,M" forward (FW) and "B_S,M" whole backward (BW) of stage S, micro-batch M. Returns 1
 * and sets out's op, stage and mb for one of those; 0 for PiPPy's other names (its driver's
 * "IF_S,M" invocations, "RF_S,M" receipts, "A_S,M" gradient accumulation, "S_S,M" barriers:
 * not instructions here); -1 for a name that is not PiPPy's. */
int action_pippy(const char *name, struct trace_event *out);

/* The first reader in the table that knows name: 1 an instruction (out's op, stage, mb set),
 * 0 a framework's name that is not an instruction, -1 no framework's. */
int action_parse(const char *name, struct trace_event *out);

#endif
