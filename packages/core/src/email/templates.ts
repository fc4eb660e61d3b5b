import type {
  EmailContent,
  EmailKind,
  EmailTemplate,
  EmailTemplateValues,
  NoticeReason,
  ResolvedEmailConfig,
} from "./email-config.js";

const htmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => htmlEscapes[character] as string);
}

/** The HTML of a message: its paragraphs, escaped, and its link as a button and in words. */
function htmlOf(subject: string, paragraphs: string[], link?: { label: string; href: string }): string {
  const body = paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`);
  if (link) {
    const href = escapeHtml(link.href);
    body.splice(
      1,
      0,
      `<p><a href="${href}" style="display:inline-block;padding:10px 16px;background:#1f4fd1;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(link.label)}</a></p>`,
      `<p style="font-size:13px;color:#555">Or open this address: <span style="word-break:break-all">${href}</span></p>`,
    );
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#111">${body.join("")}</body></html>`;
}

const ignoreIfNotYou = "If you did not ask for this, ignore this message: nothing changes until the link is used.";

const passwordReset: EmailTemplate = ({ appName, username, link = "", expiresInMinutes }) => {
  const subject = `Reset your ${appName} password`;
  const intro = `Someone asked to reset the password of ${username} at ${appName}. To choose a new one, open this link within ${expiresInMinutes} minutes:`;
  return {
    subject,
    text: `${intro}\n\n${link}\n\n${ignoreIfNotYou}\n`,
    html: htmlOf(subject, [intro, ignoreIfNotYou], { label: "Choose a new password", href: link }),
  };
};

const emailVerification: EmailTemplate = ({ appName, username, link = "", expiresInMinutes }) => {
  const subject = `Confirm your email address for ${appName}`;
  const intro = `To confirm this address for the account ${username} at ${appName}, open this link within ${expiresInMinutes} minutes:`;
  return {
    subject,
    text: `${intro}\n\n${link}\n\n${ignoreIfNotYou}\n`,
    html: htmlOf(subject, [intro, ignoreIfNotYou], { label: "Confirm this address", href: link }),
  };
};

const noticeWords: Record<NoticeReason, string> = {
  password_changed: "the password was changed",
  password_reset: "the password was reset through a link sent to this address, and every session was signed out",
  second_factor_disabled: "two-step sign-in (the authenticator app code) was turned off",
  passkey_added: "a passkey was added",
  email_changed: "a change of the account's email address away from this one was asked for",
  address_in_use:
    "someone signed in to another account asked to use this email address; it stays with this account, and the other account did not get it",
};

const notice: EmailTemplate = ({ appName, username, notice: reason = "password_changed" }) => {
  const subject = `Security notice for your ${appName} account`;
  const what = `On the account ${username} at ${appName}, ${noticeWords[reason]}.`;
  const advice =
    "If this was you, there is nothing to do. If it was not, reset your password now and review the account's sessions.";
  return { subject, text: `${what}\n\n${advice}\n`, html: htmlOf(subject, [what, advice]) };
};

const organizationInvitation: EmailTemplate = ({ appName, username, organization = "", link = "", expiresInMinutes }) => {
  const subject = `You are invited to join ${organization} on ${appName}`;
  const days = Math.max(1, Math.round(expiresInMinutes / 1440));
  const intro = `${username} invited this address to join the organization ${organization} at ${appName}. To accept, sign in with an account that holds this address, verified, and open this link within ${days} day${days === 1 ? "" : "s"}:`;
  const ignore = "If you do not want to join, ignore this message: nothing happens unless the link is used.";
  return {
    subject,
    text: `${intro}\n\n${link}\n\n${ignore}\n`,
    html: htmlOf(subject, [intro, ignore], { label: "Accept the invitation", href: link }),
  };
};

