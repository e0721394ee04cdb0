#!/bin/sh
# tests/check_layers.sh: the include rules of docs/design.md's layering (and README's Architecture), checked on the sources.
# 1. Includes point one way: util <- model <- sim <- {render, exec, traces} <- flow <- tui; a file
#    includes headers of its own folder and of the layers below, never above or sideways.
# 2. Each third-party library behind its module: a header of curses, Cairo, MPI, NCCL, CUDA,
#    cuBLAS, OpenBLAS, zlib or cJSON is included only by the files listed for it below.
# Prints file:line of every violation and exits 1; 0 when the tree keeps the rules.
set -u
set -f # the allowed lists hold patterns (*/*_json.c) for case, not for the shell to expand
src=${top_srcdir:-.}
cd "$src" || exit 1
fail=0
below() { # the folders a folder may include from
    case $1 in
    util) echo "util" ;;
    model) echo "util model" ;;
    sim) echo "util model sim" ;;
    render | exec | traces) echo "util model sim $1" ;;
    flow) echo "util model sim render exec traces flow" ;;
    tui) echo "util model sim render exec traces flow tui" ;;
    esac
}
files=$(find util model sim render exec traces flow tui -name '*.c' -o -name '*.h' -o -name '*.cu' |
    sort)
for f in $files; do
    dir=${f%%/*}
    allowed=$(below "$dir")
    grep -n '^#include "' "$f" | while IFS= read -r hit; do
        inc=$(printf '%s' "$hit" | sed 's/^[0-9]*:#include "\([^"]*\)".*/\1/')
        top=${inc%%/*}
        [ "$top" = "$inc" ] && continue # a bare name: a generated header (config.h)
        case " $allowed " in
        *" $top "*) ;;
        *) echo "$f:${hit%%:*}: includes $inc: $dir/ may include only from: $allowed" ;;
        esac
    done
done >"${TMPDIR:-/tmp}/check_layers.$$"
# third-party headers: pattern | the files allowed to include it
while IFS='|' read -r pat allowed; do
    case "$pat" in '' | '#'*) continue ;; esac
    for f in $files; do
        grep -n "^#include <$pat" "$f" | while IFS= read -r hit; do
            ok=0
            for a in $allowed; do
                case "$f" in $a) ok=1 ;; esac
            done
            [ $ok = 1 ] || echo "$f:${hit%%:*}: includes <${pat}...>: only $allowed may"
        done
    done
done >>"${TMPDIR:-/tmp}/check_layers.$$" <<'RULES'
# the curses explorer
n\?curses|tui/curses_compat.h
# pictures
cairo|render/paint_cairo.c
# MPI: the transport (and the MoE layer's ep group), the launcher's MPI_Init, the ranks' agreement on the plan, and the
# micro-benchmarks of `profile --micro` (exec/microbench*: BLAS, MPI, cuBLAS, NCCL)
mpi\.h|exec/comm_mpi.c exec/moe_comm_mpi.c tests/mpi/moe_ep.c exec/launch.c exec/check.c exec/microbench.c exec/microbench_nccl.c
nccl\.h|exec/comm_nccl.c exec/microbench_nccl.c
cuda|exec/comm_nccl.c exec/copy_cuda.cu exec/xformer_cuda.cu exec/microbench_cuda.cu exec/microbench_nccl.c
cublas|exec/xformer_cuda.cu exec/microbench_cuda.cu
cblas\.h|exec/backend_cpu.c exec/xformer_cpu.c exec/xformer_gpt.c exec/xformer_llama.c exec/xformer_moe.c exec/microbench.c
zlib\.h|traces/scan.c
# JSON: the one reader, the *_json.c files, and the trace readers and writer (which stream
# events through cJSON items)
cjson/|util/json.c util/json.h */*_json.c traces/chrome.c traces/chrome_read.c traces/kineto.c
RULES
out="${TMPDIR:-/tmp}/check_layers.$$"
if [ -s "$out" ]; then
    cat "$out"
    fail=1
fi
rm -f "$out"
[ $fail = 0 ] && echo "PASS: $(echo "$files" | wc -l) files keep the layering and library rules"
exit $fail
