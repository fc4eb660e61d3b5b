#!/usr/bin/env bash
# Packaging check: packs every package in packages/* with pnpm (which rewrites workspace:^ to real
# versions), lints each tarball with publint, installs all tarballs at once into an empty npm project
# together with the peer dependencies, runs scripts/package-smoke.mjs there, measures the client's
# browser bundle (scripts/client-bundle-size.mjs), type-checks
# scripts/package-consumer.ts against the packed type declarations, and runs the example tests of
# docs/testing-kit.md there with vitest, so @portcullis/testing is proven as a user installs it.
# Needs `pnpm build` to have run first (the tarballs ship dist/).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if ! declare -F pnpm >/dev/null; then
  pnpm() { npx --yes pnpm@10 "$@"; }
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/portcullis-pack.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tarballs" "$work/project"

status=0
tarballs=()
for dir in packages/*/; do
  dir="${dir%/}"
  [[ -f "$dir/package.json" ]] || continue
  name="$(node -p "require('./$dir/package.json').name")"
  if [[ ! -f "$dir/dist/index.js" ]]; then
    echo "check-packages: $name has no dist/index.js; run 'pnpm build' first" >&2
    exit 1
  fi
  echo "--- pack $name"
  dest="$work/tarballs/$(basename "$dir")"
  mkdir -p "$dest"
  (cd "$dir" && pnpm pack --pack-destination "$dest" >/dev/null)
  shopt -s nullglob
  packed=("$dest"/*.tgz)
  shopt -u nullglob
  if [[ ${#packed[@]} -ne 1 ]]; then
    echo "check-packages: pnpm pack did not produce one tarball for $name" >&2
    exit 1
  fi
  tarball="${packed[0]}"
  tarballs+=("$tarball")
  if tar -xOzf "$tarball" package/package.json | grep -q '"workspace:'; then
    echo "check-packages: $name tarball still has a workspace: dependency" >&2
    status=1
  fi
  echo "--- publint $name"
  "$root/node_modules/.bin/publint" run --level warning "$tarball" || status=1
done

if [[ ${#tarballs[@]} -eq 0 ]]; then
  echo "check-packages: no packages found under packages/" >&2
  exit 1
fi

echo "--- npm install into an empty project"
cd "$work/project"
npm init -y >/dev/null
npm pkg set type=module
npm install --no-audit --no-fund --loglevel=error "${tarballs[@]}" express hono fastify @electric-sql/pglite redis
for adapter in express hono fastify ldap kysely redis testing; do
  # The adapters must use the packed core, not a second copy fetched from the registry.
  if [[ -e "node_modules/@portcullis/$adapter/node_modules/@portcullis/core" ]]; then
    echo "check-packages: @portcullis/$adapter installed its own @portcullis/core instead of the packed one" >&2
    status=1
  fi
done
cp "$root/scripts/package-smoke.mjs" ./smoke.mjs
echo "--- import and sign in"
node smoke.mjs || status=1

echo "--- the client's browser bundle"
node "$root/scripts/client-bundle-size.mjs" "$work/project" || status=1

echo "--- type-check a TypeScript consumer against the packed types"
npm install --no-audit --no-fund --loglevel=error typescript@~5.9.3 @types/express @types/node@20
cp "$root/scripts/package-consumer.ts" ./consumer.ts
npx tsc --noEmit --strict --skipLibCheck false --target es2022 --module nodenext --moduleResolution nodenext \
  --types node consumer.ts || status=1

echo "--- @portcullis/testing: the example tests of docs/testing-kit.md, type-checked and run with vitest"
npm install --no-audit --no-fund --loglevel=error "vitest@$(node -p "require('$root/package.json').devDependencies.vitest")"
mkdir -p kit
kit_examples=(testing-passkeys.test.ts testing-oauth.test.ts testing-totp.test.ts storage-conformance.test.ts)
for example in "${kit_examples[@]}"; do cp "$root/docs/examples/$example" "kit/$example"; done
npx tsc --noEmit --strict --skipLibCheck --target es2022 --module nodenext --moduleResolution nodenext \
  --types node kit/*.test.ts || status=1
npx vitest run --root . kit || status=1

exit "$status"
