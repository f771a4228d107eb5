#!/usr/bin/env bash
# Set up what stridewidget needs, idempotently.  Usage: scripts/setup.sh [demo|test|min]
#   demo: Python venv with the package and JupyterLab (enough to run the tutorials)
#   test: also the test tools, Node packages and (as root, when missing) Debian's chromium
#   min:  a second venv, .venv-min/, with every dependency at the minimum version pyproject.toml
#         declares (each `>=` floor pinned with `==`), plus pytest, hypothesis and jsonschema
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-demo}
PY=${PYTHON:-python3}

if [ "$what" = min ]; then
  [ -x .venv-min/bin/python ] || "$PY" -m venv .venv-min
  "$PY" - > .venv-min/floors.txt <<'PYTHON'
import re
import tomllib  # Python >= 3.11, as in CI

with open("pyproject.toml", "rb") as pyproject:
    for requirement in tomllib.load(pyproject)["project"]["dependencies"]:
        # name[extras] >= floor [, < cap] [; marker]: constraints take the name and the floor
        floor = re.match(r"\s*([\w.-]+)(\[[^]]*\])?\s*>=\s*([^,;\s]+)", requirement)
        if floor:
            print(f"{floor[1]}=={floor[3]}")
PYTHON
  echo "== installing stridewidget at its declared minimum versions: $(paste -sd' ' .venv-min/floors.txt)"
  .venv-min/bin/python -m pip --disable-pip-version-check -q install \
    -c .venv-min/floors.txt -e . pytest hypothesis jsonschema
  exit 0
fi

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
