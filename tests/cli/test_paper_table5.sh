#!/bin/sh
# tests/cli/test_paper_table5.sh: the analytic time model against the paper's measured Table 5
# (tests/data/paper_table5.tsv, with its source). `optimize --lmbs --json` gives base, ckpt,
# ovlp (the prepose row) and lmbs of each (model, scheme); the mean absolute percentage error of
# throughput over each model's measured rows must stay within 10 % (issue 26, item 9; the
# constants were fitted on GPT3-13B's rows, so LLaMA2-13B's is the check). With the terms off
# (efficiency 0.5, no overheads) the same rows, W-base of GPT3-13B counted, give the issue's
# figures 23.6 % and 16.9 %: the table and the comparison are the ones the issue measured.
. "${top_srcdir:-.}/tests/lib.sh"
bin=${MT_BIN:-./mario-tui}
data=${top_srcdir:-.}/tests/data/paper_table5.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '{"cluster": {"device": "A100-40G", "efficiency": 0.5, %s}}\n' \
    '"op_overhead_us": 0, "layer_overhead_us": 0' >"$tmp/off.json"

run() { # run TAG [CONFIG]: every (model, scheme) of Table 5 into $tmp/TAG-MODEL-SCHEME.json
    for model in GPT3-13B LLaMA2-13B; do
        for scheme in V X W; do
            mbs=2
            [ "$scheme" = W ] && mbs=1
            # shellcheck disable=SC2086
            "$bin" optimize $2 --model "$model" --scheme "$scheme" --devices 32 --global-batch 128 \
                --micro-batch-size "$mbs" --chunks 2 --lmbs --json >"$tmp/$1-$model-$scheme.json"
            rc=$?
            check "optimize $1 $model $scheme exits 0 or 1 (over the cap)" "[ $rc -le 1 ]"
        done
    done
}
run on ""
run off "$tmp/off.json"

mape() { # mape TAG MODEL KINDS: the MAPE (%) of TAG's throughputs over MODEL's rows of KINDS
    python3 - "$data" "$tmp" "$@" <<'PY'
import json, sys
data, tmp, tag, model, kinds = sys.argv[1:6]
row = {"base": "base", "ckpt": "ckpt", "ovlp": "prepose", "lmbs": "lmbs"}
errs = []
for line in open(data):
    if line.startswith("#") or not line.strip():
        continue
    m, scheme, cfg, mbs, thr, kind = line.split()
    if m != model or kind not in kinds.split(","):
        continue
    d = json.load(open("%s/%s-%s-%s.json" % (tmp, tag, m, scheme)))
    r = {p["name"]: p for p in d["passes"]}[row[cfg]]
    assert r["micro_batch_size"] == int(mbs), (m, scheme, cfg)
    errs.append(abs(r["throughput"] / float(thr) - 1))
print("%.1f" % (100 * sum(errs) / len(errs)))
PY
}
for model in GPT3-13B LLaMA2-13B; do
    got=$(mape on "$model" measured)
    echo "$model: throughput MAPE $got % over its measured rows"
    check "$model MAPE $got <= 10" "awk 'BEGIN { exit !($got <= 10) }'"
done
check "GPT3-13B without the terms: 23.6 %" "[ \"$(mape off GPT3-13B measured,oom)\" = 23.6 ]"
check "LLaMA2-13B without the terms: 16.9 %" "[ \"$(mape off LLaMA2-13B measured)\" = 16.9 ]"
exit $fail
