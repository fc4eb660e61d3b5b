import { describe, expect, it } from "vitest";
import {
  type EmailConfig,
  type EmailTemplate,
  type EmailTemplateValues,
  type NoticeReason,
  type ResolvedEmailConfig,
  resolveEmailConfig,
} from "./email-config.js";
import { defaultTemplates, escapeHtml, requestedLocales, writeMessage } from "./templates.js";

const configOf = (options: Partial<EmailConfig> = {}): ResolvedEmailConfig =>
  resolveEmailConfig(
    {
      send: () => {},
      resetUrl: "https://app.example.com/reset",
      verifyUrl: "https://app.example.com/verify",
      ...options,
    },
    "api.example.com",
  ) as ResolvedEmailConfig;

/** A link whose query needs escaping in HTML. */
const link = "https://app.example.com/reset?from=mail&lang=en#token=abc_DEF-123";

/** A template that says which one it is, and records what it was given. */
function marked(name: string, seen: EmailTemplateValues[] = []): EmailTemplate {
  return (values) => {
    seen.push(values);
    return { subject: `${name} subject`, text: `${name} text ${values.link ?? ""}`, html: `<p>${name}</p>` };
  };
}

describe("escapeHtml", () => {
  it("escapes the five characters that matter in element content and quoted attributes", () => {
    expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;",
    );
    expect(escapeHtml("&amp;")).toBe("&amp;amp;");
    expect(escapeHtml("plain text, ünïcode")).toBe("plain text, ünïcode");
  });
});

