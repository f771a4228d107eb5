#!/usr/bin/env bash
# The checks only a CUDA machine can run: tests/test_cuda.py (no waiting on the device, the copy
# tracker / sanitizer / audit against torch's profiler on CUDA, a picture's host copy) and the
# suite's other CUDA tests, on whatever CUDA torch that machine has (this file installs no torch).
#
#   scripts/gpu_check.sh [pytest arguments]
#
# A machine without the package index: WHEELS names a folder of wheels for the dependencies it
# lacks (e.g. `pip download --only-binary=:all: --python-version 3.12 --platform
# manylinux2014_x86_64 --platform any -d .whl anywidget ipywidgets executing python-flint
# matplotlib pytest hypothesis`); only the ones whose module does not import are installed,
# into a folder put on PYTHONPATH (the system's torch and NumPy stay).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python="${PYTHON:-python3}"
"$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' || {
    echo "error: torch.cuda.is_available() is False for $python: run this on a CUDA machine" >&2
    exit 2
}
site_dir="${GPU_CHECK_SITE:-/tmp/sw-gpu-site}"  # what is missing goes here, on PYTHONPATH
export PYTHONPATH="$PWD:$site_dir${PYTHONPATH:+:$PYTHONPATH}"
index=()
[ -n "${WHEELS:-}" ] && index=(--no-index --find-links "$WHEELS")
missing=()  # the distributions whose module the environment cannot import
for pair in anywidget:anywidget ipywidgets:ipywidgets traitlets:traitlets IPython:ipython \
    executing:executing flint:python-flint matplotlib:matplotlib pytest:pytest \
    hypothesis:hypothesis; do
    "$python" -c "import ${pair%%:*}" 2>/dev/null || missing+=("${pair##*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
    "$python" -m pip install -q --target "$site_dir" "${index[@]}" "${missing[@]}"
fi
"$python" -c 'import torch; print("torch", torch.__version__, "on", torch.cuda.get_device_name(0))'
"$python" -m pytest -q -p no:cacheprovider -rs tests/test_cuda.py \
    tests/test_copies.py::test_cuda_tensors "$@"
