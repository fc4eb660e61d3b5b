import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onFirstUse } from "./dependencies.js";

const heavy = [
  "@node-rs/argon2",
  "@node-rs/bcrypt",
  "otpauth",
  "@simplewebauthn/server",
  "oauth4webapi",
  "jose",
  "@opentelemetry/api",
];
const source = new URL(".", import.meta.url).pathname;

async function libraryFiles(): Promise<string[]> {
  const entries = await readdir(source, { recursive: true });
  return entries.filter((file) => file.endsWith(".ts") && !file.includes(".test") && !file.includes("testing/"));
}

describe("dependencies loaded on first use", () => {
  it("no library file imports argon2, bcrypt, otpauth, jose, the passkey or the OAuth library or the OpenTelemetry API at import time (only types)", async () => {
    const found: string[] = [];
    for (const file of await libraryFiles()) {
      const text = await readFile(join(source, file), "utf8");
      for (const match of text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gms)) {
        if (heavy.includes(match[1] as string)) found.push(`${file}: ${match[1]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it("loads once, shares the load between concurrent callers, and tries again after a failure", async () => {
    let calls = 0;
    const load = onFirstUse(async () => {
      calls += 1;
      if (calls === 1) throw new Error("offline");
      return { loaded: calls };
    });
    await expect(load()).rejects.toThrow("offline");
    const [first, second] = await Promise.all([load(), load()]);
    expect(first).toEqual({ loaded: 2 });
    expect(second).toBe(first);
    expect(await load()).toBe(first);
    expect(calls).toBe(2);
  });
});
