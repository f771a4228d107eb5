#!/usr/bin/env bash
# Offline copies of the two JavaScript files a standalone widget page needs
# (`python -m stridewidget EXPR --html out.html` inlines them, so the page works without a CDN):
#   require.js                  (requirejs 2.3.8, MIT)
#   html-manager-embed-amd.js   (@jupyter-widgets/html-manager 1.0.15 dist/embed-amd.js, BSD-3-Clause)
# Fetched at build/setup time from the npm registry with `npm pack` (the tarballs only, ~5 MB,
# instead of html-manager's ~120 MB dependency tree) into stridewidget/_vendor/, and checked
# against pinned SHA-256 sums.  Idempotent.  anywidget's own AMD bundle is not fetched: the
# installed anywidget Python package ships it (anywidget/nbextension/index.js).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=stridewidget/_vendor
mkdir -p "$dest"

fetch() {  # fetch <npm spec> <path inside the package> <file name in $dest> <sha256>
  local spec=$1 inner=$2 name=$3 sum=$4
  if [ -f "$dest/$name" ] && echo "$sum  $dest/$name" | sha256sum -c --status; then
    return
  fi
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
  tar xzf "$tmp"/*.tgz -C "$tmp" "package/$inner"
  cp "$tmp/package/$inner" "$dest/$name"
  rm -rf "$tmp"
  if ! echo "$sum  $dest/$name" | sha256sum -c --status; then
    echo "fetch_static_assets: $spec $inner does not match its pinned sha256; refusing it" >&2
    rm -f "$dest/$name"
    exit 1
  fi
  echo "fetched $spec -> $dest/$name"
}

fetch requirejs@2.3.8 require.js require.js \
  c1fc6b1d53af7522f78d664922abb32acac64ed0ecccb8f907f1e6fc7262563a
fetch @jupyter-widgets/html-manager@1.0.15 dist/embed-amd.js html-manager-embed-amd.js \
  ca87dff57c70ffb2658794fde0eab0e27e5f5472a1f5df7ab2b08e1039fc4b72
