#!/usr/bin/env bash
# The built front end is committed (so `pip install` from a clean clone needs no Node).
# Rebuild it and fail if the committed bundle differs from what the source builds to.
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(git ls-files -s stridewidget/notebook/static | sha1sum)
snapshot=$(mktemp -d)
cp -r stridewidget/notebook/static "$snapshot/"
npm run --silent build
if ! diff -r "$snapshot/static" stridewidget/notebook/static >/dev/null; then
  echo "stridewidget/notebook/static is stale: run 'npm run build' and commit the result." >&2
  diff -rq "$snapshot/static" stridewidget/notebook/static >&2 || true
  exit 1
fi
rm -rf "$snapshot"
echo "bundle matches its source ($before)"
