import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors/codes.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  codeAt,
  enrolTotp,
  goodPassword,
  makeAuth,
  outcome,
  signIn,
} from "../../flows/fixtures.test-support.js";
import { login } from "../../flows/login.js";
import { refresh } from "../../flows/refresh.js";
import { verifyTotp } from "../../flows/verify-totp.js";
import type { TokenSet } from "../../tokens/issue-tokens.js";
import { handleRequest, servesPath } from "../handle-request.js";
import type { Envelope } from "../types.js";

/**
 * SE-6: `PUT <basePath>/users/me/password` with `{oldPassword, newPassword}`, the password change
 * as clients built for the original service send it (`http.passwordChangeAlias`), played beside
 * `POST <basePath>/auth/password` with `{currentPassword, newPassword}`: each scenario runs on
 * both, on instances alike, and must answer and do the same.
 */

const aliasOn: AuthOverrides = { http: { passwordChangeAlias: true } };
const newPassword = "a brand new passphrase";

/** One of the two ways to change the password: the route, and how its body names the current password. */
interface PasswordRoute {
  name: string;
  method: string;
  path: string;
  current: string;
}
const ownRoute: PasswordRoute = {
  name: "POST /auth/password",
  method: "POST",
  path: "/api/v1/auth/password",
  current: "currentPassword",
};
const alias: PasswordRoute = {
  name: "PUT /users/me/password",
  method: "PUT",
  path: "/api/v1/users/me/password",
  current: "oldPassword",
};

/** Sends a JSON request over TLS to core, with a bearer token; null when the path is not Portcullis's. */
async function send(harness: Harness, method: string, path: string, body: unknown, token?: string): Promise<Envelope | null> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await handleRequest(harness.auth, {
    method,
    url: path,
    header: (name) => headers[name],
    body: (async function* () {
      yield new TextEncoder().encode(JSON.stringify(body));
    })(),
    peerAddress: "192.0.2.1",
    secure: true,
  });
  return response === null ? null : (JSON.parse(response.body) as Envelope);
}

/** Changes the password of the token's user through `route`, with the current password `current` and `extra` fields. */
const change = (harness: Harness, route: PasswordRoute, token: string, current: unknown, extra: Record<string, unknown> = {}) =>
  send(harness, route.method, route.path, { [route.current]: current, newPassword, ...extra }, token);

/** The answer and message of an envelope, and its data when it has one. */
const shapeOf = (envelope: Envelope | null) => ({ code: envelope?.code, message: envelope?.message, data: envelope?.data });

