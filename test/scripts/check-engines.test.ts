import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const script = join(dirname(fileURLToPath(import.meta.url)), "../../scripts/check-engines.mjs");
const workspaces: string[] = [];

/** A workspace on disk: each path (relative to its root) to the package.json written there. */
function workspace(manifests: Record<string, object>): string {
  const root = mkdtempSync(join(tmpdir(), "check-engines-"));
  workspaces.push(root);
  for (const [path, manifest] of Object.entries(manifests)) {
    mkdirSync(join(root, path), { recursive: true });
    writeFileSync(join(root, path, "package.json"), JSON.stringify(manifest));
  }
  return root;
}

function checkEngines(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, root], (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

const range = { node: ">=20.19" };

afterEach(() => {
  for (const root of workspaces.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("scripts/check-engines.mjs (issue 38, item 5)", () => {
  it("passes when every package declares the root's range and every dependency accepts it", async () => {
    const root = workspace({
      ".": { name: "root", engines: range },
      "packages/a": { name: "@x/a", engines: range, dependencies: { dep: "^1" } },
      "packages/a/node_modules/dep": {
        name: "dep",
        version: "1.0.0",
        engines: { node: ">=20.0.0" },
        dependencies: { deep: "^1" },
      },
      "node_modules/deep": { name: "deep", version: "1.2.0", engines: { node: ">= 18" } },
    });
    const result = await checkEngines(root);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("1 packages declare Node >=20.19; 2 installed dependencies accept it");
  });

  it("fails on a dependency, however deep, that needs a newer Node.js, naming the chain", async () => {
    const root = workspace({
      ".": { name: "root", engines: range },
      "packages/a": { name: "@x/a", engines: range, dependencies: { dep: "^1" } },
      "packages/a/node_modules/dep": { name: "dep", version: "1.0.0", dependencies: { deep: "^0.29" } },
      "node_modules/deep": { name: "deep", version: "0.29.9", engines: { node: ">=22.0.0" } },
    });
    const result = await checkEngines(root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("@x/a > dep@1.0.0 > deep@0.29.9 needs Node >=22.0.0, narrower than >=20.19");
  });

  it("fails when a package's engines differ from the root's", async () => {
    const root = workspace({
      ".": { name: "root", engines: range },
      "packages/a": { name: "@x/a", engines: { node: ">=22" } },
    });
    const result = await checkEngines(root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('@x/a declares engines.node ">=22"; the root declares ">=20.19"');
  });

  it("fails on a peer that needs a newer Node.js, and only notes what the peer installs in turn", async () => {
    const peerTree = {
      ".": { name: "root", engines: range },
      "packages/b": { name: "@x/b", engines: range, peerDependencies: { framework: "^5" } },
      "node_modules/framework": { name: "framework", version: "5.12.8", dependencies: { cookie: "^2" } },
      "node_modules/cookie": { name: "cookie", version: "2.0.2", engines: { node: ">=22" } },
    };
    const noted = await checkEngines(workspace(peerTree));
    expect(noted.code).toBe(0);
    expect(noted.stdout).toContain("note: @x/b > framework@5.12.8 > cookie@2.0.2 needs Node >=22");

    const narrowPeer = await checkEngines(
      workspace({
        ...peerTree,
        "node_modules/framework": { name: "framework", version: "6.0.0", engines: { node: ">=22" } },
      }),
    );
    expect(narrowPeer.code).toBe(1);
    expect(narrowPeer.stderr).toContain("@x/b > framework@6.0.0 needs Node >=22, narrower than >=20.19");
  });
});
