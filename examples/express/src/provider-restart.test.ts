// The demo's local provider across a restart, as `pnpm demo` runs it: the same account subject and,
// with the signing key kept in the data directory, the same keys, so the Portcullis account linked
// at the first start is the one the second start signs in.
import { type KeyObject, generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgliteStorage } from "@portcullis/kysely";
import { driveAuthorization, localProviderAccounts } from "@portcullis/testing";
import { expect, it } from "vitest";
import { createDemoApp, randomSecret, startDemoProvider } from "./app.js";

const origin = "http://localhost:3000";

/** One start of the demo on `dataDir` with its provider: signs in through the provider once, then stops both. */
async function startSignInStop(
  dataDir: string,
  secrets: { signingSecret: string; encryptionKey: string },
  signingKey: KeyObject,
) {
  const storage = await pgliteStorage({ dataDir });
  const local = await startDemoProvider({ origin, signingKey });
  const demo = await createDemoApp({ ...secrets, origin, storage, oauthProvider: local.registration });
  const server = demo.app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const begun = await fetch(`${base}/api/v1/auth/oauth/local/authorize?redirect=%2F`);
    const cookie = (begun.headers.get("set-cookie") ?? "").split(";", 1)[0] as string;
    const { data } = (await begun.json()) as { data: { authUrl: string } };
    const callback = await driveAuthorization(data.authUrl, local.account);
    const signedIn = await fetch(`${base}/api/v1/auth/oauth/local/callback${callback.search}`, { headers: { cookie } });
    const { data: result } = (await signedIn.json()) as { data: { user: { id: string; username: string } } };
    return { user: result.user, keys: await (await fetch(`${local.provider.issuer}/jwks`)).json() };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await local.provider.close();
    await storage.close();
  }
}

it("a restart on the same data directory and provider key signs ada in to the account linked at the first start", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "portcullis-demo-provider-"));
  const secrets = { signingSecret: randomSecret(), encryptionKey: randomSecret() };
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  try {
    const first = await startSignInStop(dataDir, secrets, privateKey);
    const second = await startSignInStop(dataDir, secrets, privateKey);
    expect(first.user.username).toBe("ada");
    expect(second.user.id).toBe(first.user.id);
    expect(second.keys).toEqual(first.keys);

    const storage = await pgliteStorage({ dataDir });
    try {
      const linked = await storage.identities.find("local", localProviderAccounts.ada.sub);
      expect(linked?.userId).toBe(first.user.id);
    } finally {
      await storage.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}); // three starts of embedded PGlite, slow on a busy machine
