#!/bin/sh
# tests/cli/test_config_fields.sh: hostile input, every config field (issue 9). For every key
# of examples/gpt3-1.6b-v.json (and the keys it leaves out: num_microbatches, unit_costs,
# model.name, cluster.device_name) and every key the loader reads from a Hugging Face
# config.json (examples/hf-gpt2-config.json), variants are made with the key missing, null,
# of the wrong type, negative, zero, huge, infinite and NaN (the literal, which is not JSON),
# and `mario-tui simulate VARIANT` runs on each:
#   - a variant that must be refused exits 2 with a message that names the file and the
#     field ("...variant.json:L:C: cluster.dp: ...");
#   - a variant that may be accepted (a missing key takes its default; a huge memory or
#     bandwidth is a number like any other) exits 0 or 1 (over the cap), or 2 naming both;
#   - none crashes (status >= 128, a sanitizer report) or hangs (timeout 10 s).
set -u
bin=${MT_BIN:-./mario-tui}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

exec python3 - "$bin" "$src" "$tmp" <<'PY'
import json, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

bin_, src, tmp = sys.argv[1:4]
NAN = object()  # the literal NaN, written as such (not JSON)

# kind -> [(variant name, value, must be refused)]: the issue's list - wrong type, negative,
# zero, huge, NaN (plus INT_MAX for integers, which the checks of combinations see) - and
# "missing" below. Every mario-tui run costs a process start (under ASan, with CUDA linked,
# most of a second), so each kind keeps to these few.
MISSING = object()
BIG = 2147483647
kinds = {
    "int": [("string", "8", True), ("negative", -1, True), ("zero", 0, True),
            ("int-max", BIG, False), ("huge", 1e300, True)],
    "real": [("string", "abc", True), ("negative", -1, True), ("zero", 0, False),
             ("huge", 1e300, False)],
    "fraction": [("string", "abc", True), ("negative", -0.5, True), ("zero", 0, True),
                 ("huge", 1e300, True)],
    "size": [("garbage", "abc", True), ("negative", -1, True), ("zero", 0, True),
             ("huge", 1e300, False), ("inf-string", "1e999G", True)],
    "flops": [("garbage", "abc", True), ("negative", -1, True), ("zero", 0, True),
              ("huge", 1e300, False)],
    "name": [("number", 42, True), ("empty", "", True), ("unknown", "zzz", True)],
    "label": [("number", 42, True), ("empty", "", True), ("long", "x" * 300, True)],
    "hf-type": [("number", 42, True)],
    "bool": [("string", "yes", True), ("number", 1, True)],
}
# For every field the literal NaN (not JSON: a syntax error that must still name the field);
# for numbers infinity too (1e999, which parses as inf).
common_bad = [("nan", NAN, True)]
for k in ("int", "real", "fraction", "size", "flops"):
    kinds[k].append(("inf", "1e999", True))
for k in kinds:
    kinds[k] = [("missing", MISSING, False)] + kinds[k] + common_bad

# (file, json path, kind, value to add when the example lacks the key)
cfg = "examples/gpt3-1.6b-v.json"
hf = "examples/hf-gpt2-config.json"
fields = [
    (cfg, "pipeline_scheme", "name", None), (cfg, "global_batch_size", "int", None),
    (cfg, "micro_batch_size", "int", None), (cfg, "num_device", "int", None),
    (cfg, "num_microbatches", "int", 128), (cfg, "chunks", "int", None),
    (cfg, "memory_per_device", "size", None), (cfg, "blocking_send", "bool", None),
    (cfg, "unit_costs.F", "real", 1), (cfg, "unit_costs.B", "real", 2),
    (cfg, "unit_costs.RC", "real", 1), (cfg, "unit_costs.enabled", "bool", False),
    (cfg, "model.preset", "name", None), (cfg, "model.name", "label", "m"),
    (cfg, "model.type", "name", None), (cfg, "model.hidden_size", "int", None),
    (cfg, "model.num_layers", "int", None), (cfg, "model.num_attention_heads", "int", None),
    (cfg, "model.seq_length", "int", None), (cfg, "model.vocab_size", "int", None),
    (cfg, "model.ffn_hidden_size", "int", None),
    (cfg, "cluster.device", "name", None), (cfg, "cluster.device_name", "label", "gpu"),
    (cfg, "cluster.peak_flops", "flops", None), (cfg, "cluster.efficiency", "fraction", None),
    (cfg, "cluster.memory", "size", None), (cfg, "cluster.hbm_gbps", "real", None),
    (cfg, "cluster.p2p_gbps", "real", None), (cfg, "cluster.p2p_latency_us", "real", None),
    (cfg, "cluster.allreduce_gbps", "real", None),
    (cfg, "cluster.dp_efficiency", "fraction", None), (cfg, "cluster.dp", "int", None),
    (cfg, "cluster.tp", "int", None),
    (cfg, "cluster.op_overhead_us", "real", None), (cfg, "cluster.layer_overhead_us", "real", None),
    (cfg, "iterations", "int", 1), (cfg, "update_interval", "int", 1),
    (hf, "n_embd", "int", None), (hf, "n_layer", "int", None), (hf, "n_head", "int", None),
    (hf, "n_positions", "int", None), (hf, "vocab_size", "int", None),
    (hf, "n_inner", "int", 3072), (hf, "model_type", "hf-type", None),
]
# Values that are fine for these fields (and so may not be refused).
allowed = {("cluster.p2p_latency_us", "zero"), ("unit_costs.RC", "zero"),
           ("cluster.op_overhead_us", "zero"), ("cluster.layer_overhead_us", "zero"),
           ("unit_costs.RC", "huge"), ("unit_costs.F", "huge"), ("unit_costs.B", "huge")}
