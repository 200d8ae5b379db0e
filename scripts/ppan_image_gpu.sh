#!/usr/bin/env bash
# ppan-image's curve at GPU scale (schedule gpu), with and without the discriminator, and sample grids.
#
#   bash scripts/ppan_image_gpu.sh OUTDIR [SEEDS]      # on a CUDA machine, from the repository root
#
# Writes OUTDIR/plain and OUTDIR/disc (privbench results directories: records, saved mechanisms),
# OUTDIR/curve.txt (the curve table of both) and OUTDIR/{plain,disc}/grids/*.png (sample grids).
# PYTHON (default: python) is the interpreter with privbench installed.
set -euo pipefail
out=${1:?usage: ppan_image_gpu.sh OUTDIR [SEEDS]}
seeds=${2:-2}
py=${PYTHON:-python}
budgets=(--budget 0.07 --budget 0.1 --budget 0.14 --budget 0.18 --budget 0.22 --budget 0.26)
common=(--scenario mnist-subset --param labeling=digit --observation useful --privacy map --learner ppan-image
        --learner-param schedule=gpu "${budgets[@]}" --n-train 4000 --n-eval 10000 --seeds "$seeds"
        --device cuda --jobs 8)
mkdir -p "$out"
start=$(date +%s)
"$py" -m privbench.bench.cli run "${common[@]}" --out "$out/plain" > "$out/plain.log" 2>&1 &
p1=$!
"$py" -m privbench.bench.cli run "${common[@]}" --learner-param gamma=2 --out "$out/disc" > "$out/disc.log" 2>&1 &
p2=$!
wait $p1 || echo "the plain run failed: see $out/plain.log"
wait $p2 || echo "the discriminator run failed: see $out/disc.log"
echo "training and evaluation: $(( $(date +%s) - start )) s" | tee "$out/time.txt"
for v in plain disc; do
  echo "== $v" >> "$out/curve.txt"
  "$py" scripts/ppan_image_curve.py "$out/$v" --grids "$out/$v/grids" >> "$out/curve.txt" || true
done
cat "$out/curve.txt"
