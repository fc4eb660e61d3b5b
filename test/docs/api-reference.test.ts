// The API reference (`pnpm docs:api`, TypeDoc over typedoc.json): it covers every public entry point
// of every package, and an export without JSDoc fails the command with its name, which is what makes
// the CI step that runs it a guard.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const typedocBin = join(root, "node_modules/typedoc/bin/typedoc");

interface TypedocConfig {
  entryPoints: string[];
  packagesRequiringDocumentation: string[];
}

interface PackageJson {
  name: string;
  private?: boolean;
  exports?: Record<string, string | { types?: string }>;
}

/** Runs TypeDoc as `pnpm docs:api` does, with the options file `options` (typedoc.json), validating only (no HTML). */
function typedoc(options: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [typedocBin, "--options", options, "--emit", "none"], { cwd: root }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ status, output: stripVTControlCharacters(`${stdout}${stderr}`) });
    });
  });
}

/** The source file behind each public entry point of each published package, from its `exports` map. */
async function publishedEntryPoints(): Promise<{ names: string[]; entryPoints: string[] }> {
  const names: string[] = [];
  const entryPoints = new Set<string>();
  for (const dir of await readdir(join(root, "packages"))) {
    const manifest = JSON.parse(await readFile(join(root, "packages", dir, "package.json"), "utf8")) as PackageJson;
    if (manifest.private) continue;
    names.push(manifest.name);
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const types = typeof target === "string" ? undefined : target.types;
      if (types === undefined) {
        expect(subpath, `${manifest.name}: an export without types is only ./package.json`).toBe("./package.json");
        continue;
      }
      entryPoints.add(`packages/${dir}/${types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts")}`);
    }
  }
  return { names: names.sort(), entryPoints: [...entryPoints].sort() };
}

describe("pnpm docs:api", () => {
  it("covers the public entry points of every published package, and requires documentation of each", async () => {
    const config = JSON.parse(await readFile(join(root, "typedoc.json"), "utf8")) as TypedocConfig;
    const published = await publishedEntryPoints();
    expect([...config.entryPoints].sort()).toEqual(published.entryPoints);
    expect([...config.packagesRequiringDocumentation].sort()).toEqual(published.names);
  });

  describe("on a package with an undocumented export", () => {
    let fixture = "";
    beforeAll(async () => {
      // A package as TypeDoc sees it: its name (one the config requires documentation of), its source,
      // and an options file that is the repository's typedoc.json but for the entry point and tsconfig.
      fixture = await mkdtemp(join(tmpdir(), "portcullis-api-reference-"));
      await writeFile(
        join(fixture, "typedoc.json"),
        JSON.stringify({ extends: [join(root, "typedoc.json")], entryPoints: ["index.ts"], tsconfig: "tsconfig.json" }),
      );
      await writeFile(join(fixture, "package.json"), JSON.stringify({ name: "@portcullis/core", type: "module" }));
      await writeFile(
        join(fixture, "tsconfig.json"),
        JSON.stringify({ extends: join(root, "tsconfig.base.json"), compilerOptions: { types: [] }, include: ["index.ts"] }),
      );
      await writeFile(
        join(fixture, "index.ts"),
        [
          "/** Adds one. */",
          "export function documentedExport(value: number): number {",
          "  return value + 1;",
          "}",
          "",
          "export function undocumentedExport(): void {}",
          "",
          "/** A store. */",
          "export interface FixtureStore {",
          "  /** Reads. */",
          "  read(): string;",
          "  write(value: string): void;",
          "}",
          "",
        ].join("\n"),
      );
    });
    afterAll(() => rm(fixture, { recursive: true, force: true }));

    it("fails and names each undocumented export and method, and nothing documented", async () => {
      const { status, output } = await typedoc(join(fixture, "typedoc.json"));
      expect(status).not.toBe(0);
      expect(output).toMatch(/undocumentedExport \(CallSignature\), defined in .* does not have any documentation/);
      expect(output).toMatch(/FixtureStore\.write \(CallSignature\), defined in .* does not have any documentation/);
      expect(output).not.toMatch(/\bdocumentedExport \(/);
      expect(output).not.toContain("FixtureStore.read");
    });
  });

  it("passes on the repository: every export has its JSDoc, every {@link} resolves", async () => {
    const { status, output } = await typedoc(join(root, "typedoc.json"));
    expect({ status, output: output.trim() }).toEqual({ status: 0, output: "" });
  });
});
