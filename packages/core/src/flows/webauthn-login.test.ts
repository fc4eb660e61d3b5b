import { describe, expect, it } from "vitest";
import { makePasskeyAuth, passkeySignIn, userWithPasskey } from "./passkeys.test-support.js";
import { verifyAccessToken } from "./verify-access-token.js";

describe("webauthnFinish", () => {
  it("a user-verified discoverable passkey signs in with amr hwk and user", async () => {
    const harness = makePasskeyAuth();
    const { userId, authenticator } = await userWithPasskey(harness);
    const result = await passkeySignIn(harness.auth, authenticator);
    if (result.status !== "authenticated") throw new Error(result.status);
    const access = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
    expect(access).toMatchObject({ userId, amr: ["hwk", "user"] });
  });
});
