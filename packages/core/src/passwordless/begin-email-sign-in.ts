import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { sha256 } from "../crypto/random.js";
import { deliverEmail, deliverLater, emailConfigOf } from "../email/deliver.js";
import { linkWithToken } from "../email/email-tokens.js";
import { requiredString } from "../flows/input.js";
import type { UserRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import type { ResolvedEmailSignInConfig } from "./email-sign-in-config.js";
import { type EmailSignInData, codeDigest, emailSignInConfigOf, emailSignInKind, randomDigits } from "./sign-in-challenge.js";

/** The input of {@link beginEmailSignIn}. */
export interface BeginEmailSignInInput {
  /** The address to send the code or link to; only an account holding it verified is signed in. */
  email: string;
  /** The client address: its own budget, `throttle.emailSignInRequestsIp`. */
  ip?: string | undefined;
  /** The request's `Accept-Language`, which chooses a localized template. */
  acceptLanguage?: string | undefined;
}

/** What {@link beginEmailSignIn} answers, the same for every address. */
export interface BeginEmailSignInResult {
  /**
   * The secret the finish must bring back: the HTTP route sets it as the binding cookie (so a link
   * opened in another browser fails, PL-2) and answers it for clients without cookies.
   */
  binding: string;
  /** Seconds the code and link work for (`emailSignIn.ttl`). */
  expiresIn: number;
}

/** What the message of a begun sign-in holds, made before the answer so that every begin does the same work. */
interface SignInSecrets {
  code: string;
  linkToken: string | null;
}

/**
 * Asks for a sign-in code or link by email (`POST /auth/email-sign-in/begin`; PL-3). Takes one
 * attempt from the client address's budget, then from the address asked for
 * (`throttle.emailSignInRequestsIp`, `throttle.emailSignInRequests`: never the account's sign-in
 * budget), then does the same work and gives the same answer for every address, held or not
 * (PR-1's rules): a random binding, a code of `codeLength` digits and (with a link) a link token,
 * stored as one `email_sign_in` challenge under the binding's hash, with the code and token only as
 * digests. Only after the answer is the address's verified holder looked up: an enabled account
 * gets a `sign_in` message (the code, the link to `email.signInUrl`, or both, per `method`); with
 * `emailSignIn.signUp`, an address nobody holds verified gets a `sign_up` message with the code;
 * nothing is sent otherwise. The finish looks the holder up again: the account as it is then decides.
 *
 * @throws {AuthError} 40001 no `email`, 40002 an `email` that is no address, 40400 email sign-in off,
 *   42900 a budget spent.
 * @example
 * ```ts
 * const { binding, expiresIn } = await beginEmailSignIn(auth, { email: "alice@example.com", ip });
 * ```
 */
export async function beginEmailSignIn(auth: Auth, input: BeginEmailSignInInput): Promise<BeginEmailSignInResult> {
  const config = emailSignInConfigOf(auth);
  const emailKey = emailKeyOf(normalizeEmail(requiredString(input.email, "email")));
  if (input.ip !== undefined) await takeAttempt(auth, "emailSignInRequestsIp", input.ip, input.ip);
  await takeAttempt(auth, "emailSignInRequests", emailKey, input.ip);
  const binding = opaqueToken(auth);
  const secrets: SignInSecrets = {
    code: randomDigits(auth.randomBytes, config.codeLength),
    linkToken: config.method === "code" ? null : opaqueToken(auth).value,
  };
  const data: EmailSignInData = {
    emailKey,
    codeHash: codeDigest(auth, binding.hash, secrets.code),
    linkHash: secrets.linkToken === null ? null : sha256(secrets.linkToken),
  };
  const now = auth.now();
  await auth.storage.challenges.put({
    id: binding.hash,
    kind: emailSignInKind,
    userId: null,
    data: { ...data },
    attempts: 0,
    createdAt: now,
    expiresAt: now + config.ttlMs,
  });
  deliverLater(auth, () => sendSignInMessage(auth, config, emailKey, secrets, input));
  return { binding: binding.value, expiresIn: config.ttlMs / 1000 };
}

/** After the answer: the message the address's holder, or (with sign-up) an address nobody holds, gets. */
async function sendSignInMessage(
  auth: Auth,
  config: ResolvedEmailSignInConfig,
  emailKey: string,
  secrets: SignInSecrets,
  input: BeginEmailSignInInput,
): Promise<void> {
  const user = await auth.storage.users.findByVerifiedEmail(emailKey);
  auth.emit({ type: "email_sign_in.requested", userId: user?.id ?? null, at: auth.now(), ip: input.ip });
  const base = { acceptLanguage: input.acceptLanguage, expiresInMinutes: Math.round(config.ttlMs / 60_000) };
  if (user !== null) {
    if (!canSignInByEmail(user)) return;
    const { signInUrl } = emailConfigOf(auth);
    const { linkToken } = secrets;
    await deliverEmail(auth, {
      ...base,
      kind: "sign_in",
      to: user.email as string,
      userId: user.id,
      username: user.username,
      ...(config.method === "link" ? {} : { code: secrets.code }),
      ...(linkToken === null || signInUrl === null ? {} : { link: async () => linkWithToken(signInUrl, linkToken) }),
    });
  } else if (config.signUp && auth.config.signUp.enabled) {
    await deliverEmail(auth, { ...base, kind: "sign_up", to: emailKey, userId: null, username: emailKey, code: secrets.code });
  }
}

/**
 * Whether an account may sign in by email: a local one (a directory's accounts sign in through the
 * directory, which decides whether they still may), enabled, holding the address verified.
 */
export function canSignInByEmail(user: UserRecord): boolean {
  return user.source === "local" && !user.disabled && user.emailVerified && user.email !== null;
}
