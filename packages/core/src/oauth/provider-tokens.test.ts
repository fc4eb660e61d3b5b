import { driveAuthorization } from "@portcullis/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type OidcTestProvider, startOidcProvider } from "../../../../test/fixtures/oidc-provider.js";
import { oauthAuthorize, oauthCallback } from "../flows/oauth-sign-in.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import { authWithProviders, discoveredProvider } from "./oauth.test-support.js";

let provider: OidcTestProvider;

beforeAll(async () => {
  provider = await startOidcProvider();
});

afterAll(async () => {
  await provider.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Memory storage that keeps, as JSON, every argument handed to any of its stores. */
function recordingStorage(): { storage: Storage; handed: string[] } {
  const handed: string[] = [];
  const inner = memoryStorage();
  const wrap = (store: object) =>
    new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          handed.push(JSON.stringify(args));
          return value.apply(target, args);
        };
      },
    });
  const storage = Object.fromEntries(
    Object.entries(inner).map(([name, store]) => [name, typeof store === "object" && store !== null ? wrap(store) : store]),
  ) as unknown as Storage;
  return { storage, handed };
}

/** Records the tokens the provider's token endpoint answers, as Portcullis's own requests receive them. */
function recordProviderTokens(): string[] {
  const tokens: string[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (...args: Parameters<typeof fetch>) => {
    const response = await realFetch(...args);
    const url = String(args[0] instanceof Request ? args[0].url : args[0]);
    if (url.startsWith(provider.issuer) && url.includes("/token")) {
      const answer = (await response.clone().json()) as Record<string, unknown>;
      for (const name of ["access_token", "id_token", "refresh_token"]) {
        if (typeof answer[name] === "string") tokens.push(answer[name] as string);
      }
    }
    return response;
  });
  return tokens;
}

describe("a provider's tokens (ASVS 10.1.1)", () => {
  it("ASVS 10.1.1: the provider's access and ID tokens are used at the callback and never stored, answered or emitted", async () => {
    const { storage, handed } = recordingStorage();
    const h = authWithProviders({ corp: discoveredProvider(provider) }, { storage });
    const providerTokens = recordProviderTokens();
    const begun = await oauthAuthorize(h.auth, { provider: "corp" });
    const callback = await driveAuthorization(begun.authUrl, { username: "alice" });
    const result = await oauthCallback(h.auth, {
      provider: "corp",
      query: callback.search,
      browserBinding: begun.browserBinding,
    });
    expect(result.status).toBe("authenticated");
    expect(providerTokens.length).toBeGreaterThanOrEqual(2);
    expect(handed.some((args) => args.includes(provider.accounts.alice?.sub as string))).toBe(true);
    const seen = [...handed, JSON.stringify(result), JSON.stringify(h.events)].join("\n");
    for (const token of providerTokens) {
      expect(seen.includes(token), `a provider token of ${token.length} characters was kept or answered`).toBe(false);
      expect(seen.includes(token.slice(0, 24))).toBe(false);
    }
  });
});