const signIn: EmailTemplate = ({ appName, username, link, code, expiresInMinutes }) => {
  const subject = code === undefined ? `Sign in to ${appName}` : `${code} is your ${appName} sign-in code`;
  const ways = [
    ...(code === undefined ? [] : [`enter this code within ${expiresInMinutes} minutes: ${code}`]),
    ...(link === undefined ? [] : [`open this link within ${expiresInMinutes} minutes, in the browser where you asked for it:`]),
  ];
  const intro = `Someone asked to sign in to the account ${username} at ${appName}. To sign in, ${ways.join("; or ")}`;
  const ignore = "If you did not ask for this, ignore this message: nobody can sign in without it. Never share the code.";
  const text = link === undefined ? `${intro}\n\n${ignore}\n` : `${intro}\n\n${link}\n\n${ignore}\n`;
  return {
    subject,
    text,
    html: htmlOf(subject, [intro, ignore], link === undefined ? undefined : { label: "Sign in", href: link }),
  };
};

const signUp: EmailTemplate = ({ appName, code = "", expiresInMinutes }) => {
  const subject = `${code} is your ${appName} sign-up code`;
  const intro = `Someone asked to sign in to ${appName} with this address, which no account holds yet. To make an account for it, enter this code within ${expiresInMinutes} minutes: ${code}`;
  const ignore = "If you did not ask for this, ignore this message: no account is made without the code. Never share the code.";
  return { subject, text: `${intro}\n\n${ignore}\n`, html: htmlOf(subject, [intro, ignore]) };
};

/** The built-in English templates. */
export const defaultTemplates: Record<EmailKind, EmailTemplate> = {
  password_reset: passwordReset,
  email_verification: emailVerification,
  notice,
  organization_invitation: organizationInvitation,
  sign_in: signIn,
  sign_up: signUp,
};

/**
 * The locales an `Accept-Language` header asks for, most wanted first: each tag lower-cased,
 * then its language alone (`de-AT` → `de-at`, `de`). Tags with `q=0` are left out.
 */
export function requestedLocales(acceptLanguage: string | undefined): string[] {
  if (!acceptLanguage) return [];
  const weighted = acceptLanguage
    .slice(0, 512)
    .split(",")
    .map((part) => {
      // split always gives at least one item; the tag's spaces go with its trim, a parameter's with the \s* of the q pattern.
      const [tag, ...parameters] = part.split(";") as [string, ...string[]];
      const q = parameters.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim().toLowerCase(), weight: q === undefined ? 1 : Number(q) };
    })
    .filter(({ tag, weight }) => tag !== "" && tag !== "*" && weight > 0)
    // Array.prototype.sort is stable: equal weights keep the header's order.
    .sort((a, b) => b.weight - a.weight);
  return [...new Set(weighted.flatMap(({ tag }) => [tag, tag.split("-")[0] as string]))];
}

/** Writes a message of `kind`: the template of the first requested locale that has one, else `templates`, else the built-in one. */
export function writeMessage(
  config: ResolvedEmailConfig,
  values: Omit<EmailTemplateValues, "locale" | "appName" | "expiresInMinutes"> & { expiresInMinutes?: number },
  acceptLanguage: string | undefined,
): EmailContent & { locale: string } {
  const expiresInMinutes = values.expiresInMinutes ?? Math.round(config.tokenLifetimeMs / 60_000);
  const base = { ...values, appName: config.appName, expiresInMinutes };
  for (const locale of requestedLocales(acceptLanguage)) {
    const template = config.localizedTemplates.get(locale)?.[values.kind];
    if (template) return { ...checkedContent(template({ ...base, locale }), values.kind), locale };
  }
  const template = config.templates[values.kind] ?? defaultTemplates[values.kind];
  return { ...checkedContent(template({ ...base, locale: "en" }), values.kind), locale: "en" };
}

function checkedContent(content: EmailContent, kind: EmailKind): EmailContent {
  const fields = ["subject", "text", "html"] as const;
  if (typeof content !== "object" || content === null || !fields.every((field) => typeof content[field] === "string")) {
    throw new TypeError(`the email template for ${kind} must return { subject, text, html }, all strings`);
  }
  if (/[\r\n]/.test(content.subject)) throw new TypeError(`the email template for ${kind} returned a subject with a line break`);
  return { subject: content.subject, text: content.text, html: content.html };
}
