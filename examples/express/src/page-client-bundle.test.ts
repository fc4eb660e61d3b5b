import { expect, it } from "vitest";
import { bundlePageClient } from "./page-client-bundle.js";

it("bundles the client from its source, not its build, with one copy of @simplewebauthn/browser", async () => {
  const { sources } = await bundlePageClient();
  const client = sources.filter((source) => source.startsWith("packages/client/"));
  expect(client).toContain("packages/client/src/client.ts");
  expect(client.every((source) => source.startsWith("packages/client/src/") && !source.includes(".test"))).toBe(true);
  const webauthnCopies = new Set(
    sources.filter((source) => source.includes("@simplewebauthn/browser/")).map((source) => source.split("/esm/")[0]),
  );
  expect(webauthnCopies.size).toBe(1);
});

it("is one ES module that exports what the page imports (the device names with Bowser inside), and builds once per process", async () => {
  const bundle = await bundlePageClient();
  expect(await bundlePageClient()).toBe(bundle);
  const module = (await import(`data:text/javascript;base64,${Buffer.from(bundle.javascript).toString("base64")}`)) as Record<
    string,
    unknown
  >;
  expect(Object.keys(module).sort()).toEqual([
    "AuthClientError",
    "browserSupportsWebAuthn",
    "browserSupportsWebAuthnAutofill",
    "createAuthClient",
    "deviceKind",
    "deviceName",
    "placeName",
    "sendSignal",
    "tokenFromLink",
  ]);
  expect(typeof module.createAuthClient).toBe("function");
  expect(bundle.sources.some((source) => source.includes("node_modules/bowser/"))).toBe(true);
  expect(
    (module.deviceName as (userAgent: string) => string)("Mozilla/5.0 (X11; Linux x86_64) Chrome/142.0.0.0 Safari/537.36"),
  ).toBe("Chrome on Linux");
});
