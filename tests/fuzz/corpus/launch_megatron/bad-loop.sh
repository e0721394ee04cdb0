A=(--num-layers 2)
if [[ $X == y* ]] && [ -n "$A" ]; then B=1; fi
for i in 1 2; do echo $i; done
python pretrain_gpt.py "${A[@]}" --hidden-size $((8*8))
