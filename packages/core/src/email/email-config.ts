import { type Duration, type OptionNames, durationSeconds, fail, lacksScheme, refuseUnknownOptions } from "../config-values.js";
import { type ResolvedTier, type ThrottleTier, resolveTiers } from "../throttle/throttle-config.js";

/**
 * What a message is: a reset link, a verification link, a notice of a security change, an
 * invitation to an organization, a sign-in code or link (`sign_in`), or a code that makes an
 * account for an address no account holds (`sign_up`).
 */
export type EmailKind = "password_reset" | "email_verification" | "notice" | "organization_invitation" | "sign_in" | "sign_up";

/** What a notice tells the user happened to the account. */
export type NoticeReason =
  | "password_changed"
  | "password_reset"
  | "second_factor_disabled"
  | "passkey_added"
  | "email_changed"
  /** Sent to an address another account asked for while this account holds it verified: it stays here. */
  | "address_in_use";

/**
 * The message Portcullis hands to `email.send`: built by the library, delivered by the service
 * (nodemailer, a provider's API, a queue). `text` and `html` say the same; `link` is the link the
 * message holds, for services that render their own.
 */
export interface EmailMessage {
  kind: EmailKind;
  /** For a notice: what happened. */
  notice?: NoticeReason;
  to: string;
  /** `email.from`, when configured. */
  from?: string;
  subject: string;
  text: string;
  html: string;
  /** The reset or verification link, holding the token in its fragment; absent from notices. */
  link?: string;
  /** The one-time code of a `sign_in` or `sign_up` message, when it carries one. */
  code?: string;
  /** The locale the message was written in (`en` unless a localized template was chosen). */
  locale: string;
}

/** What a template is given: plain values, escaped by the template that puts them in HTML. */
export interface EmailTemplateValues {
  kind: EmailKind;
  notice?: NoticeReason;
  /** `email.appName`: who the message is from, in words. */
  appName: string;
  /** The account the message is about; for an invitation, the member who sent it. */
  username: string;
  /** The link of a reset, verification, invitation or sign-in message. */
  link?: string;
  /** The one-time code of a `sign_in` or `sign_up` message, when it carries one. */
  code?: string;
  /** Minutes the link (or code) works for. */
  expiresInMinutes: number;
  /** For an invitation: the name of the organization it invites to. */
  organization?: string;
  locale: string;
}

/** A message's words: what a template returns. */
export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/** Writes one kind of message. Interpolate with `escapeHtml` into `html`. */
export type EmailTemplate = (values: EmailTemplateValues) => EmailContent;

/** The templates of some kinds of message, by `EmailKind`; a notice's template serves every reason. */
export type EmailTemplates = Partial<Record<EmailKind, EmailTemplate>>;

/**
 * The `email` options of `createAuth`: without them the reset and address routes answer 40400.
 * The library never opens a connection: `send` delivers.
 */
export interface EmailConfig {
  /**
   * Delivers one message; a rejection or a call longer than `sendTimeout` is reported (the
   * `email.failed` event and `onInternalError`) and loses nothing: the token it carried stays
   * valid until it expires, and asking again makes a new one.
   */
  send: (message: EmailMessage) => Promise<void> | void;
  /**
   * The page of your front end that asks for the new password, absolute `https:` (or `http:` on
   * loopback) and without a fragment: links are `resetUrl#token=…`, never built from a request's
   * Host or Forwarded header (PR-5). The fragment keeps the token out of server logs and `Referer`.
   */
  resetUrl: string;
  /** The page that confirms an address, as `resetUrl`: links are `verifyUrl#token=…`. */
  verifyUrl: string;
  /**
   * The page that accepts an invitation to an organization, as `resetUrl`: links are
   * `invitationUrl#token=…`. Required for invitations (`organizations.enabled`); without it their
   * routes answer 40400.
   */
  invitationUrl?: string;
  /**
   * The page that finishes an email sign-in, as `resetUrl`: links are `signInUrl#token=…`.
   * Required when `emailSignIn.method` is `"link"` or `"both"`.
   */
  signInUrl?: string;
  /** The sender, passed on as `message.from`. */
  from?: string;
  /** The name messages give the service. Default: the host of `issuer`. */
  appName?: string;
  /** How long a reset or verification link works. Default `"30m"`, from 5 minutes to 24 hours. */
  tokenLifetime?: Duration;
  /** How long `send` may take before it counts as failed. Default `"10s"`, from 1 second to 2 minutes. */
  sendTimeout?: Duration;
  /**
   * How many messages one address may receive, of every kind together, counted per address as
   * `emailKeyOf` compares them (EM-1). Links and `address_in_use` notices, which anyone can cause,
   * stop at each tier's limit; notices of a change to the account that holds the address may go
   * on to twice it, so a flood of others' messages never silences them. A message past the budget
   * is not sent, no token is made for it, the answer does not change, and `email.failed` is
   * emitted with `reason: "recipient_limit"`. Default 10 an hour and 30 a day.
   */
  recipientLimit?: ThrottleTier[];
  /** Your own templates, by kind, instead of the built-in English ones. */
  templates?: EmailTemplates;
  /**
   * Templates by locale (`"de"`, `"pt-BR"`), chosen by the request's `Accept-Language` (its exact
   * tag, then its language), falling back to `templates`, then to the built-in ones.
   */
  localizedTemplates?: Record<string, EmailTemplates>;
}

