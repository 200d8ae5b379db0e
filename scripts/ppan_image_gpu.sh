#!/usr/bin/env bash
# ppan-image's curve at GPU scale (schedule gpu): four variants in parallel on one GPU, and sample grids.
#
#   bash scripts/ppan_image_gpu.sh OUTDIR [SEEDS]      # on a CUDA machine, from the repository root
#
# Variants (one privbench results directory each, under OUTDIR):
#   gpu     schedule gpu as it stands
#   disc    the same with the discriminator (gamma = 2)
#   slow    two time scales pushed further: mechanism lr 1e-4, 5 adversary steps per mechanism step
#           (100 epochs instead of 120, to finish with the others)
#   conf    the confusion privacy term instead of the paper's E log Q(S|Z)
# Then OUTDIR/curve.txt (the curve table of every variant: distortion, fresh attacker's accuracy, own
# adversary's accuracy) and OUTDIR/<variant>/grids/grid-*.png.  PYTHON (default: python) is the
# interpreter with privbench installed; SEEDS defaults to 1.
set -uo pipefail
out=${1:?usage: ppan_image_gpu.sh OUTDIR [SEEDS]}
seeds=${2:-1}
py=${PYTHON:-python}
common=(--scenario mnist-subset --param labeling=digit --observation useful --privacy map --learner ppan-image
        --learner-param schedule=gpu --budget 0.07 --budget 0.1 --budget 0.14 --budget 0.18 --budget 0.22
        --budget 0.26 --n-train 4000 --n-eval 10000 --seeds "$seeds" --device cuda --jobs 2)
declare -A extra=([gpu]="" [disc]="--learner-param gamma=2"
                  [slow]="--learner-param lr=0.0001 --learner-param adv_steps=5 --learner-param epochs=100"
                  [conf]="--learner-param objective=confusion")
mkdir -p "$out"
start=$(date +%s)
pids=()
for v in gpu disc slow conf; do
  # shellcheck disable=SC2086
  "$py" -m privbench.bench.cli run "${common[@]}" ${extra[$v]} --out "$out/$v" > "$out/$v.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "a run failed (exit $?): see $out/*.log"; done
echo "training and evaluation: $(( $(date +%s) - start )) s" | tee "$out/time.txt"
: > "$out/curve.txt"
for v in gpu disc slow conf; do
  echo "== $v" >> "$out/curve.txt"
  "$py" scripts/ppan_image_curve.py "$out/$v" --grids "$out/$v/grids" >> "$out/curve.txt" 2>&1
done
cat "$out/curve.txt"
