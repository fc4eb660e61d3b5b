import { type KeyObject, createPrivateKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { type IncomingMessage, type RequestListener, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { pgliteStorage } from "@portcullis/kysely";
import { createDemoApp, startDemoProvider } from "./app.js";
import { startDemoMailServer } from "./mail.js";
import { outboxPath } from "./outbox.js";

/**
 * Starts the demo on 127.0.0.1:$PORT (default 3000), its storage embedded PGlite in
 * $PORTCULLIS_DATA_DIR (default `.portcullis-data`), its local OpenID provider on a free port
 * of 127.0.0.1, and its local SMTP server on another (the mail it receives is shown at /outbox),
 * and prints the address to open, the demo user's name and password, those of the provider's
 * account, and the outbox's address. This is a demo: printing the DEMO accounts' passwords is its purpose.
 * Never print a real user's password.
 *
 * The page must be opened at http://localhost:$PORT: passkeys are bound to a domain name
 * (rpId "localhost") and WebAuthn refuses IP addresses such as 127.0.0.1. The server listens
 * first, so that the passkey origin names the actual port even with PORT=0.
 *
 * Ctrl-C (SIGINT) or SIGTERM closes what it opened, the last first ({@link stopOnSignals}).
 * $SMTP_PORT chooses the SMTP server's port (default: a free one).
 */
async function main(): Promise<void> {
  stopOnSignals();
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number; got ${process.env.PORT}`);

  const dataDir = resolve(process.env.PORTCULLIS_DATA_DIR || ".portcullis-data");
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const secrets = await demoSecrets(dataDir);
  const storage = await pgliteStorage({ dataDir: join(dataDir, "pglite") });
  closeAtStop(() => storage.close());

  // Until the app exists (a few milliseconds after listening), requests get a 503.
  let app: RequestListener | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (app) app(req, res);
    else res.writeHead(503, { "retry-after": "1" }).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  }).catch((error: Error) => {
    throw new Error(`Cannot listen on 127.0.0.1:${port}: ${error.message}`);
  });
  closeAtStop(
    () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  );

  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  const local = await startDemoProvider({ origin, signingKey: await providerSigningKey(dataDir) });
  closeAtStop(() => local.provider.close());
  const smtpPort = Number(process.env.SMTP_PORT ?? 0);
  if (!Number.isInteger(smtpPort) || smtpPort < 0 || smtpPort > 65535) {
    throw new Error(`SMTP_PORT must be a port number; got ${process.env.SMTP_PORT}`);
  }
  const mailServer = await startDemoMailServer(smtpPort);
  closeAtStop(() => mailServer.close());
  const demo = await createDemoApp({ ...secrets, origin, oauthProvider: local.registration, storage, mailServer, signUp: true });
  app = demo.app;
  console.log(`Portcullis demo listening on ${origin}/`);
  console.log(
    `Users, TOTP enrolments, passkeys and sessions are kept in ${dataDir} (embedded PGlite); delete it to start afresh.`,
  );
  console.log(`Open ${origin}/ by that name, not 127.0.0.1: passkeys work only on a domain name, here "localhost".`);
  console.log(`Demo user: ${demo.demoUser.username}`);
  console.log(`Password:  ${demo.demoUser.password}`);
  if (demo.demoUser.email) console.log(`Email:     ${demo.demoUser.email} (verified: "Forgot password?" sends it a link)`);
  console.log(`Local OpenID provider on ${local.provider.issuer}, for "Sign in with the local provider":`);
  console.log(`Provider user: ${local.account.username}`);
  console.log(`Password:      ${local.account.password}`);
  console.log(
    `Outbox: ${origin}${outboxPath} shows the mail the demo sent (its own SMTP server on ${mailServer.host}:${mailServer.port}; nothing leaves this machine).`,
  );
}

/**
 * The demo's signing secret and encryption key: AUTH_SIGNING_SECRET and AUTH_ENCRYPTION_KEY when
 * set; otherwise made once and kept in the data directory (readable by this user only), so that
 * tokens and TOTP secrets stay valid across restarts, as the stored users do. A real service
 * takes its secrets from its secret store, never from a file beside its data.
 */
async function demoSecrets(dataDir: string): Promise<{ signingSecret: string; encryptionKey: string }> {
  const fromEnvironment = { signingSecret: process.env.AUTH_SIGNING_SECRET, encryptionKey: process.env.AUTH_ENCRYPTION_KEY };
  if (fromEnvironment.signingSecret && fromEnvironment.encryptionKey) {
    return fromEnvironment as { signingSecret: string; encryptionKey: string };
  }
  const file = join(dataDir, "demo-secrets.json");
  try {
    return JSON.parse(await readFile(file, "utf8")) as { signingSecret: string; encryptionKey: string };
  } catch {
    const made = { signingSecret: randomBytes(32).toString("base64url"), encryptionKey: randomBytes(32).toString("base64url") };
    await writeFile(file, JSON.stringify(made), { mode: 0o600 });
    console.log(`Notice: AUTH_SIGNING_SECRET and AUTH_ENCRYPTION_KEY are not set; made new ones and kept them in ${file}.`);
    return made;
  }
}

/** What a stop closes: the storage, the server, the provider, the mail server, in the order they were opened. */
const openedResources: (() => Promise<void>)[] = [];

/** Registers `close` to run when the demo stops. */
function closeAtStop(close: () => Promise<void>): void {
  openedResources.push(close);
}

/**
 * On the first SIGINT (Ctrl-C) or SIGTERM: closes what was opened, the last first (the mail server, the provider,
 * the server and its connections, then the storage, which flushes PGlite and releases the data
 * directory's lock), prints one line and exits 0. A second signal while that runs exits at once,
 * with 1.
 */
function stopOnSignals(): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    const failures: string[] = [];
    for (const close of openedResources.reverse()) {
      await close().catch((error: unknown) => failures.push(error instanceof Error ? error.message : String(error)));
    }
    if (failures.length > 0) {
      console.error(`Portcullis demo stopped (${signal}); closing failed: ${failures.join("; ")}`);
      process.exit(1);
    }
    console.log(`Portcullis demo stopped (${signal}).`);
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/**
 * The local provider's RSA signing key, made once and kept in the data directory (readable by
 * this user only): with the account's fixed `sub`, the same keys at every start keep the
 * provider's tokens and the Portcullis account linked to it valid across restarts.
 */
async function providerSigningKey(dataDir: string): Promise<KeyObject> {
  const file = join(dataDir, "provider-signing-key.pem");
  try {
    return createPrivateKey(await readFile(file, "utf8"));
  } catch {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    await writeFile(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    return privateKey;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
