import type { Auth } from "../auth.js";
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
 * What a policy sent by an operator amounts to, over the saved one: validated and completed, with
 * the bind password it gives, or the saved one when it gives none or an empty one.
 *
 * @throws {AuthError} 42200 naming the first bad field.
 */
export async function settingsFrom(auth: Auth, input: unknown): Promise<DirectorySettings> {
  const current = await readDirectorySettings(auth);
  const { bindPassword: _saved, ...currentPolicy } = current;
  const policy = validateDirectoryPolicy(input, currentPolicy);
  const given = (input as DirectoryPolicyInput).bindPassword;
  return { ...policy, bindPassword: typeof given === "string" && given !== "" ? given : current.bindPassword };
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
