import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { EncryptedSecret } from "../storage/types.js";
import {
  type DirectoryPolicy,
  type DirectoryPolicyInput,
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

/** A policy with its bind password opened: what a directory connects with. Never leaves the server. */
export type DirectorySettings = DirectoryPolicy & { bindPassword: string | null };

async function readSaved(auth: Auth): Promise<SavedDirectoryPolicy> {
  const saved = (await auth.storage.settings.get(directoryPolicyKey)) as SavedDirectoryPolicy | undefined;
  return saved ?? { policy: { ...defaultDirectoryPolicy }, bindPassword: null };
}

/** The saved policy as an operator may see it: `credentialConfigured` instead of the bind password. */
export async function readPublicPolicy(auth: Auth): Promise<PublicDirectoryPolicy> {
  const saved = await readSaved(auth);
  return { ...saved.policy, credentialConfigured: saved.bindPassword !== null };
}

/** The saved policy with its bind password opened, for connecting. */
export async function readDirectorySettings(auth: Auth): Promise<DirectorySettings> {
  const saved = await readSaved(auth);
  const bindPassword =
    saved.bindPassword === null ? null : auth.secretBox.open(saved.bindPassword, bindPasswordContext).toString("utf8");
  return { ...saved.policy, bindPassword };
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
  const { bindPassword: saved, ...current } = await readDirectorySettings(auth);
  const policy = validateDirectoryPolicy(input, current);
  const given = (input as DirectoryPolicyInput).bindPassword;
  if (typeof given === "string" && given !== "") return { ...policy, bindPassword: given };
  const sameDestination = bindPasswordDestination.every((field) => policy[field] === current[field]);
  if (saved !== null && !sameDestination && policy.bindDn !== null) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      "bindPassword must be given again when serverUrl, bindDn, caBundle, startTls, allowPlaintext or allowPlaintextOnNetwork changes",
    );
  }
  return { ...policy, bindPassword: sameDestination ? saved : null };
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
