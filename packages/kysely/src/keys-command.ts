import { randomBytes } from "node:crypto";
import {
  type CountsByKey,
  type EncryptionKeyring,
  type ResealCounts,
  type ResealReport,
  type SealedKind,
  type Storage,
  type UnopenableValue,
  createAuth,
  memoryStorage,
  resealSecrets,
} from "@portcullis/core";
import type { KyselyStorage } from "./kysely-storage.js";

/** Where `portcullis keys reseal` writes: the report, and a line per value no key opens. */
export interface ResealOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * The encryption keys `portcullis keys reseal` works with, read from `AUTH_ENCRYPTION_KEY` before
 * the database is opened: the service's `secrets.encryption`, one key or the keyring as JSON
 * (`{"current":"k2","keys":{"k1":"…","k2":"…"}}`), checked as `createAuth` checks them. Answers the
 * keys, or the exit code (2) and the line to print; the line never repeats what the variable holds.
 */
export function encryptionKeysFrom(
  env: NodeJS.ProcessEnv,
): { keys: string | EncryptionKeyring } | { problem: { code: number; message: string } } {
  const given = env.AUTH_ENCRYPTION_KEY?.trim();
  if (!given) {
    return {
      problem: {
        code: 2,
        message:
          'AUTH_ENCRYPTION_KEY is not set: give the service\'s secrets.encryption, one key or its keyring as JSON: {"current":"k2","keys":{"k1":"…","k2":"…"}}',
      },
    };
  }
  let keys: string | EncryptionKeyring = given;
  if (given.startsWith("{")) {
    try {
      keys = JSON.parse(given) as EncryptionKeyring;
    } catch {
      return { problem: { code: 2, message: "AUTH_ENCRYPTION_KEY starts with { but is not JSON: give the keyring as JSON" } };
    }
  }
  try {
    authWith(memoryStorage(), keys);
  } catch (error) {
    return { problem: { code: 2, message: `AUTH_ENCRYPTION_KEY refused: ${(error as Error).message}` } };
  }
  return { keys };
}

/**
 * An instance that opens and seals with `keys`. It keeps pending TOTP setups on their key, as
 * under `totp.recoveryCodesAtSetup`: the command cannot know the service's setting.
 */
function authWith(storage: Storage, keys: string | EncryptionKeyring) {
  return createAuth({
    storage,
    issuer: "https://portcullis-cli.invalid",
    audience: "portcullis-cli",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: keys },
    totp: { recoveryCodesAtSetup: true },
    sweepInterval: false,
  });
}

const kindNames: Record<SealedKind, string> = {
  totpSecret: "TOTP secrets",
  pendingTotpSecret: "pending TOTP setups",
  directoryBindPassword: "directory bind password",
};

const countsText = (counts: CountsByKey) =>
  Object.keys(counts).length === 0
    ? "none"
    : Object.entries(counts)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([keyId, count]) => `${keyId} ${count}`)
        .join(", ");

const unopenableLine = ({ kind, owner, keyId }: UnopenableValue) =>
  `${kind === "directoryBindPassword" ? "the directory policy" : `user ${owner}`}: ${kindNames[kind].replace(/s$/, "")} sealed with key ${JSON.stringify(keyId)} opens with no listed key: left as it is`;

/**
 * The report as the command prints it: what was found by key id (and by kind), what was sealed
 * again, what is left on old keys, and for each key of the keyring other than the current one
 * whether it may be removed.
 */
export function resealLines(report: ResealReport, keyIds: readonly string[]): string[] {
  const lines = [
    `${report.dryRun ? "dry run, nothing written: " : ""}sealed values by key: ${countsText(report.sealedWith)} (current key: ${report.current})`,
  ];
  for (const [kind, counts] of Object.entries(report.byKind) as [SealedKind, ResealCounts][]) {
    if (Object.keys(counts.sealedWith).length > 0) lines.push(`  ${kindNames[kind]}: ${countsText(counts.sealedWith)}`);
  }
  const old = Object.values(report.stillOld).reduce((sum, count) => sum + count, 0);
  lines.push(
    report.dryRun
      ? `${old - report.failed - report.keptPending} to seal again under ${report.current}`
      : `${report.resealed} sealed again under ${report.current}`,
  );
  lines.push(`still sealed with an old key: ${countsText(report.stillOld)}`);
  if (report.failed > 0) {
    lines.push(
      `${report.failed} could not be opened with any listed key (named above): left as they are; add the key that sealed them to secrets.encryption.keys, or set each up again`,
    );
  }
  if (report.keptPending > 0) {
    lines.push(
      `${report.keptPending} pending TOTP ${report.keptPending === 1 ? "setup" : "setups"} kept on ${report.keptPending === 1 ? "its" : "their"} key: the recovery codes shown at setup derive from the sealed form (totp.recoveryCodesAtSetup); run this again after they are enabled, or, once the key is removed, their users start the setup again`,
    );
  }
  for (const keyId of keyIds.filter((id) => id !== report.current)) {
    const left = report.stillOld[keyId] ?? 0;
    lines.push(
      left === 0
        ? `key ${keyId}: 0 left: remove it from secrets.encryption.keys once every instance seals with ${report.current} and 10 minutes have passed (OAuth sign-ins under way hold a verifier sealed with the key before)`
        : `key ${keyId}: ${left} left: keep it in secrets.encryption.keys; remove key ${keyId} from secrets.encryption.keys once it shows 0`,
    );
  }
  return lines;
}

/**
 * `portcullis keys reseal [--dry-run]`, once {@link encryptionKeysFrom} found the keys: seals every
 * value of `storage` sealed with a key other than the current one again under it
 * (`resealSecrets`, KR-1, KR-2) and prints the report. Pending TOTP setups are kept on their key,
 * as under `totp.recoveryCodesAtSetup`, since the command cannot know that setting. Returns the exit
 * code: 0 when every value opened, 1 when one could not be opened or the run failed.
 */
export async function runReseal(
  storage: KyselyStorage,
  keys: string | EncryptionKeyring,
  options: { dryRun: boolean; output: ResealOutput },
): Promise<number> {
  const { output } = options;
  try {
    const report = await resealSecrets(authWith(storage, keys), {
      dryRun: options.dryRun,
      onUnopenable: (value) => output.err(unopenableLine(value)),
    });
    const keyIds = typeof keys === "string" ? [report.current] : Object.keys(keys.keys);
    for (const line of resealLines(report, keyIds)) output.out(line);
    return report.failed > 0 ? 1 : 0;
  } catch (error) {
    output.err(`reseal failed: ${(error as Error).message}`);
    return 1;
  }
}