describe("default templates", () => {
  const base = { appName: "Example", username: "<b>alice</b>", expiresInMinutes: 30, locale: "en" };

  for (const kind of ["password_reset", "email_verification"] as const) {
    it(`${kind}: the link in the text as it is and in the HTML escaped, with the minutes; names escaped in HTML`, () => {
      const content = defaultTemplates[kind]({ ...base, kind, link });
      expect(content.text).toContain(link);
      expect(content.text).toContain("30 minutes");
      expect(content.html).toContain(`href="${escapeHtml(link)}"`);
      expect(content.html.split(escapeHtml(link)).length - 1).toBe(2);
      expect(content.html).not.toContain("from=mail&lang");
      expect(content.html).toContain("&lt;b&gt;alice&lt;/b&gt;");
      expect(content.html).not.toContain("<b>alice");
      expect(content.subject).toContain("Example");
      expect(content.subject).not.toMatch(/[\r\n]/);
    });
  }

  it("the HTML is one document: doctype, charset, the escaped subject as title, the paragraphs back to back", () => {
    const content = defaultTemplates.notice({ ...base, appName: "A&B", kind: "notice", notice: "passkey_added" });
    expect(content.subject).toBe("Security notice for your A&B account");
    expect(content.html).toBe(
      '<!doctype html><html><head><meta charset="utf-8"><title>Security notice for your A&amp;B account</title></head>' +
        '<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#111">' +
        "<p>On the account &lt;b&gt;alice&lt;/b&gt; at A&amp;B, a passkey was added.</p>" +
        "<p>If this was you, there is nothing to do. If it was not, reset your password now and review the account&#39;s sessions.</p>" +
        "</body></html>",
    );
  });

  it("the link is a button labelled for what it does, between the intro and the advice, then the address in words", () => {
    const labels = { password_reset: "Choose a new password", email_verification: "Confirm this address" } as const;
    for (const kind of ["password_reset", "email_verification"] as const) {
      const { html } = defaultTemplates[kind]({ ...base, kind, link });
      const href = escapeHtml(link);
      expect(html).toMatch(/^<!doctype html><html><head><meta charset="utf-8"><title>[^<]+<\/title><\/head><body [^>]+><p>/);
      expect(html).toContain(
        `</p><p><a href="${href}" style="display:inline-block;padding:10px 16px;background:#1f4fd1;color:#fff;text-decoration:none;border-radius:4px">${labels[kind]}</a></p>` +
          `<p style="font-size:13px;color:#555">Or open this address: <span style="word-break:break-all">${href}</span></p>` +
          "<p>If you did not ask for this, ignore this message: nothing changes until the link is used.</p></body></html>",
      );
    }
  });

  it("called without a link, a link template leaves the link out rather than writing something else", () => {
    for (const kind of ["password_reset", "email_verification"] as const) {
      const content = defaultTemplates[kind]({ ...base, kind });
      const [intro, where, advice, ...rest] = content.text.split("\n\n");
      expect(intro).toMatch(/30 minutes:$/);
      expect(where).toBe("");
      expect(advice).toBe("If you did not ask for this, ignore this message: nothing changes until the link is used.\n");
      expect(rest).toEqual([]);
      expect(content.html).toContain('<a href="" ');
      expect(content.html).toContain('<span style="word-break:break-all"></span>');
    }
  });

  it("the reset and verification messages say different things", () => {
    const reset = defaultTemplates.password_reset({ ...base, kind: "password_reset", link });
    const verification = defaultTemplates.email_verification({ ...base, kind: "email_verification", link });
    expect(reset.subject).toMatch(/Reset your Example password/);
    expect(verification.subject).toMatch(/Confirm your email address for Example/);
  });

  it("a notice holds no link and says what happened, for each reason", () => {
    const reasons: NoticeReason[] = [
      "password_changed",
      "password_reset",
      "second_factor_disabled",
      "passkey_added",
      "email_changed",
      "address_in_use",
    ];
    const texts = reasons.map((notice) => defaultTemplates.notice({ ...base, kind: "notice", notice }));
    expect(new Set(texts.map((content) => content.text)).size).toBe(reasons.length);
    for (const content of texts) {
      expect(content.subject).toBe("Security notice for your Example account");
      expect(content.text).not.toContain("http");
      expect(content.html).not.toContain("<a ");
      expect(content.html).toContain("&lt;b&gt;alice&lt;/b&gt;");
    }
    expect(texts[3]?.text).toBe(
      "On the account <b>alice</b> at Example, a passkey was added.\n\n" +
        "If this was you, there is nothing to do. If it was not, reset your password now and review the account's sessions.\n",
    );
  });

  it("a notice without a reason reads as password_changed", () => {
    const unnamed = defaultTemplates.notice({ ...base, kind: "notice" });
    expect(unnamed).toEqual(defaultTemplates.notice({ ...base, kind: "notice", notice: "password_changed" }));
    expect(unnamed.text).toMatch(/^On the account <b>alice<\/b> at Example, the password was changed\.\n/);
  });
});

