import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { endOtherSessions } from "../users/sessions.js";
import { signInWaysOf } from "../users/sign-in-ways.js";
import { signedInUser } from "../users/signed-in-user.js";
import { passkeyConfig } from "../webauthn/ceremony.js";
import { isCredentialId } from "../webauthn/credential-json.js";
import { type PasskeyInfo, readLabel, toPasskeyInfo } from "../webauthn/passkey-info.js";
import { requiredString } from "./input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";

const noSuchPasskey = () => new AuthError(ErrorCode.NotFound, "No such passkey");

function readCredentialId(value: unknown): string {
  const id = requiredString(value, "id");
  if (!isCredentialId(id)) throw noSuchPasskey();
  return id;
}

/**
 * Lists a signed-in user's passkeys (`GET /auth/public-key/credentials`), oldest first.
 *
 * @throws {AuthError} 40101 user gone or disabled, 40400 passkeys not configured.
 */
export async function listPasskeys(auth: Auth, input: { userId: string }): Promise<PasskeyInfo[]> {
  passkeyConfig(auth);
  const user = await signedInUser(auth, input.userId);
  const passkeys = await auth.storage.passkeys.listByUser(user.id);
  return passkeys.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)).map(toPasskeyInfo);
}

/**
 * Renames one of a signed-in user's passkeys (`PUT /auth/public-key/credentials/:id`). Another
 * user's passkey is not found (ST-2).
 *
 * @throws {AuthError} 40101 user gone or disabled, 40400 no such passkey or not configured, 42200 bad label.
 */
export async function renamePasskey(auth: Auth, input: { userId: string; id: string; label: string }): Promise<void> {
  passkeyConfig(auth);
  const user = await signedInUser(auth, input.userId);
  const id = readCredentialId(input.id);
  const label = readLabel(input.label);
  if (!(await auth.storage.passkeys.rename(user.id, id, label))) throw noSuchPasskey();
  auth.emit({ type: "passkey.renamed", userId: user.id, credentialId: id, at: auth.now() });
}

/** The input of {@link revokePasskey}: the passkey, the session it is revoked from, and the proof that it is the user. */
export interface RevokePasskeyInput extends ReauthenticationProof {
  userId: string;
  /** The passkey's credential id. */
  id: string;
}

/**
 * Revokes one of a signed-in user's passkeys (`DELETE /auth/public-key/credentials/:id`) once the
 * user proves every factor of the account (STUP-3: the password, and a TOTP code when TOTP is on,
 * or what the session proved within `passkeys.reauthenticationWindow`, as for registering one;
 * see `requireRecentAuthentication`), and ends every other session of the user, `sessionId`
 * going on (SE-2). The last passkey of an account that has
 * no other way to sign in (no password, no directory, no external identity, no email sign-in to
 * a verified address) is kept, atomically
 * even under concurrent revocations (40900). Another user's passkey is not found (ST-2).
 *
 * @throws {AuthError} 40001 a factor missing, 40100 wrong password, 40103 wrong code, 40101 user
 *   gone or disabled, 40400 no such passkey or not configured, 40900 the last way to sign in, 42900 throttled.
 */
export async function revokePasskey(auth: Auth, input: RevokePasskeyInput): Promise<void> {
  const config = passkeyConfig(auth);
  const user = await signedInUser(auth, input.userId);
  const id = readCredentialId(input.id);
  const proof = { sessionId: input.sessionId, password: input.password, totpCode: input.totpCode };
  await requireRecentAuthentication(auth, user, proof, config.reauthenticationWindowSeconds);
  const ways = await signInWaysOf(auth, user);
  if (ways.password || ways.identities > 0 || ways.email) {
    if (!(await auth.storage.passkeys.delete(user.id, id))) throw noSuchPasskey();
  } else {
    const outcome = await auth.storage.passkeys.deleteUnlessLast(user.id, id);
    if (outcome === "not_found") throw noSuchPasskey();
    if (outcome === "last") {
      throw new AuthError(ErrorCode.Conflict, "This passkey is the only way to sign in to the account; add another first");
    }
  }
  await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "passkey_revoked" });
  auth.emit({ type: "passkey.revoked", userId: user.id, credentialId: id, at: auth.now() });
}
