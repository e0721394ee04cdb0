#include <config.h>

#include "traces/actions.h"

#include <stdbool.h>
#include <stddef.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "traces/kineto.h"
#include "traces/trace.h"

/* Digits at *s (at most 8), advancing it; -1 when there are none. */
static long action_number(const char **s)
{
    long v = 0;
    int digits = 0;
    for (; **s >= '0' && **s <= '9' && digits < 8; (*s)++, digits++)
        v = v * 10 + (**s - '0');
    return digits > 0 ? v : -1;
}

int action_pippy(const char *name, struct trace_event *out)
{
    const char *s = name;
    bool instruction = true;
    if (s[0] == 'I' || s[0] == 'R') { /* the driver's invocation, a stage's receipt */
        instruction = false;
        s++;
    }
    char phase = s[0];
    if ((phase != 'F' && phase != 'B' && phase != 'A' && phase != 'S') || s[1] != '_')
        return -1;
    s += 2;
    long stage = action_number(&s);
    if (stage < 0 || *s++ != ',')
        return -1;
    long mb = action_number(&s);
    if (mb < 0 || *s != '\0')
        return -1;
    if (!instruction || phase == 'A' || phase == 'S')
        return 0;
    out->op = phase == 'F' ? OP_FW : OP_BW;
    out->stage = (int)stage;
    out->mb = (int)mb;
    out->part = -1;
    out->dev = -1;
    out->step = -1;
    return 1;
}

/* Tried in order; each knows its own names and says -1 to the others'. */
static int (*const action_readers[])(const char *, struct trace_event *) = {
    kineto_pp_action, /* torch.distributed.pipelining */
    action_pippy,     /* PiPPy */
};

int action_parse(const char *name, struct trace_event *out)
{
    for (size_t i = 0; i < sizeof action_readers / sizeof action_readers[0]; i++) {
        int r = action_readers[i](name, out);
        if (r >= 0)
            return r;
    }
    return -1;
}
