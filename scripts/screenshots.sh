#!/bin/sh
# scripts/screenshots.sh: the explorer's screenshots in docs/img (issue 20), 120x40, each a
# frame as a colour terminal shows it (explore --dump-screen --png: render/paint_cairo.h's
# screenshot of the cells, through the same cells_term() rule tui/screen.c draws with):
#   explore-main.png        the built-in default (GPT3-1.6B, 8 x A100-40G, 1F1B), dark theme
#   explore-main-light.png  the same on a light theme
#   explore-pass.png        the paper's Figure 2 (unit costs) at the overlap step, the
#                           critical path shown
#   explore-search.png      1F1B, 4 devices, 8 micro-batches, unit costs under 1.05 M_θ at
#                           the search step (36 t, the optimum, against the bound's 33 t; issue 18)
#   explore-tuner.png       the tuner on 8 devices, global batch 32
#   explore-trace.png       a measured run (the tiny model on 4 CPU ranks under MPI) beside
#                           its simulation with a calibration from `mario-tui profile`, the
#                           title giving its replay (issue 19)
#   scripts/screenshots.sh [MARIO_TUI] [OUTDIR]
set -eu
bin=${1:-./mario-tui}
out=${2:-docs/img}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shot() { # shot NAME ARGS...: one frame at 120x40
    name=$1
    shift
    "$bin" explore "$@" --dump-screen --size 120x40 --png "$out/$name.png" >/dev/null
    echo "wrote $out/$name.png"
}
shot explore-main
shot explore-main-light --light
shot explore-pass --unit-costs 1,2,1 --devices 4 --microbatches 4 --keys 'nnc'
shot explore-search --unit-costs 1,2,1 --devices 4 --microbatches 8 --memory 1.05 --keys 'nnnnn'
shot explore-tuner --devices 8 --global-batch 32 --keys 'tjj'
tiny="--model tiny --devices 4 --microbatches 8"
"$bin" profile --model tiny --out "$tmp/cal.json" >/dev/null
"$bin" run $tiny --steps 3 --trace-out "$tmp/run.trace.json" >/dev/null
cp "$tmp/run.trace.json" "$tmp/tiny-run.trace.json" # the name the status line shows
shot explore-trace $tiny --calibration "$tmp/cal.json" --trace "$tmp/tiny-run.trace.json" --keys 'jl'
