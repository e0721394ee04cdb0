/* traces/kineto.c: the PyTorch profiler's events, classified for traces/chrome_read.c.
 * Kineto puts device activity on pid = GPU index with tid "stream N", host ops on the OS pid,
 * iterations in "ProfilerStep#N" user annotations and memory in "[memory]" instant events
 * (Device Type 0 = CPU, 1 = CUDA). Names of NCCL kernels differ by version:
 * "ncclKernel_AllReduce_RING_LL_Sum_float" (NCCL 2.1x) and "ncclDevKernel_AllReduce_Sum_f32_
 * RING_LL" / "ncclDevKernel_SendRecv" (2.19+). */
#include <config.h>
#include "traces/kineto.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/plan/plan.h"
#include "traces/actions.h"
#include "traces/mapping.h"
#include "traces/trace.h"

bool kineto_is_nccl(const char *name)
{
    return strncmp(name, "ncclKernel", 10) == 0 || strncmp(name, "ncclDevKernel", 13) == 0;
}

int kineto_step_number(const char *name)
{
    static const char pre[] = "ProfilerStep#";
    if (strncmp(name, pre, sizeof pre - 1) != 0)
        return -1;
    const char *s = name + sizeof pre - 1;
    long v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > 100000000)
            return -1;
    }
    return *s == '\0' ? (int)v : -1;
}

int kineto_pp_action(const char *name, struct trace_event *out)
{
    if (strncmp(name, "PP:", 3) != 0)
        return -1;
    const char *s = name + 3;
    long stage = 0, mb = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9' && digits < 8; s++, digits++)
        stage = stage * 10 + (*s - '0');
    if (digits == 0)
        return 0;
    static const struct {
        const char *type;
        int op;
    } types[] = {{"SEND_F", OP_SA}, {"RECV_F", OP_RA}, {"SEND_B", OP_SG}, {"RECV_B", OP_RG},
                 {"REDUCE_GRAD", OP_AR}, {"F", OP_FW},  {"I", OP_B},       {"W", OP_W},
                 {"B", OP_BW}};
    int op = -1;
    for (size_t k = 0; k < sizeof types / sizeof types[0] && op < 0; k++) {
        size_t n = strlen(types[k].type);
        if (strncmp(s, types[k].type, n) == 0) {
            op = types[k].op;
            s += n;
        }
    }
    if (op < 0)
        return 0; /* UNSHARD, RESHARD, OVERLAP_F_B: not an instruction here */
    digits = 0;
    for (; *s >= '0' && *s <= '9' && digits < 8; s++, digits++)
        mb = mb * 10 + (*s - '0');
    if (*s != '\0' || (digits == 0) != (op == OP_AR))
        return 0;
    out->op = op;
    out->stage = (int)stage;
    out->mb = op == OP_AR ? -1 : (int)mb;
    return 1;
}

static bool kineto_is_device_activity(const char *cat)
{
    static const char *const cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel",
                                       "Memcpy", "Memset",     NULL};
    if (cat == NULL)
        return false;
    for (int i = 0; cats[i]; i++)
        if (strcmp(cat, cats[i]) == 0)
            return true;
    return false;
}

enum kineto_kind kineto_classify(const char *name, const char *cat, const struct mapping *map,
                                 struct trace_event *out)
{
    out->op = TRACE_OP_COMPUTE;
    out->mb = out->part = out->stage = out->dev = out->step = -1;
    int n = kineto_step_number(name);
    if (n >= 0) {
        out->step = n;
        return KINETO_STEP;
    }
    struct mapping_hit hit;
    if (map != NULL && mapping_match(map, name, cat, &hit)) {
        out->op = hit.op;
        out->mb = hit.mb;
        out->part = hit.part;
        out->stage = hit.stage;
        out->dev = hit.device;
        out->step = hit.step;
        return KINETO_EVENT;
    }
    if (map == NULL || mapping_rules(map) == 0) {
        int pp = action_parse(name, out); /* torch's "PP:" ranges, PiPPy's names */
        if (pp == 1)
            return KINETO_EVENT;
        if (pp == 0)
            return KINETO_IGNORE;
    }
    if (kineto_is_nccl(name)) {
        out->op = strstr(name, "AllReduce") != NULL ? OP_AR : TRACE_OP_COMM;
        return KINETO_EVENT;
    }
    if ((map == NULL || mapping_rules(map) == 0) && kineto_is_device_activity(cat))
        return KINETO_EVENT;
    return KINETO_IGNORE;
}

bool kineto_number(const cJSON *j, double *out)
{
    if (cJSON_IsNumber(j) && isfinite(j->valuedouble)) {
        *out = j->valuedouble;
        return true;
    }
    if (cJSON_IsString(j) && j->valuestring[0] != '\0') {
        char *end;
        double v = strtod(j->valuestring, &end);
        if (*end == '\0' && isfinite(v)) {
            *out = v;
            return true;
        }
    }
    return false;
}

bool kineto_memory(const cJSON *ev, double *bytes, bool *gpu, int *device_id)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
    if (!cJSON_IsString(name) || strcmp(name->valuestring, "[memory]") != 0)
        return false;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    double total, type = 0, id = -1;
    if (!cJSON_IsObject(args) ||
        !kineto_number(cJSON_GetObjectItemCaseSensitive(args, "Total Allocated"), &total) ||
        total < 0)
        return false;
    kineto_number(cJSON_GetObjectItemCaseSensitive(args, "Device Type"), &type);
    kineto_number(cJSON_GetObjectItemCaseSensitive(args, "Device Id"), &id);
    *bytes = total;
    *gpu = type >= 1;
    *device_id = id >= 0 && id < 1e6 ? (int)id : -1;
    return true;
}
