#!/usr/bin/env bash
# Set up what stridewidget needs, idempotently.  Usage: scripts/setup.sh [demo|test]
#   demo: Python venv with the package and JupyterLab (enough to run the tutorials)
#   test: also the test tools, Node packages and (as root, when missing) Debian's chromium
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-demo}
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
# Install a CPU build of torch first when none is there: an unpinned `torch` resolves to a
# multi-GB CUDA build on Linux.  Users who already have torch keep theirs.
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "== installing torch (CPU build 2.13.0)"
  pip install "torch==2.13.0"
fi
extra=notebooks
[ "$what" = test ] && extra=test
echo "== installing stridewidget[$extra] (editable)"
pip install -e ".[$extra]"

if [ "$what" = test ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  if ! [ -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "== installing Debian's chromium (browser tests)"
      apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
    else
      echo "The browser tests need /usr/bin/chromium: run 'sudo apt-get install -y chromium'." >&2
      exit 1
    fi
  fi
fi
