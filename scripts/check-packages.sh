#!/usr/bin/env bash
# Packaging check: packs every package in packages/* with pnpm (which rewrites workspace:^ to real
# versions), lints each tarball with publint, installs all tarballs at once into an empty npm project
# together with the peer dependencies, runs scripts/package-smoke.mjs there (on this machine's Node.js
# and on the newest 22 and 24), measures the client's
# browser bundle (scripts/client-bundle-size.mjs), type-checks scripts/package-consumer.ts, the
# Express, Hono and Fastify quick starts of docs/examples and the NestJS example (examples/nestjs/src
# without its test, with Nest 11 from the registry) against the packed type declarations in one tsc
# program, runs the compiled NestJS example on Nest's Express and Fastify platforms
# (scripts/package-nestjs.ts drives a sign-in and the guarded routes over HTTP), and runs the example
# tests of docs/testing-kit.md there with vitest, so @portcullis/testing is proven as a user installs it.
# Needs `pnpm build` to have run first (the tarballs ship dist/). One npm install fetches everything,
# preferring npm's own cache (~/.npm) to the registry for what it already holds.
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
# Nest's packages at the ranges examples/nestjs/package.json asks for; the tools of the later steps.
nest_packages=()
while IFS= read -r spec; do nest_packages+=("$spec"); done < <(node -e '
  const deps = require(process.argv[1]).dependencies;
  for (const [name, range] of Object.entries(deps)) if (!name.startsWith("@portcullis/")) console.log(`${name}@${range}`);
' "$root/examples/nestjs/package.json")
npm install --prefer-offline --no-audit --no-fund --loglevel=error "${tarballs[@]}" express hono fastify @electric-sql/pglite redis react react-dom @types/react \
  typescript@~5.9.3 @types/express @types/node@20 "vitest@$(node -p "require('$root/package.json').devDependencies.vitest")" \
  "${nest_packages[@]}"
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

# The same smoke test under the newest release of each other Node.js line docs/node-versions.md
# supports (issue 38, item 5), with the binaries from the npm registry (scripts/node-binary.sh).
for major in 22 24; do
  echo "--- import and sign in on Node.js $major"
  if node_binary="$(bash "$root/scripts/node-binary.sh" "$major")"; then
    echo "$("$node_binary" --version) at $node_binary"
    "$node_binary" smoke.mjs || status=1
  else
    echo "check-packages: no Node.js $major binary for this machine (above)" >&2
    status=1
  fi
done

echo "--- the client's browser bundle"
node "$root/scripts/client-bundle-size.mjs" "$work/project" || status=1

echo "--- type-check against the packed types: a TypeScript consumer, the quick starts, examples/nestjs"
cp "$root/scripts/package-consumer.ts" ./consumer.ts
mkdir -p quick-start nest
for adapter in express hono fastify; do cp "$root/docs/examples/$adapter-quick-start.ts" quick-start/; done
cp -r "$root/examples/nestjs/src" nest/src
rm -f nest/src/*.test.ts
cp "$root/scripts/package-nestjs.ts" nest/src/check.ts
# Nest's decorators are the legacy ones; emitDecoratorMetadata as Nest's own project template sets it.
cat >tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "experimentalDecorators": true,
    "emitDecoratorMetadata": true,
    "skipLibCheck": false,
    "types": ["node"],
    "outDir": "dist"
  },
  "files": ["consumer.ts"],
  "include": ["quick-start", "nest/src"]
}
JSON
if npx tsc -p tsconfig.json; then
  echo "--- examples/nestjs, compiled by tsc, on Nest's Express and Fastify platforms"
  node dist/nest/src/check.js || status=1
else
  echo "check-packages: tsc failed (above); the NestJS example was not run" >&2
  status=1
fi

echo "--- @portcullis/testing: the example tests of docs/testing-kit.md, type-checked and run with vitest"
mkdir -p kit
kit_examples=(testing-passkeys.test.ts testing-oauth.test.ts testing-totp.test.ts storage-conformance.test.ts)
for example in "${kit_examples[@]}"; do cp "$root/docs/examples/$example" "kit/$example"; done
npx tsc --noEmit --strict --skipLibCheck --target es2022 --module nodenext --moduleResolution nodenext \
  --types node kit/*.test.ts || status=1
npx vitest run --root . kit || status=1

exit "$status"
