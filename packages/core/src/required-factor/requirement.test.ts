import { describe, expect, it } from "vitest";
import { addUser, enrolTotp, makeAuth } from "../flows/fixtures.test-support.js";
import { makeAuthenticator, makePasskeyAuth, registerPasskey } from "../flows/passkeys.test-support.js";
import type { UserRecord } from "../storage/types.js";
import type { SecondFactorRequirement, SecondFactorSubject } from "./required-factor-config.js";
import { type SignInFacts, type SignInStep, nextSignInStep, secondFactorRequired, signInStepOf } from "./requirement.js";

describe("nextSignInStep: what a proven first factor leads to", () => {
  it("STUP-4, ASVS 6.3.3: the decision as a table of every case", () => {
    const yes = true;
    const no = false;
    // multiFactor, totpEnabled, required, countedPasskey → step
    const table: [boolean, boolean, boolean, boolean, SignInStep][] = [
      [yes, yes, yes, yes, "tokens"],
      [yes, yes, yes, no, "tokens"],
      [yes, yes, no, yes, "tokens"],
      [yes, yes, no, no, "tokens"],
      [yes, no, yes, yes, "tokens"],
      [yes, no, yes, no, "tokens"],
      [yes, no, no, yes, "tokens"],
      [yes, no, no, no, "tokens"],
      [no, yes, yes, yes, "totp_required"],
      [no, yes, yes, no, "totp_required"],
      [no, yes, no, yes, "totp_required"],
      [no, yes, no, no, "totp_required"],
      [no, no, yes, yes, "passkey_required"],
      [no, no, yes, no, "enrolment_required"],
      [no, no, no, yes, "tokens"],
      [no, no, no, no, "tokens"],
    ];
    for (const [multiFactor, totpEnabled, required, countedPasskey, step] of table) {
      const facts: SignInFacts = { multiFactor, totpEnabled, required, countedPasskey };
      expect({ facts, step: nextSignInStep(facts) }).toEqual({ facts, step });
    }
  });
});

/** The stored record of a new local user with `roles`. */
async function storedUser(harness: ReturnType<typeof makeAuth>, username: string, roles: string[] = []): Promise<UserRecord> {
  const id = await addUser(harness.auth, username, undefined, roles);
  return (await harness.storage.users.findById(id)) as UserRecord;
}

describe("secondFactorRequired: whom the operator's requirement names", () => {
  it('STUP-4, ASVS 6.3.3: nobody without it, everybody with "always", holders of any listed role with { roles }', async () => {
    const cases: [SecondFactorRequirement | undefined, string[], boolean][] = [
      [undefined, ["admin"], false],
      ["always", [], true],
      ["always", ["user"], true],
      [{ roles: ["admin", "ops"] }, ["admin"], true],
      [{ roles: ["admin", "ops"] }, ["user", "ops"], true],
      [{ roles: ["admin", "ops"] }, ["user"], false],
      [{ roles: ["admin"] }, [], false],
      [{ roles: ["admin"] }, ["Admin"], false],
    ];
    for (const [required, roles, expected] of cases) {
      const harness = makeAuth(required === undefined ? {} : { secondFactor: { required } });
      const user = await storedUser(harness, "alice", roles);
      expect({ required, roles, answer: await secondFactorRequired(harness.auth, user) }).toEqual({
        required,
        roles,
        answer: expected,
      });
    }
  });

  it("STUP-4, ASVS 6.3.3: a function gets the user's id, username, roles and source, frozen, never the stored record; it may answer a promise", async () => {
    const seen: SecondFactorSubject[] = [];
    const harness = makeAuth({
      secondFactor: {
        required: async (user) => {
          seen.push(user);
          return user.username === "alice";
        },
      },
    });
    const alice = await storedUser(harness, "alice", ["user"]);
    const bob = await storedUser(harness, "bob");
    expect(await secondFactorRequired(harness.auth, alice)).toBe(true);
    expect(await secondFactorRequired(harness.auth, bob)).toBe(false);
    expect(seen[0]).toEqual({ id: alice.id, username: "alice", roles: ["user"], source: "local" });
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(Object.isFrozen(seen[0]?.roles)).toBe(true);
    expect(seen[0]?.roles).not.toBe(alice.roles);
  });

  it("STUP-4, ASVS 6.3.3: a function that answers anything but true or false, or throws, fails the sign-in (fails closed, loudly)", async () => {
    for (const answer of [undefined, 1, "yes", null]) {
      const harness = makeAuth({ secondFactor: { required: (() => answer) as never } });
      const user = await storedUser(harness, "alice");
      await expect(secondFactorRequired(harness.auth, user)).rejects.toThrow(
        `secondFactor.required must answer true or false; it answered ${answer === undefined ? "undefined" : JSON.stringify(answer)}`,
      );
    }
    const failure = new Error("policy service down");
    const harness = makeAuth({
      secondFactor: {
        required: () => {
          throw failure;
        },
      },
    });
    await expect(secondFactorRequired(harness.auth, await storedUser(harness, "alice"))).rejects.toBe(failure);
  });
});