/** {@link EmailConfig} with its defaults filled in. */
export interface ResolvedEmailConfig {
  send: (message: EmailMessage) => Promise<void> | void;
  resetUrl: string;
  verifyUrl: string;
  /** Null when invitations by email are not configured. */
  invitationUrl: string | null;
  /** Null when sign-in links are not configured. */
  signInUrl: string | null;
  from: string | undefined;
  appName: string;
  tokenLifetimeMs: number;
  sendTimeoutMs: number;
  recipientLimit: ResolvedTier[];
  templates: EmailTemplates;
  localizedTemplates: Map<string, EmailTemplates>;
}

const emailOptions = {
  send: true,
  resetUrl: true,
  verifyUrl: true,
  invitationUrl: true,
  signInUrl: true,
  from: true,
  appName: true,
  tokenLifetime: true,
  sendTimeout: true,
  recipientLimit: true,
  templates: true,
  localizedTemplates: true,
} satisfies OptionNames<EmailConfig>;

const defaultRecipientLimit: ThrottleTier[] = [
  { limit: 10, window: "1h" },
  { limit: 30, window: "24h" },
];

const templateKinds = {
  password_reset: true,
  email_verification: true,
  notice: true,
  organization_invitation: true,
  sign_in: true,
  sign_up: true,
} satisfies Record<EmailKind, true>;

const isLoopback = (host: string) => host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);

const pageNames: Record<string, string> = {
  resetUrl: "reset-password",
  verifyUrl: "verify-email",
  invitationUrl: "accept-invitation",
  signInUrl: "email-sign-in",
};

function linkBase(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0) {
    fail(
      `email.${what} is required: the page of your front end that reads the token, e.g. "https://app.example.com/${pageNames[what] ?? "verify-email"}"`,
    );
  }
  if (lacksScheme(value))
    fail(`email.${what} must start with its scheme, such as "https://${value}"; got ${JSON.stringify(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`email.${what} must be an absolute URL; got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    fail(
      `email.${what} must be an https: URL (http: only on loopback): a link over plain HTTP shows its token to the network; got ${JSON.stringify(value)}`,
    );
  }
  if (value.includes("#")) fail(`email.${what} must not hold a fragment: the token is put there; got ${JSON.stringify(value)}`);
  if (url.username !== "" || url.password !== "") fail(`email.${what} must not hold a user name or password`);
  return value;
}

function templatesOf(value: unknown, what: string): EmailTemplates {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(`${what} must be an object of templates by kind (${Object.keys(templateKinds).join(", ")})`);
  }
  refuseUnknownOptions(value, templateKinds, `${what}.`);
  for (const [kind, template] of Object.entries(value)) {
    if (typeof template !== "function") fail(`${what}.${kind} must be a function (values) => ({ subject, text, html })`);
  }
  return value as EmailTemplates;
}

function boundedDuration(value: Duration | undefined, what: string, fallback: number, min: number, max: number): number {
  const seconds = value === undefined ? fallback : durationSeconds(value, what);
  if (seconds < min || seconds > max) fail(`${what} must be from ${min} to ${max} seconds; got ${JSON.stringify(value)}`);
  return seconds * 1000;
}

/**
 * Checks the `email` options and fills in their defaults; null when absent (the routes are off).
 * Throws a `TypeError` naming a bad one.
 */
export function resolveEmailConfig(config: EmailConfig | undefined, issuerHost: string): ResolvedEmailConfig | null {
  if (config === undefined) return null;
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    fail("email must be an object such as { send, resetUrl, verifyUrl }");
  }
  refuseUnknownOptions(config, emailOptions, "email.");
  if (typeof config.send !== "function") {
    fail("email.send is required: a function (message) => Promise<void> that delivers the message, e.g. with nodemailer");
  }
  if (config.from !== undefined && (typeof config.from !== "string" || config.from.length === 0)) {
    fail(`email.from must be a non-empty string such as "Example <no-reply@example.com>"; got ${JSON.stringify(config.from)}`);
  }
  if (config.appName !== undefined && (typeof config.appName !== "string" || config.appName.trim().length === 0)) {
    fail(`email.appName must be a non-empty string; got ${JSON.stringify(config.appName)}`);
  }
  // `??` has made null the empty object already.
  const localized = config.localizedTemplates === undefined ? {} : config.localizedTemplates;
  if (typeof localized !== "object" || localized === null || Array.isArray(localized)) {
    fail("email.localizedTemplates must be an object of templates by locale, such as { de: { password_reset } }");
  }
  const localizedTemplates = new Map<string, EmailTemplates>();
  for (const [locale, templates] of Object.entries(localized)) {
    if (!/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(locale))
      fail(`email.localizedTemplates: ${JSON.stringify(locale)} is not a language tag such as "de" or "pt-BR"`);
    localizedTemplates.set(locale.toLowerCase(), templatesOf(templates, `email.localizedTemplates.${locale}`));
  }
  return {
    send: config.send,
    resetUrl: linkBase(config.resetUrl, "resetUrl"),
    verifyUrl: linkBase(config.verifyUrl, "verifyUrl"),
    invitationUrl: config.invitationUrl === undefined ? null : linkBase(config.invitationUrl, "invitationUrl"),
    signInUrl: config.signInUrl === undefined ? null : linkBase(config.signInUrl, "signInUrl"),
    from: config.from,
    appName: config.appName ?? issuerHost,
    tokenLifetimeMs: boundedDuration(config.tokenLifetime, "email.tokenLifetime", 30 * 60, 5 * 60, 24 * 3600),
    sendTimeoutMs: boundedDuration(config.sendTimeout, "email.sendTimeout", 10, 1, 120),
    recipientLimit: resolveTiers(config.recipientLimit, "email.recipientLimit", defaultRecipientLimit),
    templates: templatesOf(config.templates, "email.templates"),
    localizedTemplates,
  };
}
