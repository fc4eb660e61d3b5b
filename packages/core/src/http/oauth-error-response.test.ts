import { describe, expect, it } from "vitest";
import { createAuth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { oauthErrorResponse, usesBasicAuthentication } from "./oauth-error-response.js";

const auth = createAuth({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: "a".repeat(43), encryption: "b".repeat(64) },
  http: { statusMode: "always-200" },
});

const named = (code: ErrorCode, error: string) => new AuthError(code, "Refused", { data: { error } });

describe("oauthErrorResponse (RFC 6749 §5.2)", () => {
  it("answers the error a flow named, else one by its code, with its status whatever statusMode says", () => {
    const cases: [unknown, boolean, number, string][] = [
      [named(ErrorCode.InvalidToken, "invalid_client"), true, 401, "invalid_client"],
      [named(ErrorCode.InvalidToken, "invalid_client"), false, 400, "invalid_client"],
      [named(ErrorCode.MalformedParameter, "unsupported_grant_type"), true, 400, "unsupported_grant_type"],
      [named(ErrorCode.ValidationFailed, "invalid_scope"), false, 400, "invalid_scope"],
      [new AuthError(ErrorCode.MissingParameter), false, 400, "invalid_request"],
      [new AuthError(ErrorCode.MalformedParameter), true, 400, "invalid_request"],
      [new AuthError(ErrorCode.InvalidToken), false, 400, "invalid_client"],
      [new AuthError(ErrorCode.Forbidden), false, 400, "invalid_request"],
      [new AuthError(ErrorCode.TooManyAttempts, undefined, { retryAfterSeconds: 7 }), false, 429, "temporarily_unavailable"],
      [new AuthError(ErrorCode.Unavailable), false, 503, "temporarily_unavailable"],
      [new AuthError(ErrorCode.Internal), false, 500, "server_error"],
      [new TypeError("secret pcs_live_abc at x.ts:1"), true, 500, "server_error"],
      [named(ErrorCode.MalformedParameter, "not_an_oauth_error"), false, 400, "invalid_request"],
    ];
    for (const [error, basic, status, name] of cases) {
      const reported: unknown[] = [];
      const response = oauthErrorResponse(auth, error, basic, (internal) => {
        reported.push(internal);
        return "id";
      });
      expect([response.status, JSON.parse(response.body).error], String(error)).toEqual([status, name]);
      expect(response.headers["cache-control"]).toBe("no-store");
      expect(response.headers.pragma).toBe("no-cache");
      expect(response.headers["www-authenticate"]).toBe(status === 401 ? 'Basic realm="https://api.example.com"' : undefined);
      expect(response.body).not.toMatch(/pcs_live_|\.ts:\d|stack/);
      expect(reported).toHaveLength(status >= 500 ? 1 : 0);
    }
    const throttled = oauthErrorResponse(
      auth,
      new AuthError(ErrorCode.TooManyAttempts, undefined, { retryAfterSeconds: 7 }),
      false,
      () => "",
    );
    expect(throttled.headers["retry-after"]).toBe("7");
  });

  it("keeps error_description to the characters RFC 6749 allows", () => {
    const response = oauthErrorResponse(auth, new AuthError(ErrorCode.MalformedParameter, 'é "quoted" \\ ok'), false, () => "");
    expect(JSON.parse(response.body).error_description).toBe("? ?quoted? ? ok");
  });

  it("tells Basic client authentication by its scheme, in any case", () => {
    expect(usesBasicAuthentication("Basic abc")).toBe(true);
    expect(usesBasicAuthentication("basic")).toBe(true);
    expect(usesBasicAuthentication("Bearer abc")).toBe(false);
    expect(usesBasicAuthentication("Basically")).toBe(false);
    expect(usesBasicAuthentication(undefined)).toBe(false);
  });
});