describe("signInStepOf: the table's facts read for a user", () => {
  it("STUP-4, ASVS 6.3.3: TOTP asks for the code; without it a required user enrols, or signs in with the passkey it has", async () => {
    const harness = makePasskeyAuth({ secondFactor: { required: { roles: ["admin"] } } });
    const plain = await storedUser(harness, "plain");
    const admin = await storedUser(harness, "admin", ["admin"]);
    const withTotp = await storedUser(harness, "totp", ["admin"]);
    await enrolTotp(harness.auth, withTotp.id);
    const withPasskey = await storedUser(harness, "passkey", ["admin"]);
    await registerPasskey(harness.auth, withPasskey.id, makeAuthenticator());
    expect(await signInStepOf(harness.auth, plain, false)).toBe("tokens");
    expect(await signInStepOf(harness.auth, admin, false)).toBe("enrolment_required");
    expect(await signInStepOf(harness.auth, admin, true)).toBe("tokens");
    expect(await signInStepOf(harness.auth, withTotp, false)).toBe("totp_required");
    expect(await signInStepOf(harness.auth, withPasskey, false)).toBe("passkey_required");
    expect(await signInStepOf(harness.auth, withPasskey, true)).toBe("tokens");
  });

  it("STUP-4, ASVS 6.3.3: a passkey counts only where passkeys require user verification; a pending TOTP factor never counts", async () => {
    const harness = makePasskeyAuth({ secondFactor: { required: "always" } }, { userVerification: "preferred" });
    const user = await storedUser(harness, "alice");
    await registerPasskey(harness.auth, user.id, makeAuthenticator());
    expect(await signInStepOf(harness.auth, user, false)).toBe("enrolment_required");
    const pending = await storedUser(harness, "pending");
    await harness.storage.totp.putPending({
      userId: pending.id,
      secret: { keyId: "k", nonce: "n", ciphertext: "c" } as never,
      enabled: false,
      lastUsedStep: -1,
      createdAt: harness.clock.now,
    });
    expect(await signInStepOf(harness.auth, pending, false)).toBe("enrolment_required");
  });

  it("STUP-4, ASVS 6.3.3: passkeys kept in storage count for nothing while passkeys are not configured", async () => {
    const withPasskeys = makePasskeyAuth({ secondFactor: { required: "always" } });
    const user = await storedUser(withPasskeys, "alice");
    await registerPasskey(withPasskeys.auth, user.id, makeAuthenticator());
    const without = makeAuth({ storage: withPasskeys.storage, secondFactor: { required: "always" } });
    expect(await signInStepOf(withPasskeys.auth, user, false)).toBe("passkey_required");
    expect(await signInStepOf(without.auth, user, false)).toBe("enrolment_required");
  });

  it("STUP-4: the requirement is asked only when it decides: not after a multi-factor sign-in, nor for a user with TOTP", async () => {
    let asked = 0;
    const harness = makeAuth({
      secondFactor: {
        required: () => {
          asked += 1;
          return true;
        },
      },
    });
    const user = await storedUser(harness, "alice");
    await enrolTotp(harness.auth, user.id);
    expect(await signInStepOf(harness.auth, user, true)).toBe("tokens");
    expect(await signInStepOf(harness.auth, user, false)).toBe("totp_required");
    expect(asked).toBe(0);
  });
});
