// docs/adapters/nestjs.md shows excerpts of examples/nestjs, which its own tests compile and drive.
// The excerpts are not programs of their own (some elide with "…"), so they are checked line by
// line: every line of a TypeScript block, but those that elide, is a line of the example's sources
// (trailing comments aside), so the page cannot drift from the code the tests run.
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const sources = join(root, "examples/nestjs/src");

/** The TypeScript blocks of a Markdown page, each as its lines. */
function typeScriptBlocks(markdown: string): string[][] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => (match[1] ?? "").split("\n"));
}

/** A line as compared: without its indentation and its trailing `//` comment. */
function code(line: string): string {
  return line.replace(/\s+\/\/ .*$/, "").trim();
}

/** The compared lines of the example's sources, its tests excepted. */
async function sourceLines(): Promise<Set<string>> {
  const lines = new Set<string>();
  for (const name of await readdir(sources)) {
    if (!name.endsWith(".ts") || name.endsWith(".test.ts")) continue;
    for (const line of (await readFile(join(sources, name), "utf8")).split("\n")) lines.add(code(line));
  }
  return lines;
}

/** The lines of `block` that the example's sources lack (blank lines and lines whose code elides aside). */
function missingLines(block: string[], lines: Set<string>): string[] {
  return block.map(code).filter((line) => line !== "" && !line.includes("…") && !lines.has(line));
}

describe("docs/adapters/nestjs.md", () => {
  it("has TypeScript excerpts, and each of their lines is a line of examples/nestjs/src", async () => {
    const blocks = typeScriptBlocks(await readFile(join(root, "docs/adapters/nestjs.md"), "utf8"));
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const lines = await sourceLines();
    expect(blocks.map((block) => missingLines(block, lines))).toEqual(blocks.map(() => []));
  });

  it("the line check finds a line that is not in the sources", async () => {
    const lines = await sourceLines();
    expect(missingLines(["app.use(authRouter(auth));", "app.use(authRouter(auth, { strict: true }));"], lines)).toEqual([
      "app.use(authRouter(auth, { strict: true }));",
    ]);
  });
});