describe("requestedLocales", () => {
  it("nothing without a header", () => {
    expect(requestedLocales(undefined)).toEqual([]);
    expect(requestedLocales("")).toEqual([]);
    expect(requestedLocales("*")).toEqual([]);
  });

  it("each tag lower-cased, then its language alone, in the order asked", () => {
    expect(requestedLocales("de-AT, fr")).toEqual(["de-at", "de", "fr"]);
    expect(requestedLocales("pt-BR,pt;q=0.9")).toEqual(["pt-br", "pt"]);
  });

  it("by weight, highest first; equal weights keep their order", () => {
    expect(requestedLocales("fr;q=0.5, de;q=0.8, it")).toEqual(["it", "de", "fr"]);
    expect(requestedLocales("es;q=0.7, nl;q=0.7")).toEqual(["es", "nl"]);
  });

  it("equal weights keep the header's order, however many", () => {
    expect(requestedLocales("es;q=0.7, nl;q=0.7, it;q=0.7, fr;q=0.9, da;q=0.7")).toEqual(["fr", "es", "nl", "it", "da"]);
    expect(requestedLocales("sv, fi, nb, da;q=0.1, is")).toEqual(["sv", "fi", "nb", "is", "da"]);
  });

  it("spaces around a tag or a parameter do not matter", () => {
    expect(requestedLocales(" de ;q=0.5, fr ")).toEqual(["fr", "de"]);
    expect(requestedLocales("de; q=0.5 , fr;q=0.9")).toEqual(["fr", "de"]);
    expect(requestedLocales("de;q=0.5\t, fr;\tq=0.9")).toEqual(["fr", "de"]);
  });

  it("the weight is the q parameter among others; a parameter that is not exactly q=<number> is no weight", () => {
    expect(requestedLocales("de;level=1;q=0.2, fr;q=0.5")).toEqual(["fr", "de"]);
    expect(requestedLocales("de;level=1, fr;q=0.5")).toEqual(["de", "fr"]);
    expect(requestedLocales("fr;q=0.9, de;xq=0.5")).toEqual(["de", "fr"]);
    expect(requestedLocales("fr;q=0.9, de;q=0.5x")).toEqual(["de", "fr"]);
  });

  it("empty items and the wildcard are skipped", () => {
    expect(requestedLocales("de,,fr")).toEqual(["de", "fr"]);
    expect(requestedLocales(", de, ;q=0.5,")).toEqual(["de"]);
    expect(requestedLocales("*, de;q=0.5")).toEqual(["de"]);
  });

  it("only the first 512 characters of the header are read", () => {
    const header = `${"en;q=0.5,".repeat(60)}de`;
    expect(header.indexOf("de")).toBeGreaterThan(512);
    expect(requestedLocales(header)).toEqual(["en"]);
    const atTheEdge = `${"en;q=0.5,".repeat(56)}de;q=.4,fr`;
    expect(atTheEdge.indexOf("fr")).toBe(512);
    expect(requestedLocales(atTheEdge)).toEqual(["en", "de"]);
  });

  it("q=0 means not this one", () => {
    expect(requestedLocales("de;q=0, fr")).toEqual(["fr"]);
    expect(requestedLocales("de;q=0.0")).toEqual([]);
  });
});

