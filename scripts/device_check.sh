#!/usr/bin/env bash
# CUDA check of a checkout on a GPU machine whose Python already has torch (e.g. the lent device machine):
# the CUDA tests, the paper suite's smoke on cuda, and the learners' 20-budget curve benchmark on cuda.
#
#   bash scripts/device_check.sh            # from the repository root; OUT (default /tmp/device-check) gets the logs
#   BENCH=0 bash scripts/device_check.sh    # the same without the curve benchmark (the longest step)
#
# privbench is installed editable without its dependencies (torch stays the machine's own).  Where the machine
# cannot reach a package index, bring the missing pure dependencies as wheels in .whl/ (git-ignored); on a
# machine with pip access, for a Python 3.12 target:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     --platform manylinux_2_24_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux1_x86_64 -d .whl \
#     cvxpy clarabel highspy osqp qdldl sparsediffpy shtab jsonschema jsonschema-specifications referencing \
#     rpds-py mlxtend distributed dask tblib zict tornado locket partd importlib_metadata
# (scs, 43 MB, may be left out: cvxpy then uses Clarabel and HiGHS only.)  Each step has its own time limit.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/device-check}
mkdir -p "$OUT"
t0=$(date +%s)
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 4; }
nvidia-smi -L
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))" || exit 5
echo "install: $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout 120 python3 -m pytest -q -p no:cacheprovider -n 4 tests/learners/test_device_policy.py \
  tests/learners/test_ppan_image.py 2>&1 | tail -15 | tee "$OUT/cuda_tests.log"
echo "cuda tests: $(( $(date +%s) - t1 )) s"
t2=$(date +%s)
timeout 180 privbench run --suite paper --smoke --device cuda --jobs 8 --out /tmp/device-smoke > "$OUT/smoke.log" 2>&1
echo "smoke rc=$?"; tail -4 "$OUT/smoke.log"
echo "smoke (cuda, jobs 8): $(( $(date +%s) - t2 )) s"
python3 - "$OUT" <<'PY'
import glob, sys
import pandas as pd
df = pd.concat(pd.read_parquet(p) for p in glob.glob("/tmp/device-smoke/records/*.parquet"))
print(len(df), "rows;", df["status"].value_counts().to_dict(), "devices:", df["device"].value_counts().to_dict())
df.to_parquet(sys.argv[1] + "/smoke_records.parquet")
PY
[ "${BENCH:-1}" = 1 ] || { echo "bench skipped (BENCH=0); total $(( $(date +%s) - t0 )) s"; exit 0; }
t3=$(date +%s)
timeout 240 python3 -m pytest -q -p no:cacheprovider -n 0 tests/benchmarks/test_bench_learners_device.py \
  --benchmark-enable -s -k cuda 2>&1 | grep -E "curve:|passed|failed|Error" | tee "$OUT/bench_cuda.log"
echo "bench: $(( $(date +%s) - t3 )) s; total $(( $(date +%s) - t0 )) s"
