import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { SealedValue } from "../key-rotation/sealed-value.js";
import type { EncryptedSecret } from "../storage/types.js";
import {
  type DirectoryPolicy,
  type DirectoryPolicyInput,
  type DirectorySettings,
  type PublicDirectoryPolicy,
  defaultDirectoryPolicy,
  validateDirectoryPolicy,
} from "./policy.js";

/** The settings key the policy is saved under. */
export const directoryPolicyKey = "directory.policy";

/** The associated data the bind password is sealed with: it opens only as this setting. */
const bindPasswordContext = "portcullis directory bind password";

/** The policy as saved: the bind password sealed with the encryption key, never in plain text. */
interface SavedDirectoryPolicy {
  policy: DirectoryPolicy;
  bindPassword: EncryptedSecret | null;
}

async function readSaved(auth: Auth): Promise<SavedDirectoryPolicy> {
  const saved = (await auth.storage.settings.get(directoryPolicyKey)) as SavedDirectoryPolicy | undefined;
  return saved ?? { policy: { ...defaultDirectoryPolicy }, bindPassword: null };
}

/** The saved policy as an operator may see it: `credentialConfigured` instead of the bind password. */
export async function readPublicPolicy(auth: Auth): Promise<PublicDirectoryPolicy> {
  const saved = await readSaved(auth);
  return { ...saved.policy, credentialConfigured: saved.bindPassword !== null };
}

/** The sealed bind password opened; the key that sealed it may have left the keyring since. */
function openBindPassword(auth: Auth, sealed: EncryptedSecret | null): string | null {
  if (sealed === null) return null;
  try {
    return auth.secretBox.open(sealed, bindPasswordContext).toString("utf8");
  } catch (error) {
    throw new AuthError(ErrorCode.Unavailable, "The directory is unavailable", {
      cause: new Error(
        "The saved directory bind password cannot be opened with the configured encryption keys: configure the key that sealed it in secrets.encryption, or save the policy with its bind password again",
        { cause: error },
      ),
    });
  }
}

/**
 * The saved policy with its bind password opened, for connecting.
 *
 * @throws {AuthError} 50300 when the bind password cannot be opened (its key left the keyring).
 */
export async function readDirectorySettings(auth: Auth): Promise<DirectorySettings> {
  const saved = await readSaved(auth);
  return { ...saved.policy, bindPassword: openBindPassword(auth, saved.bindPassword) };
}

/**
 * The saved policy with its bind password opened when it is enabled and `wanted`; null, opening
 * nothing, when it is not: a policy a sign-in does not use never stands in its way.
 */
export async function readEnabledDirectorySettings(
  auth: Auth,
  wanted: (policy: DirectoryPolicy) => boolean = () => true,
): Promise<DirectorySettings | null> {
  const { policy, bindPassword } = await readSaved(auth);
  return policy.enabled && wanted(policy) ? { ...policy, bindPassword: openBindPassword(auth, bindPassword) } : null;
}

/**
 * The fields that decide where the bind password goes and how safely: the stored password is kept
 * only while none of them changes, so an operator (or a stolen admin token) cannot send it to a
 * server of their choosing without knowing it.
 */
const bindPasswordDestination = [
  "serverUrl",
  "bindDn",
  "caBundle",
  "startTls",
  "allowPlaintext",
  "allowPlaintextOnNetwork",
] as const;

/**
 * What a policy sent by an operator amounts to, over the saved one: validated and completed, with
 * the bind password it gives; or, when it gives none or an empty one, the saved one, as long as
 * the password would go to the same place the same way (see {@link bindPasswordDestination}).
 *
 * @throws {AuthError} 42200 naming the first bad field; `bindPassword` when the destination changed without it.
 */
export async function settingsFrom(auth: Auth, input: unknown): Promise<DirectorySettings> {
  const { policy: current, bindPassword: sealed } = await readSaved(auth);
  const policy = validateDirectoryPolicy(input, current);
  const given = (input as DirectoryPolicyInput).bindPassword;
  if (typeof given === "string" && given !== "") return { ...policy, bindPassword: given };
  const sameDestination = bindPasswordDestination.every((field) => policy[field] === current[field]);
  if (sealed === null || policy.bindDn === null) return { ...policy, bindPassword: null };
  if (!sameDestination) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      "bindPassword must be given again when serverUrl, bindDn, caBundle, startTls, allowPlaintext or allowPlaintextOnNetwork changes",
    );
  }
  try {
    return { ...policy, bindPassword: openBindPassword(auth, sealed) };
  } catch {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      "bindPassword must be given again: the saved one cannot be opened with the configured encryption keys",
    );
  }
}

/** Saves validated settings: the bind password sealed with the encryption key. */
export async function writeDirectorySettings(auth: Auth, settings: DirectorySettings): Promise<void> {
  const { bindPassword, ...policy } = settings;
  const saved: SavedDirectoryPolicy = {
    policy,
    bindPassword: bindPassword === null ? null : auth.secretBox.seal(Buffer.from(bindPassword, "utf8"), bindPasswordContext),
  };
  await auth.storage.settings.set(directoryPolicyKey, saved, auth.now());
}

/**
 * The saved policy's bind password as a {@link SealedValue} to reseal (KR-1), or null when none is
 * saved: written back with `settings.replace`, so a policy saved meanwhile wins (KR-2).
 */
export async function sealedBindPassword(auth: Auth): Promise<SealedValue | null> {
  const saved = (await auth.storage.settings.get(directoryPolicyKey)) as SavedDirectoryPolicy | undefined;
  if (saved?.bindPassword == null) return null;
  return {
    kind: "directoryBindPassword",
    owner: directoryPolicyKey,
    secret: saved.bindPassword,
    associatedData: bindPasswordContext,
    replace: (next) => auth.storage.settings.replace(directoryPolicyKey, saved, { ...saved, bindPassword: next }, auth.now()),
    reread: () => sealedBindPassword(auth),
  };
}
