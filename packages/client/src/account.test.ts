import { describe, expect, it } from "vitest";
import { type ScriptedAnswer, signedInScriptedClient } from "./scripted-server.test-support.js";

/** A client signed in to a scripted server that answers the password change with `answer`. */
const signedInAccountClient = (answer: ScriptedAnswer) => signedInScriptedClient(() => answer);

describe("client.account.changePassword", () => {
  it("SE-4: sends the current and the new password with the bearer token, answers how many other sessions ended, and stays signed in (SE-2)", async () => {
    const { client, server, signedOut } = await signedInAccountClient({ code: 0, data: { changed: true, sessionsEnded: 2 } });
    expect(await client.account.changePassword({ currentPassword: "old pw", newPassword: "new pw" })).toEqual({
      sessionsEnded: 2,
    });
    expect(server.sentTo("/auth/password").map(({ method, body, authorization }) => [method, body, authorization])).toEqual([
      ["POST", { currentPassword: "old pw", newPassword: "new pw" }, "Bearer access-1"],
    ]);
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
  });

  it("SE-4: a wrong current password (40100) or a refused new one (42200) rejects with the code, and the session goes on", async () => {
    for (const code of [40100, 42200, 40900]) {
      const { client, server, signedOut } = await signedInAccountClient({ code, message: "No", status: Math.floor(code / 100) });
      await expect(client.account.changePassword({ currentPassword: "a", newPassword: "b" })).rejects.toMatchObject({
        kind: "server",
        code,
      });
      expect(server.sentTo("/auth/refresh")).toEqual([]);
      expect(signedOut).toEqual([]);
      expect(await client.accessToken()).toBe("access-1");
    }
  });
});

describe("client.account.updateProfile", () => {
  it("sends the fields with PATCH /auth/me and the bearer token, answers the user and keeps it as the current user", async () => {
    const user = {
      id: "u1",
      username: "ada",
      roles: [],
      totpEnabled: false,
      email: null,
      emailVerified: false,
      createdAt: 1,
      company: "Initech",
    };
    const { client, server, signedOut } = await signedInAccountClient({ code: 0, data: user });
    expect(await client.account.updateProfile({ company: "Initech" })).toEqual(user);
    expect(server.sentTo("/auth/me").map(({ method, body, authorization }) => [method, body, authorization])).toEqual([
      ["PATCH", { fields: { company: "Initech" } }, "Bearer access-1"],
    ]);
    expect(await client.currentUser()).toEqual(user);
    expect(signedOut).toEqual([]);
  });

  it("a refused field (42200) or a malformed one (40002) rejects with the code, and the session goes on", async () => {
    for (const code of [42200, 40002]) {
      const { client, signedOut } = await signedInAccountClient({
        code,
        message: "fields.plan cannot be changed by the user",
        status: 400,
      });
      await expect(client.account.updateProfile({ plan: "pro" })).rejects.toMatchObject({ kind: "server", code });
      expect(signedOut).toEqual([]);
    }
  });
});