describe("SE-6: the password-change alias (http.passwordChangeAlias)", () => {
  it("SE-6: without the option the path is not Portcullis's: servesPath is false and core hands the request back to the app", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "no-alias");
    const tokens = await signIn(harness, "no-alias");
    expect(harness.auth.config.passwordChangeAlias).toBe(false);
    expect(servesPath(harness.auth, "/api/v1/users/me/password")).toBe(false);
    expect(await change(harness, alias, tokens.accessToken, goodPassword)).toBeNull();
    expect(await outcome(login(harness.auth, { username: "no-alias", password: newPassword }))).toBe(40100);
    expect((await change(harness, ownRoute, tokens.accessToken, goodPassword))?.code).toBe(0);
  });

  it("SE-6: with it, only PUT at exactly that path under http.basePath is the alias; other methods there are 40400, and neighbouring paths stay the app's", async () => {
    const harness = makeAuth(aliasOn);
    expect(servesPath(harness.auth, "/api/v1/users/me/password")).toBe(true);
    expect(servesPath(harness.auth, "//api/v1/users/me/./password/")).toBe(true);
    for (const path of ["/api/v1/users/me", "/api/v1/users/me/password/x", "/users/me/password", "/api/v2/users/me/password"]) {
      expect(servesPath(harness.auth, path), path).toBe(false);
    }
    expect((await send(harness, "POST", "/api/v1/users/me/password", {}))?.code).toBe(ErrorCode.NotFound);
    const moved = makeAuth({ http: { passwordChangeAlias: true, basePath: "/svc" } });
    expect(servesPath(moved.auth, "/svc/users/me/password")).toBe(true);
    expect(servesPath(moved.auth, "/api/v1/users/me/password")).toBe(false);
  });

  it("SE-6, AT-6: the alias needs a live bearer token, like the route it stands for", async () => {
    const harness = makeAuth(aliasOn);
    await addUser(harness.auth, "bearer");
    expect((await change(harness, alias, undefined as unknown as string, goodPassword))?.code).toBe(ErrorCode.InvalidToken);
    expect((await change(harness, alias, "not-a-token", goodPassword))?.code).toBe(ErrorCode.InvalidToken);
  });

  for (const route of [ownRoute, alias]) {
    describe(route.name, () => {
      it("SE-6, SE-4, SE-2: changes the password, answers {changed, sessionsEnded}, emits password.changed, ends the other sessions and keeps this one", async () => {
        const harness = makeAuth(aliasOn);
        const userId = await addUser(harness.auth, "changer");
        const other = await signIn(harness, "changer");
        const mine = await signIn(harness, "changer");
        const answer = await change(harness, route, mine.accessToken, goodPassword);
        expect(shapeOf(answer)).toEqual({ code: 0, message: "OK", data: { changed: true, sessionsEnded: 1 } });
        expect(harness.events.filter((event) => event.type === "password.changed")).toEqual([
          { type: "password.changed", userId, sessionsEnded: 1, at: harness.clock.now },
        ]);
        expect(harness.events.filter((event) => event.type === "sessions.ended")).toEqual([
          {
            type: "sessions.ended",
            userId,
            keptSessionId: expect.any(String),
            count: 1,
            reason: "password_changed",
            at: harness.clock.now,
          },
        ]);
        expect(await outcome(refresh(harness.auth, { refreshToken: other.refreshToken }))).toBe(40101);
        expect(await outcome(refresh(harness.auth, { refreshToken: mine.refreshToken }))).toBe("fulfilled");
        expect(await outcome(login(harness.auth, { username: "changer", password: goodPassword }))).toBe(40100);
        expect(await outcome(login(harness.auth, { username: "changer", password: newPassword }))).toBe("fulfilled");
      });

      it("SE-6, PW-6, RL-1, RL-5: a wrong current password is 40100 from the session's budget, throttled alike (42900 at the sixth), and changes nothing", async () => {
        const harness = makeAuth(aliasOn);
        await addUser(harness.auth, "guesser");
        const { accessToken } = await signIn(harness, "guesser");
        const answers: unknown[] = [];
        for (let attempt = 0; attempt < 6; attempt += 1) {
          answers.push(shapeOf(await change(harness, route, accessToken, `wrong ${attempt}`)));
        }
        expect(answers.slice(0, 5)).toEqual(Array(5).fill({ code: 40100, message: "Invalid password", data: undefined }));
        expect(answers[5]).toMatchObject({ code: ErrorCode.TooManyAttempts });
        expect(
          await outcome(login(harness.auth, { username: "guesser", password: goodPassword })),
          "the account's own budget untouched",
        ).toBe("fulfilled");
        expect(harness.events.some((event) => event.type === "password.changed")).toBe(false);
      });

      it("SE-6, PW-3: a new password the policy refuses is 42200 with the policy's message", async () => {
        const harness = makeAuth(aliasOn);
        await addUser(harness.auth, "weak");
        const { accessToken } = await signIn(harness, "weak");
        const answer = await send(
          harness,
          route.method,
          route.path,
          { [route.current]: goodPassword, newPassword: "short" },
          accessToken,
        );
        expect(answer?.code).toBe(ErrorCode.ValidationFailed);
        const own = await send(
          harness,
          ownRoute.method,
          ownRoute.path,
          { currentPassword: goodPassword, newPassword: "short" },
          accessToken,
        );
        expect(answer?.message).toBe(own?.message);
      });

      it("SE-6, STUP-3: with TOTP on and a sign-in older than the window, a TOTP code is needed too (40001 without), as for the route it stands for", async () => {
        const harness = makeAuth(aliasOn);
        const userId = await addUser(harness.auth, "two-factors");
        const { secret } = await enrolTotp(harness.auth, userId);
        const first = await login(harness.auth, { username: "two-factors", password: goodPassword });
        if (first.status !== "totp_required") throw new Error("expected 40102");
        const tokens: TokenSet = await verifyTotp(harness.auth, {
          tempToken: first.tempToken,
          code: codeAt(secret, harness.clock.advance(30_000)),
        });
        harness.clock.advance(6 * 60_000);
        const refused = await change(harness, route, tokens.accessToken, goodPassword);
        expect(refused?.code).toBe(ErrorCode.MissingParameter);
        expect(refused?.message).toMatch(/TOTP code/);
        const answer = await change(harness, route, tokens.accessToken, goodPassword, {
          totpCode: codeAt(secret, harness.clock.now),
        });
        expect(answer?.code).toBe(0);
      });
    });
  }

  it("SE-6, PW-5: the alias names its own field: oldPassword missing is 40001, not a string 40002; newPassword as the route it stands for", async () => {
    const harness = makeAuth(aliasOn);
    await addUser(harness.auth, "fields");
    const { accessToken } = await signIn(harness, "fields");
    expect(shapeOf(await send(harness, "PUT", alias.path, { newPassword }, accessToken))).toMatchObject({
      code: ErrorCode.MissingParameter,
      message: "oldPassword is required",
    });
    expect(shapeOf(await send(harness, "PUT", alias.path, { oldPassword: { $ne: "" }, newPassword }, accessToken))).toMatchObject(
      {
        code: ErrorCode.MalformedParameter,
        message: "oldPassword must be a string",
      },
    );
    expect(shapeOf(await send(harness, "PUT", alias.path, { oldPassword: goodPassword }, accessToken))).toMatchObject({
      code: ErrorCode.MissingParameter,
      message: "newPassword is required",
    });
    expect(
      shapeOf(await send(harness, "PUT", alias.path, { currentPassword: goodPassword, newPassword }, accessToken)),
      "our own field name is not read here",
    ).toMatchObject({ code: ErrorCode.MissingParameter, message: "oldPassword is required" });
  });
});
