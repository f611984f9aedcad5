#!/usr/bin/env bash
# Every GPU check of sslkit in one prepared run, for a session that is lent a GPU machine (the device tool:
# 15 minutes of device time per session, start-up included; this script needs about 5-8 of them).
#
#   bash benchmarks/gpu_session.sh          # from the repository root, on the GPU machine
#
# It uses the machine's own python3 and PyTorch (no install: sslkit is imported from the working tree via
# PYTHONPATH) and no data directory (breast_cancer comes from scikit-learn; the rest is synthetic). Each step
# has its own time limit and log; a failing step does not stop the others. Logs go to $OUT (the device
# tool's folder that comes back), else _build/gpu.
#   1. CUDA tests: every engine algorithm trains on the GPU with mixed precision, vectorised seeds, CPU = GPU
#      for the risk estimators, for GKHR/GKH indices and for the approximate mu (landmarks, RFF), model forward
#      under autocast, Trainer(threads="auto") leaving the CPU threads alone on the GPU.
#   2. benchmarks/b_gkhr_speed.py --device cuda   (target <= 0.5 s for n = 50 000, d = 512, m = 400)
#      and benchmarks/b_gkhr_million.py --device cuda (1 000 of 1 000 000 x 512 from a memory-mapped file, landmark
#      mu; exact vs approximate at 50 000)
#   3. benchmarks/a_vectorised_seeds.py --device cuda   (target >= 10x over 30 sequential runs)
#   4. benchmarks/a_step_cost.py and engine_overhead.py on the GPU (ratios; targets as on the CPU)
#   5. benchmarks/c_robust_cost.py --device cuda (DS3L / L2RW vs a plain update; Retrieve vs DS3L, quick digits)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-_build/gpu}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" SSLKIT_PROGRESS=0 SSLKIT_OFFLINE=1 PYTHONWARNINGS=ignore
PY=${PYTHON:-python3}
status=0

step() {  # step NAME LIMIT_SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  echo "== $name (limit ${limit} s)"
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - t0)) s; last lines:"
  tail -n 12 "$OUT/$name.log" | sed 's/^/   | /'
  [ "$rc" -eq 0 ] || status=1
}

{ nvidia-smi -L; "$PY" -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, \
'cuda', torch.cuda.is_available() and torch.cuda.get_device_name())"; } 2>&1 | tee "$OUT/device.txt"

step gpu_tests 300 "$PY" -m pytest -q -p no:cacheprovider -rs -k "cuda or gpu" \
  tests/test_gpu.py tests/test_models.py tests/test_risk_estimators.py tests/test_select.py \
  tests/test_select_herding.py tests/test_select_kernel_mean.py
step contract_cuda 120 "$PY" -m pytest -q -p no:cacheprovider -rs -k "cuda" tests/test_contract.py
step retrieve_greedy 90 "$PY" benchmarks/c_retrieve_greedy.py --device cuda --no-cords
step gkhr_speed 180 "$PY" benchmarks/b_gkhr_speed.py --device cuda --skip-numpy --repeats 3
step gkhr_million 180 "$PY" benchmarks/b_gkhr_million.py --device cuda --compare 50000
step vectorised_seeds 240 "$PY" benchmarks/a_vectorised_seeds.py --device cuda
step step_cost 120 "$PY" benchmarks/a_step_cost.py --device cuda
step engine_overhead 120 "$PY" benchmarks/engine_overhead.py --device cuda
step robust_cost 180 "$PY" benchmarks/c_robust_cost.py --device cuda --model both
echo "gpu_session: $([ $status -eq 0 ] && echo 'every step passed' || echo 'some step FAILED (see its log)')"
exit $status
