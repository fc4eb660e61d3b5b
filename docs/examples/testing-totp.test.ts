// @portcullis/testing: a TOTP code for the secret enrolment returned, at the moment the test's clock says.
import { randomBytes } from "node:crypto";
import { beginTotpSetup, createAuth, createUser, enableTotp, login, memoryStorage, verifyTotp } from "@portcullis/core";
import { totpCode } from "@portcullis/testing";
import { expect, it } from "vitest";

it("a user turns TOTP on with a code from the enrolment's URI, then signs in with the next code", async () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
    now: () => now,
  });
  const password = "correct horse battery staple";
  const user = await createUser(auth, { username: "alice", password });

  const setup = await beginTotpSetup(auth, { userId: user.id, password });
  await enableTotp(auth, { userId: user.id, password, code: totpCode({ secret: setup.otpauthUrl, at: now }) });

  now += 30_000; // a code is accepted once: the next sign-in uses the next period's
  const first = await login(auth, { username: "alice", password });
  expect(first.status).toBe("totp_required");
  if (first.status !== "totp_required") return;
  const tokens = await verifyTotp(auth, { tempToken: first.tempToken, code: totpCode({ secret: setup.secret, at: now }) });
  expect(tokens.accessToken).toEqual(expect.any(String));
});