# In a Hugging Face config null means absent (GPT-2 ships "n_inner": null): refused only where
# the key is needed, and then named.
jobs_extra = [(f, "null", None, False) for f in fields if f[0] == hf]

def names_field(err, field):
    """The message names the field: its JSON path, or its object's path and its key, as words
    ("unit_costs: F and B must be > 0" names unit_costs.B)."""
    word = lambda w: re.search(r"(?<![\w.])" + re.escape(w) + r"(?![\w])", err) is not None
    if word(field):
        return True
    parent, _, leaf = field.rpartition(".")
    return bool(parent) and word(parent) and word(leaf)

def dump(v):
    if v is NAN:
        return "NaN"
    return json.dumps(v)

def render(obj):
    """JSON text of obj with NAN written as the bare literal NaN."""
    if isinstance(obj, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + render(v) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(render(v) for v in obj) + "]"
    if isinstance(obj, str) and obj.startswith("1e999"):
        return obj if obj == "1e999" else json.dumps(obj)
    return dump(obj)

def variant(path, value, base_value):
    doc = json.load(open(os.path.join(src, path[0])))
    keys = path[1].split(".")
    o = doc
    for k in keys[:-1]:
        if not isinstance(o.get(k), dict):
            o[k] = {"F": 1, "B": 2, "RC": 1} if k == "unit_costs" else {}
        o = o[k]
    if base_value is not None and keys[-1] not in o:
        o[keys[-1]] = base_value
    if value is MISSING:
        o.pop(keys[-1], None)
    else:
        o[keys[-1]] = value
    return render(doc)

jobs = []
for f in fields:
    for name, value, must in kinds[f[2]]:
        if (f[1], name) in allowed:
            must = False
        jobs.append((f, name, value, must))
jobs += jobs_extra

def run(i_job):
    i, (f, name, value, must) = i_job
    field = f[1]
    path = os.path.join(tmp, "v%03d-%s-%s.json" % (i, field.replace(".", "_"), name))
    with open(path, "w") as out:
        out.write(variant(f, value, f[3]))
    try:
        p = subprocess.run([bin_, "simulate", path], capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return "%s = %s: hang (killed after 10 s)" % (field, name)
    err = p.stderr.decode("utf-8", "replace")
    rc = p.returncode
    if rc < 0 or rc >= 128:
        return "%s = %s: crash (status %d): %s" % (field, name, rc, err[:300])
    if "Sanitizer" in err or "runtime error" in err:
        return "%s = %s: sanitizer report: %s" % (field, name, err[:300])
    if rc == 2:
        if os.environ.get("VERBOSE"):
            print("%s = %s: %s" % (field, name, err.strip().replace(tmp + "/", "")))
        if path not in err or not names_field(err.replace(path, "FILE"), field):
            return "%s = %s: exit 2 but the message does not name the file and the field: %s" % (
                field, name, err[:300])
        return None
    if must:
        return "%s = %s: accepted (exit %d), should be refused" % (field, name, rc)
    if rc not in (0, 1):
        return "%s = %s: exit %d: %s" % (field, name, rc, err[:300])
    return None

with ThreadPoolExecutor(max_workers=3) as pool:
    problems = [r for r in pool.map(run, enumerate(jobs)) if r]
# Issue 41: a Hugging Face config's keys are read, accepted on purpose, refused, or warned
# about by name (one line on stderr); model_parameters and seq_length are reported; --seq-length
# and --pp mean what they say.
def mt(*args):
    return subprocess.run([bin_] + list(args), capture_output=True, timeout=60)
def sim_json(*args):
    p = mt("simulate", "--json", *args)
    return p, json.loads(p.stdout) if p.returncode in (0, 1) and p.stdout else None
hfdir = os.path.join(src, "tests/data/hf")
for f in sorted(os.listdir(hfdir)):
    if f.endswith(".json"):
        p = mt("models", os.path.join(hfdir, f))
        # DeepSeek-V3's two notes are on purpose (its FP8 storage, its node-limited routing
        # priced without the limit: issue 38); any other warning is a key not read
        warns = [l for l in p.stderr.splitlines() if b"warning" in l and
                 b"FP8 storage" not in l and b"node-limited routing" not in l]
        if warns:
            problems.append("%s: a published config warns: %s" % (f, warns[0][:200]))
doc = json.load(open(os.path.join(hfdir, "Qwen2.5-7B.json")))
doc["frobnicate_heads"] = 3
doc["zz_extra"] = None
wpath = os.path.join(tmp, "unknown-key.json")
json.dump(doc, open(wpath, "w"))
p = mt("models", wpath)
lines = [l for l in p.stderr.decode().splitlines() if "warning" in l]
if p.returncode != 0 or len(lines) != 1 or "frobnicate_heads, zz_extra" not in lines[0]:
    problems.append("unknown keys: exit %d, want one warning line naming both: %r" %
                    (p.returncode, p.stderr[:300]))
# untied GPT-2 (tie_word_embeddings false): 12 (4h^2 + 2hf + 9h + f) + 2Vh + 1024 h + 2h with
# h 768, f 3072, V 50257 = 163,037,184 whole, whatever the tp (a formula both cost models give)
doc = json.load(open(os.path.join(src, hf)))
doc["tie_word_embeddings"] = False
gpath = os.path.join(tmp, "gpt2-untied.json")
json.dump(doc, open(gpath, "w"))
for extra in ([], ["--tp", "2", "--devices", "16"]):
    p, j = sim_json(gpath, *extra)
    if j is None or j.get("model_parameters") != 163037184 or j.get("seq_length") != 1024:
        problems.append("simulate --json %s: model_parameters %s seq_length %s, want 163037184 "
                        "and 1024" % (" ".join(extra), j and j.get("model_parameters"),
                                      j and j.get("seq_length")))
p = mt("models", "--json", gpath)
if json.loads(p.stdout)["models"][0]["model_parameters"] != 163037184:
    problems.append("models --json: model_parameters of untied GPT-2")
# Llama-3.1: the pre-training 8192 (rope_scaling), not max_position_embeddings 131072
llama = os.path.join(hfdir, "Llama-3.1-8B.json")
p, j = sim_json(llama, "--memory", "0")
if j is None or j["seq_length"] != 8192:
    problems.append("Llama-3.1-8B: seq_length %s, want 8192" % (j and j["seq_length"]))
p, j = sim_json(llama, "--memory", "0", "--seq-length", "2048")
if j is None or j["seq_length"] != 2048:
    problems.append("--seq-length 2048: seq_length %s" % (j and j["seq_length"]))
head = mt("simulate", llama, "--memory", "0", "--seq-length", "2048").stdout.decode()
if "micro-batches of 1 x 2048 tokens" not in head.splitlines()[0]:
    problems.append("simulate's header does not say the 2048 tokens: %r" % head[:200])
p = mt("simulate", llama, "--seq-length", "131073")
if p.returncode != 2 or b"max_position_embeddings 131072" not in p.stderr:
    problems.append("--seq-length past the positions: exit %d %r" % (p.returncode, p.stderr[:200]))
# --pp: pp x dp x tp GPUs; with --devices they must agree
p, j = sim_json("--pp", "4", "--dp", "2")
if j is None or j["pp"] != 4 or j["dp"] != 2:
    problems.append("--pp 4 --dp 2: %s" % (j and (j["pp"], j["dp"])))
p = mt("simulate", "--pp", "4", "--dp", "2", "--devices", "16")
if p.returncode != 2 or b"--pp 4" not in p.stderr or b"--devices 16" not in p.stderr:
    problems.append("--pp 4 --dp 2 --devices 16: exit %d %r" % (p.returncode, p.stderr[:200]))
p, j = sim_json("--pp", "2", "--dp", "2", "--tp", "2", "--devices", "8")
if j is None or j["pp"] != 2:
    problems.append("--pp 2 --dp 2 --tp 2 --devices 8: %s" % p.stderr[:200])
for pr in problems:
    print("FAIL:", pr)
print("%d variants of %d fields, %d problems" % (len(jobs), len(fields), len(problems)))
sys.exit(1 if problems else 0)
PY