describe("writeMessage", () => {
  it("the built-in English templates by default, with appName and the lifetime's minutes", () => {
    const seen: EmailTemplateValues[] = [];
    const config = configOf({ appName: "Example", tokenLifetime: "45m", templates: { notice: marked("mine", seen) } });
    const reset = writeMessage(config, { kind: "password_reset", username: "alice", link }, undefined);
    expect(reset.locale).toBe("en");
    expect(reset.subject).toBe("Reset your Example password");
    expect(reset.text).toContain("45 minutes");
    writeMessage(config, { kind: "notice", notice: "passkey_added", username: "alice" }, "de");
    expect(seen).toEqual([
      {
        kind: "notice",
        notice: "passkey_added",
        username: "alice",
        link: undefined,
        appName: "Example",
        expiresInMinutes: 45,
        locale: "en",
      },
    ]);
  });

  it("a template of email.templates replaces the built-in one of its kind only", () => {
    const config = configOf({ templates: { password_reset: marked("own reset") } });
    expect(writeMessage(config, { kind: "password_reset", username: "a", link }, undefined).subject).toBe("own reset subject");
    expect(writeMessage(config, { kind: "email_verification", username: "a", link }, undefined).subject).toMatch(/Confirm/);
  });

  it("a localized template by the exact tag first, then by the language, then email.templates, then built-in", () => {
    const config = configOf({
      templates: { password_reset: marked("default") },
      localizedTemplates: {
        "de-AT": { password_reset: marked("austrian") },
        de: { password_reset: marked("german"), notice: marked("german notice") },
        fr: { password_reset: marked("french") },
      },
    });
    const reset = (acceptLanguage: string | undefined) =>
      writeMessage(config, { kind: "password_reset", username: "a", link }, acceptLanguage);
    expect(reset("de-AT")).toMatchObject({ subject: "austrian subject", locale: "de-at" });
    expect(reset("de-CH")).toMatchObject({ subject: "german subject", locale: "de" });
    expect(reset("it, fr;q=0.3")).toMatchObject({ subject: "french subject", locale: "fr" });
    expect(reset("fr;q=0.5, de;q=0.8")).toMatchObject({ subject: "german subject", locale: "de" });
    expect(reset("fr;q=0, it")).toMatchObject({ subject: "default subject", locale: "en" });
    expect(reset(undefined)).toMatchObject({ subject: "default subject", locale: "en" });
    const verification = writeMessage(config, { kind: "email_verification", username: "a", link }, "fr");
    expect(verification).toMatchObject({ locale: "en" });
    expect(verification.subject).toMatch(/Confirm your email address/);
    const notice = writeMessage(config, { kind: "notice", notice: "password_changed", username: "a" }, "de-AT");
    expect(notice).toMatchObject({ subject: "german notice subject", locale: "de" });
  });

  it("a localized template is given its locale", () => {
    const seen: EmailTemplateValues[] = [];
    const config = configOf({ localizedTemplates: { "pt-BR": { email_verification: marked("pt", seen) } } });
    writeMessage(config, { kind: "email_verification", username: "a", link }, "pt-br;q=0.9");
    expect(seen[0]?.locale).toBe("pt-br");
  });

  it("a template that returns something other than { subject, text, html } strings throws", () => {
    const shapes: unknown[] = [
      null,
      undefined,
      "text",
      7,
      Object.assign(() => {}, { subject: "s", text: "t", html: "h" }),
      { subject: "s", text: "t" },
      { subject: "s", text: "t", html: 1 },
    ];
    for (const shape of shapes) {
      const config = configOf({ templates: { notice: () => shape as never } });
      expect(() => writeMessage(config, { kind: "notice", notice: "password_changed", username: "a" }, undefined)).toThrow(
        new TypeError("the email template for notice must return { subject, text, html }, all strings"),
      );
      const localized = configOf({ localizedTemplates: { de: { password_reset: () => shape as never } } });
      expect(() => writeMessage(localized, { kind: "password_reset", username: "a", link }, "de")).toThrow(
        new TypeError("the email template for password_reset must return { subject, text, html }, all strings"),
      );
    }
  });

  it("a subject with a line break throws: no header can be smuggled in", () => {
    for (const subject of ["Hi\r\nBcc: victim@example.com", "Hi\nthere", "Hi\r"]) {
      const config = configOf({ localizedTemplates: { de: { password_reset: () => ({ subject, text: "t", html: "h" }) } } });
      expect(() => writeMessage(config, { kind: "password_reset", username: "a", link }, "de")).toThrow(
        new TypeError("the email template for password_reset returned a subject with a line break"),
      );
    }
  });

  it("only subject, text and html of a template's answer are kept", () => {
    const config = configOf({
      templates: { notice: () => ({ subject: "s", text: "t", html: "h", to: "attacker@example.com" }) as never },
    });
    const message = writeMessage(config, { kind: "notice", notice: "password_changed", username: "a" }, undefined);
    expect(message).toEqual({ subject: "s", text: "t", html: "h", locale: "en" });
  });
});

describe("the organization invitation", () => {
  it("names the organization and the inviting member, in days, with the link, escaping both names in HTML", () => {
    const config = configOf({ appName: "Example" });
    const values = { kind: "organization_invitation" as const, username: "<b>alice</b>", organization: 'Acme & "Sons"' };
    const message = writeMessage(config, { ...values, link, expiresInMinutes: 7 * 1440 }, undefined);
    expect(message.subject).toBe('You are invited to join Acme & "Sons" on Example');
    expect(message.text).toContain('<b>alice</b> invited this address to join the organization Acme & "Sons" at Example');
    expect(message.text).toContain("within 7 days");
    expect(message.text).toContain(link);
    expect(message.html).toContain("&lt;b&gt;alice&lt;/b&gt;");
    expect(message.html).toContain("Acme &amp; &quot;Sons&quot;");
    expect(message.html).not.toContain("<b>alice</b>");
    expect(message.html).toContain(escapeHtml(link));
  });
});
