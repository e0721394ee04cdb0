#!/bin/sh
# scripts/zb_doc.sh: the tables of docs/zero-bubble.md, from the built mario-tui. Unit costs
# F = 1, whole backward 2 split into B = W = 1 (--unit-costs 1,2,1,1; a two-stage device's
# chunks cost half), memory in M_theta; then Mario's four passes on each plan.
#   scripts/zb_doc.sh [MARIO_TUI]
set -eu
bin=${1:-./mario-tui}
row() { # scheme D N
    "$bin" optimize --scheme "$1" --devices "$2" --microbatches "$3" --unit-costs 1,2,1,1 \
        --json | python3 -c '
import json, sys
d = json.load(sys.stdin); p = d["passes"]
b, c, f = p[0], p[1], p[-1]
print("| %s | %d | %d | %g | %.3g | %g | %.3g | %g | %.3g |" % (d["scheme"], d["pp"], d["microbatches"],
      b["step_time"], b["peak_memory_max"], c["step_time"], c["peak_memory_max"], f["step_time"],
      f["peak_memory_max"]))'
}
echo "| scheme | D | N | base step (t) | base peak (M_θ) | ckpt step | ckpt peak | after 4 passes | peak |"
echo "|---|---|---|---|---|---|---|---|---|"
for dn in "4 8" "4 16" "8 16"; do
    set -- $dn
    for s in V ZB-H1 ZB-H2 W ZB-W ZB-V ZBVZeroBubble V-Half V-Min DualPipeV; do row "$s" "$1" "$2"; done
done
echo
# The authors' ZB-V against torch's where N < 2D, and the controllable-memory Vs (base plans)
echo "| D | N | ZB-V (t) | ZBVZeroBubble (t) | V-Half (t) | V-Min (t) | peak ZB-V / V-Half / V-Min (M_θ) |"
echo "|---|---|---|---|---|---|---|"
step() { # scheme D N -> "step peak"
    "$bin" simulate --scheme "$1" --devices "$2" --microbatches "$3" --unit-costs 1,2,1,1 --json |
        python3 -c 'import json, sys; d = json.load(sys.stdin); print("%g %.3g" % (d["step_time"], max(x["peak_memory"] for x in d["devices"])))'
}
for dn in "4 4" "8 4" "8 8" "8 24"; do
    set -- $dn
    set -- "$1" "$2" $(step ZB-V "$1" "$2") $(step ZBVZeroBubble "$1" "$2") $(step V-Half "$1" "$2") \
        $(step V-Min "$1" "$2")
    echo "| $1 | $2 | $3 | $5 | $7 | $9 | $4 / $8 / ${10} |"
done
