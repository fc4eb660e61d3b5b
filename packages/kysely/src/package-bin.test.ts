// pnpm links a workspace package's bins at install, before anything is built: a bin that points
// into dist/ is missing then, and every `pnpm install` of a fresh checkout warned about it.
import { existsSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";

const packageRoot = new URL("../", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("package.json", packageRoot), "utf8")) as {
  bin: Record<string, string>;
  files: string[];
};

it("every bin is a file of the source tree, outside dist/, and is shipped", () => {
  expect(Object.keys(manifest.bin)).toEqual(["portcullis"]);
  for (const target of Object.values(manifest.bin)) {
    expect(target.startsWith("./dist/")).toBe(false);
    expect(existsSync(new URL(target, packageRoot))).toBe(true);
    expect(manifest.files).toContain(target.replace(/^\.\//, "").split("/")[0]);
  }
});
