#!/usr/bin/env bash
# Fetches the dashboard's third-party browser code (uPlot) into src/web/npm/node_modules,
# exactly as the committed lock file (src/web/npm/package-lock.json) pins it: each package's
# tarball from the npm registry, checked against the lock file's sha512 integrity before it
# is unpacked. CMake copies what it fetched (cmake/CopyWebVendor.cmake); neither
# configuring nor building needs the network. No npm is needed (Debian's npm is some 300
# packages); where the registry cannot be reached and npm is installed, `npm ci --offline`
# takes the same files from npm's cache.
# Skipped while node_modules matches the lock file, so a machine without the network can
# run it again. Called by scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
web_npm=src/web/npm
lock=$web_npm/package-lock.json
marker=$web_npm/node_modules/.trainwatch-lock.json
registry=${NPM_REGISTRY:-https://registry.npmjs.org}

if cmp -s "$lock" "$marker" && [[ -f $web_npm/node_modules/uplot/dist/uPlot.iife.min.js ]]; then
  exit 0
fi

# name version integrity, one line per package of the lock file
packages=$(/usr/bin/python3 -c '
import json, sys
for path, p in json.load(open(sys.argv[1]))["packages"].items():
    if path.startswith("node_modules/"):
        print(path[len("node_modules/"):], p["version"], p["integrity"])
' "$lock")

fetch() {
  local name=$1 version=$2 integrity=$3 tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  curl -fsSL --retry 3 --max-time 60 -o "$tmp/package.tgz" "$registry/$name/-/${name##*/}-$version.tgz" || return 1
  local digest
  digest=$(/usr/bin/python3 -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tmp/package.tgz")
  if [[ $digest != "$integrity" ]]; then
    echo "setup: $name $version from $registry is not what $lock pins ($digest, expected $integrity)" >&2
    exit 1
  fi
  rm -rf "$web_npm/node_modules/$name"
  mkdir -p "$web_npm/node_modules/$name"
  tar -xzf "$tmp/package.tgz" -C "$web_npm/node_modules/$name" --strip-components=1 --no-same-owner
}

echo "setup: fetching uPlot into $web_npm/node_modules (as $lock pins it)"
fetched=true
while read -r name version integrity; do
  fetch "$name" "$version" "$integrity" || { fetched=false; break; }
done <<<"$packages"
if ! $fetched; then
  if ! command -v npm >/dev/null; then
    echo "setup: cannot download from $registry, and npm is not installed to take the files from its cache" >&2
    exit 1
  fi
  echo "setup: $registry unreachable; npm ci --offline from npm's cache"
  npm ci --prefix "$web_npm" --offline --no-audit --no-fund --ignore-scripts --loglevel=error
fi
cp "$lock" "$marker"
