// Engines check (issue 38, item 5): every published package declares the root's `engines.node`, and
// every package it installs with (its dependencies, optional dependencies and the peers it names, all
// the way down, as pnpm installed them) accepts every Node.js version of that range. A dependency that
// asks for more (kysely 0.29 wants Node >= 22) fails the check, named with the chain that brings it in,
// before a user meets npm's EBADENGINE warning. A peer (the host's own Express, Hono or Fastify) must
// accept the range itself; what the peer installs in turn is the host's choice of version, so a
// narrower range there is printed as a note, not a failure (docs/node-versions.md names the ones
// known). Run by .ci/run; `node scripts/check-engines.mjs [workspace root]`.
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import semver from "semver";

const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..");
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

/** The directory holding `name` as Node would find it from `fromDir`, or null when it is not installed. */
function installedDir(fromDir, name) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(dir) === dir) return null;
  }
}

/** The packages a package installs with: dependencies, optional dependencies and peers, each marked whether it is a peer. */
function dependenciesOf(manifest) {
  return [
    ...Object.keys(manifest.dependencies ?? {}).map((name) => ({ name, peer: false })),
    ...Object.keys(manifest.optionalDependencies ?? {}).map((name) => ({ name, peer: false })),
    ...Object.keys(manifest.peerDependencies ?? {}).map((name) => ({ name, peer: true })),
  ];
}

const range = readJson(join(root, "package.json")).engines?.node;
if (!semver.validRange(range)) {
  console.error(`check-engines: the root package.json's engines.node ${JSON.stringify(range)} is not a range`);
  process.exit(1);
}

const problems = [];
const notes = [];
let checked = 0;
const packageDirs = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")));

for (const packageDir of packageDirs) {
  const manifest = readJson(join(packageDir, "package.json"));
  if (manifest.engines?.node !== range) {
    problems.push(
      `${manifest.name} declares engines.node ${JSON.stringify(manifest.engines?.node)}; the root declares ${JSON.stringify(range)}`,
    );
  }
  const seen = new Set();
  const queue = [{ dir: realpathSync(packageDir), chain: [manifest.name], belowPeer: false }];
  while (queue.length > 0) {
    const { dir, chain, belowPeer } = queue.shift();
    const current = readJson(join(dir, "package.json"));
    for (const { name, peer } of dependenciesOf(current)) {
      const found = installedDir(dir, name);
      if (found === null || seen.has(found)) continue;
      seen.add(found);
      const dependency = readJson(join(found, "package.json"));
      const path = [...chain, `${dependency.name}@${dependency.version}`];
      const wanted = dependency.engines?.node;
      checked += 1;
      if (typeof wanted === "string" && semver.validRange(wanted) && !semver.subset(range, wanted)) {
        const message = `${path.join(" > ")} needs Node ${wanted}, narrower than ${range}`;
        (belowPeer ? notes : problems).push(message);
      }
      queue.push({ dir: found, chain: path, belowPeer: belowPeer || peer });
    }
  }
}

for (const note of notes) console.log(`check-engines: note: ${note} (installed by the host's version of a peer)`);
if (problems.length > 0) {
  for (const problem of problems) console.error(`check-engines: ${problem}`);
  process.exit(1);
}
console.log(`check-engines: ${packageDirs.length} packages declare Node ${range}; ${checked} installed dependencies accept it`);
