#!/usr/bin/env bash
# Set up, show a tensor's layout, write an interactive offline page, then open the tutorials.
#   scripts/demo.sh            (JupyterLab on the tutorials; pass --no-lab to skip it)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh demo
.venv/bin/python -m stridewidget "torch.arange(12.0).reshape(3, 4).t()" --html stridewidget-demo.html
echo
echo "Interactive page (works offline, no kernel): $(pwd)/stridewidget-demo.html"
if [ "${1:-}" != "--no-lab" ] && [ -t 1 ]; then
  exec .venv/bin/jupyter lab notebooks/01_storage_strides_views.ipynb
else
  echo "Tutorials: .venv/bin/jupyter lab notebooks/"
fi
