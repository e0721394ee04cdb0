#!/bin/sh
# tests/cli/test_stack.sh: the training stack from the command line (issue 26): GPT3-13B
# fits 32 x A100-40G with flash attention; an explicit value wins over what a preset fills
# in, in either order (issue 27 item 4); bad stack input is one message naming the key, exit 2.
set -u
bin=${MT_BIN:-./mario-tui}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "${top_srcdir:-.}/tests/lib.sh"

"$bin" simulate --model GPT3-13B --devices 32 --attention flash >"$tmp/o" 2>&1
check "GPT3-13B, 32 devices, flash: fits 40 GiB (exit 0)" "[ $? -eq 0 ]"
"$bin" simulate --model GPT3-13B --devices 32 >"$tmp/o" 2>&1
check "the paper's GPT3-13B keeps eager attention: over the cap (exit 1)" "[ $? -eq 1 ]"

# the cap: --memory wins over --device, both orders (20 GiB = 21474836480 bytes)
"$bin" simulate --json --memory 20G --device A100-80G >"$tmp/a.json" 2>&1
"$bin" simulate --json --device A100-80G --memory 20G >"$tmp/b.json" 2>&1
check "--memory 20G --device A100-80G: cap 20G" "json $tmp/a.json 'd[\"memory_cap\"] == 21474836480'"
check "--device A100-80G --memory 20G: cap 20G" "json $tmp/b.json 'd[\"memory_cap\"] == 21474836480'"
"$bin" simulate --json --device A100-80G >"$tmp/c.json" 2>&1
check "--device A100-80G alone: its 80 GiB" "json $tmp/c.json 'd[\"memory_cap\"] == 85899345920'"

# attention: the flag wins over the model preset's default, both orders
"$bin" simulate --json --model GPT3-13B --devices 32 --attention flash >"$tmp/f1.json" 2>&1
"$bin" simulate --json --attention flash --model GPT3-13B --devices 32 >"$tmp/f2.json" 2>&1
check "--attention flash before or after --model: the same figures" "cmp -s $tmp/f1.json $tmp/f2.json"
check "flash: device 0's activations below 14 GB (Megatron's estimator: ~13.5 GB)" \
    "json $tmp/f1.json 'd[\"devices\"][0][\"peak_activation_memory\"] < 14e9'"

# bad input: one message naming the key, exit 2
"$bin" simulate --devices 24 --tp 3 >"$tmp/o" 2>&1
check "--tp 3 on 8-GPU nodes: exit 2" "[ $? -eq 2 ]"
check "... naming cluster.tp" "grep -q 'cluster.tp: 3 neither divides' $tmp/o && [ \$(wc -l <$tmp/o) -eq 1 ]"
"$bin" simulate --devices 8 --tp 16 >"$tmp/o" 2>&1
check "--tp 16 on 8 GPUs: exit 2 naming cluster.tp" "[ $? -eq 2 ] && grep -q 'cluster.tp: 16 does not divide' $tmp/o"
"$bin" simulate --attention fast >"$tmp/o" 2>&1
check "--attention fast: exit 2" "[ $? -eq 2 ] && grep -q -- '--attention' $tmp/o"

# a cap below one layer's activations is a unit slip; --memory 0 is no cap
"$bin" simulate --memory 40 >"$tmp/o" 2>&1
check "--memory 40: exit 2 suggesting 40G" \
    "[ $? -eq 2 ] && grep -q -- \"--memory: 40 B is below one layer's activations (.*): did you mean 40G?\" $tmp/o"
"$bin" simulate --json --memory 0 >"$tmp/z.json" 2>&1
check "--memory 0: no cap (exit 0)" "[ $? -eq 0 ] && json $tmp/z.json 'd[\"memory_cap\"] == 0'"

# the reserve: off the cap, refused when not below the GPU
"$bin" simulate --json --reserve 2G >"$tmp/r.json" 2>&1
check "--reserve 2G: the cap is 38 GiB" "json $tmp/r.json 'd[\"memory_cap\"] == 38 * 2**30'"
"$bin" simulate --reserve 50G >"$tmp/o" 2>&1
check "--reserve 50G on a 40 GiB GPU: exit 2 naming reserve" \
    "[ $? -eq 2 ] && grep -q 'reserve: 50 GiB is not below' $tmp/o && [ \$(wc -l <$tmp/o) -eq 1 ]"
exit $fail
