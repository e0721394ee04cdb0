# tests/mpi/offload_plan.py BASE OUT: an offloading plan from a 1F1B (V) plan of exec_ref
# plans: an OF after every forward of every device but the last, an RL before the RG that
# precedes its backward, and the unit cost O = 0.01 (a copy 0.01 of a forward, about as fast
# beside compute as a memcpy on a CPU). Used by tests/mpi/test_offload_run.sh and
# tests/gpu/test_run_gpu.sh.
import json
import sys

d = json.load(open(sys.argv[1]))
d["config"]["unit_costs"]["O"] = 0.01
last = len(d["devices"]) - 1
for dv, lst in enumerate(d["devices"][:last]):
    out = []
    for i, ins in enumerate(lst):
        same = {k: ins[k] for k in ("mb", "part", "stage")}
        if ins["op"] == "RG" and i + 1 < len(lst) and lst[i + 1]["op"] == "BW":
            out.append(dict(op="RL", **same))
        out.append(ins)
        if ins["op"] == "FW":
            out.append(dict(op="OF", **same))
    forwards = sum(x["op"] == "FW" for x in lst)
    assert sum(x["op"] == "OF" for x in out) == sum(x["op"] == "RL" for x in out) == forwards
    d["devices"][dv] = out
json.dump(d, open(sys.argv[2], "w"))
