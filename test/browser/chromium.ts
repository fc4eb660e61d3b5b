import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, type CDPSession, type Page, chromium } from "playwright-core";

/**
 * Debian's Chromium (`apt-get install chromium`), which `.ci/run` installs when it is missing;
 * `CHROMIUM_PATH` names another Chromium or Chrome binary.
 */
export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * Why the browser tests cannot run here, or null when they can. Outside CI they are then
 * skipped with this reason printed; under CI they fail with it (never a silent skip).
 */
export function chromiumMissing(): string | null {
  return existsSync(chromiumPath)
    ? null
    : `Chromium is not installed at ${chromiumPath} (Debian: apt-get install -y chromium, which .ci/run does as root; or set CHROMIUM_PATH)`;
}

/**
 * Launches Debian's Chromium headless. Playwright gives it a fresh, temporary user data
 * directory (never the user's own profile) and deletes it on close. The flags keep it off the
 * network and quiet: no QUIC, no background requests, no component updates, no sync; no
 * sandbox, since CI runs as root in a container. `extraArgs` are added to those flags (e.g.
 * `--host-resolver-rules`).
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
  });
}

/** A credential the virtual authenticator holds, with its id and user handle as base64url. */
export interface HeldCredential {
  /** The credential id, base64url: as the server and the page name it. */
  id: string;
  isResidentCredential: boolean;
  rpId: string | undefined;
  /** The user handle as text: Portcullis uses the UTF-8 bytes of the user id. */
  userHandle: string | undefined;
  signCount: number;
}

/** A credential exactly as `WebAuthn.getCredentials` returns it (ids and keys base64), private key included. */
export interface RawCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
}

/** A CDP virtual authenticator attached to one page. */
export interface VirtualAuthenticator {
  /** The credentials it holds now (`WebAuthn.getCredentials`). */
  credentials(): Promise<HeldCredential[]>;
  /** The same, raw, private keys included: a copy of the passkeys, as a cloned or synced device would hold. */
  rawCredentials(): Promise<RawCredential[]>;
  /** Puts a credential into the authenticator (`WebAuthn.addCredential`). */
  addCredential(credential: RawCredential): Promise<void>;
  /**
   * Turns the simulated touch on or off (`WebAuthn.setAutomaticPresenceSimulation`). Off, a request
   * waits; turning it on again does not answer a request already waiting, only later ones.
   */
  setPresence(enabled: boolean): Promise<void>;
}

/** The options of `WebAuthn.addVirtualAuthenticator` the tests use (playwright-core does not export its protocol types). */
export interface VirtualAuthenticatorOptions {
  protocol: "ctap2" | "u2f";
  transport: "internal" | "usb" | "nfc" | "ble" | "cable";
  hasResidentKey: boolean;
  hasUserVerification: boolean;
  isUserVerified: boolean;
  automaticPresenceSimulation: boolean;
}

/** The virtual authenticator the tests use: a platform passkey provider with user verification. */
export const platformAuthenticator: VirtualAuthenticatorOptions = {
  protocol: "ctap2",
  transport: "internal",
  hasResidentKey: true,
  hasUserVerification: true,
  isUserVerified: true,
  automaticPresenceSimulation: true,
};

/**
 * Adds a virtual authenticator to `page` through the Chrome DevTools Protocol: every WebAuthn
 * ceremony of the page goes to it, and `automaticPresenceSimulation` answers the prompt.
 */
export async function addVirtualAuthenticator(
  context: BrowserContext,
  page: Page,
  options: VirtualAuthenticatorOptions = platformAuthenticator,
): Promise<VirtualAuthenticator> {
  const session: CDPSession = await context.newCDPSession(page);
  await session.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = await session.send("WebAuthn.addVirtualAuthenticator", { options });
  const rawCredentials = async (): Promise<RawCredential[]> =>
    (await session.send("WebAuthn.getCredentials", { authenticatorId })).credentials;
  return {
    rawCredentials,
    async addCredential(credential) {
      await session.send("WebAuthn.addCredential", { authenticatorId, credential });
    },
    async setPresence(enabled) {
      await session.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId, enabled });
    },
    async credentials() {
      const credentials = await rawCredentials();
      return credentials.map((credential) => ({
        id: Buffer.from(credential.credentialId, "base64").toString("base64url"),
        isResidentCredential: credential.isResidentCredential,
        rpId: credential.rpId,
        userHandle:
          credential.userHandle === undefined ? undefined : Buffer.from(credential.userHandle, "base64").toString("utf8"),
        signCount: credential.signCount,
      }));
    },
  };
}

/**
 * Collects what would show that the page broke: uncaught exceptions, and console errors other
 * than the browser's own "Failed to load resource" line for an API answer of 4xx (which the
 * tests provoke on purpose, e.g. a revoked passkey).
 */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const text = message.text();
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return;
    errors.push(`console: ${text}`);
  });
  return errors;
}
