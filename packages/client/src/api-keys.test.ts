import { describe, expect, it, vi } from "vitest";
import type { CreatedApiKey } from "./api-keys.js";
import { signedInScriptedClient } from "./scripted-server.test-support.js";

const created: CreatedApiKey = {
  id: "key/1",
  name: "CI",
  start: "pc_live_AbCd",
  scopes: ["reports:read"],
  createdAt: 1,
  expiresAt: 2,
  lastUsedAt: null,
  revokedAt: null,
  orgId: null,
  key: "pc_live_AbCdEfGhIjKlMnOpQrStUvWxYz012345678901",
};
const { key: _secret, ...listed } = created;
const reauthenticationNeeded = { code: 40001, message: "Confirm it is you", status: 400 };

describe("client.apiKeys: the API key routes", () => {
  it("creates, lists, renames and revokes with the bearer token, ids encoded in the path", async () => {
    const { client, server } = await signedInScriptedClient(({ method }) => ({
      code: 0,
      data: method === "GET" ? [listed] : method === "POST" ? created : { renamed: true, revoked: true },
    }));
    expect(await client.apiKeys.create({ name: "CI", scopes: ["reports:read"], expiresIn: "30d" })).toEqual(created);
    expect(await client.apiKeys.list()).toEqual([listed]);
    await client.apiKeys.rename("key/1", "nightly");
    await client.apiKeys.revoke("key/1");
    const token = server.sent[1]?.authorization;
    expect(token).toMatch(/^Bearer /);
    expect(server.sent.slice(1).map(({ method, path, body, authorization }) => [method, path, body, authorization])).toEqual([
      ["POST", "/auth/api-keys", { name: "CI", scopes: ["reports:read"], expiresIn: "30d" }, token],
      ["GET", "/auth/api-keys", undefined, token],
      ["PATCH", "/auth/api-keys/key%2F1", { name: "nightly" }, token],
      ["DELETE", "/auth/api-keys/key%2F1", undefined, token],
    ]);
  });

  it("AK-6: an organization's keys: made, listed and revoked under the organization's path", async () => {
    const ofOrganization = { ...created, orgId: "org/1" };
    const { client, server } = await signedInScriptedClient(({ method }) => ({
      code: 0,
      data: method === "GET" ? [listed] : method === "POST" ? ofOrganization : { revoked: true },
    }));
    const keys = client.apiKeys.ofOrganization("org/1");
    expect(await keys.create({ name: "CI" }, { password: "pw" })).toEqual(ofOrganization);
    expect(await keys.list()).toEqual([listed]);
    await keys.revoke("key/1");
    expect(server.sent.slice(1).map(({ method, path, body }) => [method, path, body])).toEqual([
      ["POST", "/auth/orgs/org%2F1/api-keys", { name: "CI", password: "pw" }],
      ["GET", "/auth/orgs/org%2F1/api-keys", undefined],
      ["DELETE", "/auth/orgs/org%2F1/api-keys/key%2F1", undefined],
    ]);
  });

  it("STUP-3: a creation's 40001 asks reauthenticate once and sends the request once more with the proof; a proof given is sent at once", async () => {
    const reauthenticate = vi.fn(() => ({ password: "pw", totpCode: "123456" }));
    const { client, server } = await signedInScriptedClient(
      ({ body }) => ((body as { password?: string } | undefined)?.password ? { code: 0, data: created } : reauthenticationNeeded),
      { reauthenticate },
    );
    expect(await client.apiKeys.create({ name: "CI" })).toEqual(created);
    expect(reauthenticate.mock.calls).toEqual([[{ operation: "apiKeys.create", accepts: ["password", "totpCode"] }]]);
    await client.apiKeys.create({ name: "CI" }, { password: "pw" });
    expect(reauthenticate).toHaveBeenCalledTimes(1);
    expect(server.sent.slice(1).map(({ body }) => body)).toEqual([
      { name: "CI" },
      { name: "CI", password: "pw", totpCode: "123456" },
      { name: "CI", password: "pw" },
    ]);
  });

  it("without reauthenticate, or when it gives nothing, the 40001 rejects after one request; a 40400 (keys off) rejects with the server's code", async () => {
    const { client, server } = await signedInScriptedClient(() => reauthenticationNeeded, { reauthenticate: () => null });
    await expect(client.apiKeys.create({ name: "CI" })).rejects.toMatchObject({ code: 40001 });
    expect(server.sent).toHaveLength(2);
    const off = await signedInScriptedClient(() => ({ code: 40400, message: "No such route", status: 404 }));
    await expect(off.client.apiKeys.list()).rejects.toMatchObject({ kind: "server", code: 40400, status: 404 });
  });

  it("a signed-out client sends nothing and rejects not_signed_in", async () => {
    const { client, server } = await signedInScriptedClient(() => ({ code: 0, data: { ended: 1 } }));
    await client.sessions.endAll();
    const before = server.sent.length;
    await expect(client.apiKeys.list()).rejects.toMatchObject({ kind: "not_signed_in" });
    await expect(client.apiKeys.create({ name: "CI" })).rejects.toMatchObject({ kind: "not_signed_in" });
    expect(server.sent.length).toBe(before);
  });
});
