#!/usr/bin/env bash
# Run the stridewidget benchmarks on a CUDA machine and store what the notebook
# notebooks/05_gpu_benchmarks.py judges the GPU claims on (it is the only source of CUDA results):
#   notebooks/results/<tag>.json            the results (schema stridewidget.bench/1)
#   notebooks/results/<tag>-<case>.png      one figure per case
# <tag> is "cuda-<gpu name>" (lower case, spaces as dashes), e.g. cuda-nvidia-h100-80gb-hbm3.
#
# Usage, from a checkout with stridewidget installed (pip install -e .) and a CUDA build of torch:
#   benchmarks/run_on_gpu.sh            # full sizes (a few minutes)
#   benchmarks/run_on_gpu.sh --quick    # small sizes (under a minute)
# Extra arguments go to python -m stridewidget.bench (e.g. --cases copy layout).
# If triton is importable, timings use triton.testing.do_bench (CUDA events, L2 flushed between runs);
# otherwise torch.utils.benchmark.Timer, which synchronises the GPU around every measurement.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python}"
out_dir="$repo_root/notebooks/results"

if ! "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "error: torch.cuda.is_available() is False for $python; run this on a machine with a CUDA GPU" \
         "and a CUDA build of torch (or set PYTHON=/path/to/python)" >&2
    exit 2
fi

gpu_name="$("$python" -c 'import torch; print(torch.cuda.get_device_name(0))')"
tag="cuda-$(echo "$gpu_name" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-*$//')"
case " $* " in *" --quick "*) tag="$tag-quick" ;; esac

mkdir -p "$out_dir"
"$python" -m stridewidget.bench --device cuda \
    --json "$out_dir/$tag.json" --plot "$out_dir/$tag.png" "$@"
echo "done: $out_dir/$tag.json. Rebuild notebook 05 (python notebooks/build.py 05): its GPU cells fail" \
     "until the GPU claims in notebooks/claims.toml are judged on this run."
