import { describe, expect, it } from "vitest";
import { makeAuth } from "../flows/fixtures.test-support.js";
import { type EmailConfig, resolveEmailConfig } from "./email-config.js";
import { defaultTemplates } from "./templates.js";

const send = async () => {};
const valid: EmailConfig = { send, resetUrl: "https://app.example.com/reset", verifyUrl: "https://app.example.com/verify" };

/** The message `resolveEmailConfig` refuses `config` with. */
function refusal(config: unknown): string {
  try {
    resolveEmailConfig(config as EmailConfig, "api.example.com");
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error("expected a TypeError, but the configuration was accepted");
}

const resolved = (config: Partial<EmailConfig>) => resolveEmailConfig({ ...valid, ...config }, "api.example.com");

describe("resolveEmailConfig", () => {
  it("is null when absent: the email routes are off", () => {
    expect(resolveEmailConfig(undefined, "api.example.com")).toBeNull();
    expect(makeAuth().auth.config.email).toBeNull();
  });

  it("fills in the defaults: appName the issuer's host, 30 minutes, 10 seconds, 10 messages an hour and 30 a day per address, no templates", () => {
    const config = resolveEmailConfig(valid, "api.example.com");
    expect(config).toEqual({
      send,
      resetUrl: valid.resetUrl,
      verifyUrl: valid.verifyUrl,
      invitationUrl: null,
      signInUrl: null,
      from: undefined,
      appName: "api.example.com",
      tokenLifetimeMs: 30 * 60_000,
      sendTimeoutMs: 10_000,
      recipientLimit: [
        { limit: 10, windowMs: 3_600_000 },
        { limit: 30, windowMs: 86_400_000 },
      ],
      templates: {},
      localizedTemplates: new Map(),
    });
    expect(makeAuth({ email: valid }).auth.config.email?.appName).toBe("api.example.com");
  });

  it("keeps the given from, appName, durations and templates", () => {
    const template = defaultTemplates.notice;
    const config = resolved({
      from: "Example <no-reply@example.com>",
      appName: "Example",
      tokenLifetime: "2h",
      sendTimeout: 30,
      templates: { notice: template },
      localizedTemplates: { "pt-BR": { password_reset: template } },
    });
    expect(config).toMatchObject({
      from: "Example <no-reply@example.com>",
      appName: "Example",
      tokenLifetimeMs: 2 * 3_600_000,
      sendTimeoutMs: 30_000,
      templates: { notice: template },
    });
    expect([...(config?.localizedTemplates ?? [])]).toEqual([["pt-br", { password_reset: template }]]);
  });

  it("refuses an email option that is not an object", () => {
    for (const config of ["https://app.example.com", null, [valid], 3]) {
      expect(refusal(config)).toMatch(/email must be an object such as \{ send, resetUrl, verifyUrl \}/);
    }
  });

  it("refuses a missing or non-function send", () => {
    for (const bad of [undefined, "smtp://mail.example.com", {}]) {
      expect(refusal({ ...valid, send: bad })).toMatch(/email\.send is required: a function/);
    }
  });

  it("PR-5: refuses a missing resetUrl or verifyUrl, naming it and the page it should be", () => {
    const examples = { resetUrl: "reset-password", verifyUrl: "verify-email" } as const;
    for (const what of ["resetUrl", "verifyUrl"] as const) {
      for (const bad of [undefined, "", 42]) {
        expect(refusal({ ...valid, [what]: bad })).toBe(
          `Portcullis configuration: email.${what} is required: the page of your front end that reads the token, e.g. "https://app.example.com/${examples[what]}"`,
        );
      }
    }
  });

  it("PR-5: refuses a link base without a scheme, or that is no URL", () => {
    expect(refusal({ ...valid, resetUrl: "app.example.com/reset" })).toMatch(
      /email\.resetUrl must start with its scheme, such as "https:\/\/app\.example\.com\/reset"/,
    );
    expect(refusal({ ...valid, verifyUrl: "https://exa mple.com/verify" })).toMatch(/email\.verifyUrl must be an absolute URL/);
  });

  it("PR-5: refuses plain http off loopback, and other schemes; accepts http on loopback", () => {
    for (const bad of ["http://app.example.com/reset", "ftp://app.example.com/reset", "http://10.0.0.1/reset"]) {
      expect(refusal({ ...valid, resetUrl: bad })).toMatch(/email\.resetUrl must be an https: URL \(http: only on loopback\)/);
    }
    expect(refusal({ ...valid, verifyUrl: "http://localhost.example.com/v" })).toMatch(/email\.verifyUrl must be an https: URL/);
    for (const loopback of ["http://localhost:5173/reset", "http://127.0.0.1/reset", "http://[::1]:8080/reset"]) {
      expect(resolved({ resetUrl: loopback, verifyUrl: loopback })?.resetUrl).toBe(loopback);
    }
    expect(resolved({ resetUrl: "https://app.example.com:8443/reset" })?.resetUrl).toBe("https://app.example.com:8443/reset");
  });

  it("PR-5: loopback is localhost, [::1] and 127.0.0.0/8 as an address, never a name that starts or ends like one", () => {
    for (const loopback of [
      "http://127.0.0.1:3000/reset",
      "http://127.0.0.10/reset",
      "http://127.1.22.233/reset",
      "http://127.1/r",
    ]) {
      expect(resolved({ resetUrl: loopback })?.resetUrl).toBe(loopback);
    }
    for (const bad of [
      "http://127.0.0.1.evil.example/reset",
      "http://127.0.0.10.example.com/reset",
      "http://127.evil./reset",
      "http://evil.example.127.0.0.1.nip.io/reset",
      "http://128.0.0.1/reset",
    ]) {
      expect(refusal({ ...valid, resetUrl: bad })).toBe(
        `Portcullis configuration: email.resetUrl must be an https: URL (http: only on loopback): a link over plain HTTP shows its token to the network; got ${JSON.stringify(bad)}`,
      );
    }
    for (const bad of ["http://x127.0.0.1/reset", "http://127.1.22.333/reset"]) {
      expect(refusal({ ...valid, resetUrl: bad })).toMatch(/email\.resetUrl must be an absolute URL/);
    }
  });

  it("PR-5: a scheme other than https: or http: is refused on loopback too", () => {
    for (const bad of ["ftp://localhost/reset", "ws://127.0.0.1/reset", "file://localhost/reset"]) {
      expect(refusal({ ...valid, resetUrl: bad })).toMatch(/email\.resetUrl must be an https: URL \(http: only on loopback\)/);
    }
  });

  it("PR-5: refuses a link base holding a fragment (the token goes there) or a user name and password", () => {
    for (const bad of ["https://app.example.com/reset#page", "https://app.example.com/reset#"]) {
      expect(refusal({ ...valid, resetUrl: bad })).toMatch(/email\.resetUrl must not hold a fragment/);
    }
    expect(refusal({ ...valid, verifyUrl: "https://user:secret@app.example.com/verify" })).toMatch(
      /email\.verifyUrl must not hold a user name or password/,
    );
    expect(refusal({ ...valid, verifyUrl: "https://user@app.example.com/verify" })).toMatch(/must not hold a user name/);
    expect(refusal({ ...valid, resetUrl: "https://:secret@app.example.com/reset" })).toBe(
      "Portcullis configuration: email.resetUrl must not hold a user name or password",
    );
  });

  it("tokenLifetime: from 5 minutes to 24 hours", () => {
    expect(resolved({ tokenLifetime: "5m" })?.tokenLifetimeMs).toBe(300_000);
    expect(resolved({ tokenLifetime: "24h" })?.tokenLifetimeMs).toBe(86_400_000);
    for (const bad of ["4m", 299, "25h", "2d"] as const) {
      expect(refusal({ ...valid, tokenLifetime: bad })).toMatch(/email\.tokenLifetime must be from 300 to 86400 seconds/);
    }
    for (const bad of [0, -5, "ten minutes", 1.5]) {
      expect(refusal({ ...valid, tokenLifetime: bad })).toMatch(/email\.tokenLifetime must be a positive whole number/);
    }
  });

  it("sendTimeout: from 1 second to 2 minutes", () => {
    expect(resolved({ sendTimeout: "1s" })?.sendTimeoutMs).toBe(1_000);
    expect(resolved({ sendTimeout: "2m" })?.sendTimeoutMs).toBe(120_000);
    for (const bad of ["121s", "3m", "1h"] as const) {
      expect(refusal({ ...valid, sendTimeout: bad })).toMatch(/email\.sendTimeout must be from 1 to 120 seconds/);
    }
    for (const bad of [0, "0s", "soon"]) {
      expect(refusal({ ...valid, sendTimeout: bad })).toMatch(/email\.sendTimeout must be a positive whole number/);
    }
  });

  it("EM-1: recipientLimit takes tiers as throttle does, and refuses a bad one naming it", () => {
    expect(resolved({ recipientLimit: [{ limit: 2, window: "10m" }] })?.recipientLimit).toEqual([
      { limit: 2, windowMs: 600_000 },
    ]);
    expect(refusal({ ...valid, recipientLimit: [] })).toMatch(
      /email\.recipientLimit must be a non-empty list of \{ limit, window \}/,
    );
    expect(refusal({ ...valid, recipientLimit: [{ window: "1h" }] })).toMatch(/email\.recipientLimit\[0\]\.limit is required/);
    expect(refusal({ ...valid, recipientLimit: [{ limit: 0, window: "1h" }] })).toMatch(/email\.recipientLimit\[0\]\.limit/);
    expect(refusal({ ...valid, recipientLimit: [{ limit: 5, window: "1h", per: "ip" }] })).toMatch(
      /email\.recipientLimit\[0\]\.per is not an option/,
    );
  });

  it("refuses an unknown option, naming the one meant", () => {
    expect(refusal({ ...valid, resetURL: "https://app.example.com/x" })).toMatch(
      /email\.resetURL is not an option; did you mean email\.resetUrl\?/,
    );
    expect(refusal({ ...valid, sendTimout: "5s" })).toMatch(/did you mean email\.sendTimeout\?/);
    expect(refusal({ ...valid, smtpHost: "mail.example.com" })).toMatch(
      /email\.smtpHost is not an option; the options of email are send, resetUrl, verifyUrl/,
    );
  });

  it("refuses an empty from or appName", () => {
    for (const bad of ["", 7]) expect(refusal({ ...valid, from: bad })).toMatch(/email\.from must be a non-empty string/);
    for (const bad of ["", "   ", false]) {
      expect(refusal({ ...valid, appName: bad })).toMatch(/email\.appName must be a non-empty string/);
    }
  });

  it("refuses templates that are not an object of functions by kind, naming the kind meant", () => {
    for (const bad of ["template", [defaultTemplates.notice], null]) {
      expect(refusal({ ...valid, templates: bad })).toMatch(
        /email\.templates must be an object of templates by kind \(password_reset, email_verification, notice, organization_invitation, sign_in, sign_up\)/,
      );
    }
    expect(refusal({ ...valid, templates: { notices: defaultTemplates.notice } })).toMatch(
      /email\.templates\.notices is not an option; did you mean email\.templates\.notice\?/,
    );
    expect(refusal({ ...valid, templates: { notice: "Hello" } })).toMatch(
      /email\.templates\.notice must be a function \(values\) => \(\{ subject, text, html \}\)/,
    );
  });

  it("refuses localized templates that are not by language tag, or whose templates are bad", () => {
    for (const bad of [[], "de", 7, null]) {
      expect(refusal({ ...valid, localizedTemplates: bad })).toMatch(
        /email\.localizedTemplates must be an object of templates by locale/,
      );
    }
    for (const tag of ["de_DE", "english!", "d", "", "pt-"]) {
      expect(refusal({ ...valid, localizedTemplates: { [tag]: {} } })).toMatch(
        `email.localizedTemplates: ${JSON.stringify(tag)} is not a language tag`,
      );
    }
    expect(refusal({ ...valid, localizedTemplates: { de: { password_reset: 1 } } })).toMatch(
      /email\.localizedTemplates\.de\.password_reset must be a function/,
    );
    expect(refusal({ ...valid, localizedTemplates: { de: "Hallo" } })).toMatch(
      /email\.localizedTemplates\.de must be an object of templates by kind/,
    );
  });

  it("createAuth checks the email options too", () => {
    expect(() => makeAuth({ email: { ...valid, resetUrl: "http://app.example.com/reset" } })).toThrow(
      /email\.resetUrl must be an https: URL/,
    );
  });
});
