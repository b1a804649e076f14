#!/bin/sh
# The GPU check from the source tree, on a machine with a GPU and no network (bench/gpu_check.py says what it
# checks).  JAX with its CUDA plugin, NumPy and (optionally) PyTorch come from the machine; gast and beniget,
# the two packages of ours it lacks, come as wheels in .whl/ at the repository root, fetched beforehand where
# pip works:
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl gast beniget
# and are installed into /tmp/site (nothing else on the machine changes).  The report (gpu.md, gpu.json)
# goes to $OUT if set, else bench/results/gpu/.  Arguments are passed on (--budget SECONDS, --only ...).
set -e
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$(pwd)${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# JAX takes 75% of the GPU's memory at its start unless told otherwise; PyTorch's rows need some
export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
exec $PY -m bench --gpu-check --out "${OUT:-bench/results/gpu}" "$@"
