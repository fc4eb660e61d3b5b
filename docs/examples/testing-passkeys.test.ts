// @portcullis/testing: a software authenticator plays the browser and the passkey, with real signatures.
import { randomBytes } from "node:crypto";
import {
  createAuth,
  createUser,
  memoryStorage,
  webauthnBegin,
  webauthnFinish,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import { type SoftwareAuthenticator, createSoftwareAuthenticator } from "@portcullis/testing";
import { expect, it } from "vitest";

const origin = "https://app.example.com";
const auth = createAuth({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
  passkeys: { rpId: "app.example.com", rpName: "Example", origins: [origin] },
});
const password = "correct horse battery staple";

/** Creates `username` and registers a passkey of a new software authenticator for it, as the browser would. */
async function userWithPasskey(username: string): Promise<SoftwareAuthenticator> {
  const user = await createUser(auth, { username, password });
  const authenticator = createSoftwareAuthenticator({ origin });
  const registration = await webauthnRegisterBegin(auth, { userId: user.id, password, label: "Laptop" });
  const created = authenticator.register(registration.options);
  await webauthnRegisterFinish(auth, { userId: user.id, ceremonyId: registration.ceremonyId, response: created });
  return authenticator;
}

it("a user registers a passkey, then signs in with it without a username", async () => {
  const authenticator = await userWithPasskey("alice");
  const ceremony = await webauthnBegin(auth, {});
  const result = await webauthnFinish(auth, {
    ceremonyId: ceremony.ceremonyId,
    response: authenticator.authenticate(ceremony.options),
  });
  expect(result.status).toBe("authenticated");
});

it("refuses an assertion signed for a page of another origin", async () => {
  const authenticator = await userWithPasskey("bob");
  const ceremony = await webauthnBegin(auth, { username: "bob" });
  const phished = authenticator.authenticate(ceremony.options, { origin: "https://app.example.com.evil.example" });
  await expect(webauthnFinish(auth, { ceremonyId: ceremony.ceremonyId, response: phished })).rejects.toMatchObject({
    code: 40100,
  });
});
