import { type IncomingMessage, type RequestListener, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createDemoApp, startDemoProvider } from "./app.js";

/**
 * Starts the demo on 127.0.0.1:$PORT (default 3000) and its local OpenID provider on a free port
 * of 127.0.0.1, and prints the address to open, the demo user's name and password, and those of
 * the provider's account. This is a demo: printing the DEMO accounts' passwords is its purpose.
 * Never print a real user's password.
 *
 * The page must be opened at http://localhost:$PORT: passkeys are bound to a domain name
 * (rpId "localhost") and WebAuthn refuses IP addresses such as 127.0.0.1. The server listens
 * first, so that the passkey origin names the actual port even with PORT=0.
 */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number; got ${process.env.PORT}`);

  const signingSecret = process.env.AUTH_SIGNING_SECRET || undefined;
  const encryptionKey = process.env.AUTH_ENCRYPTION_KEY || undefined;
  if (!signingSecret || !encryptionKey) {
    console.log(
      "Notice: AUTH_SIGNING_SECRET and/or AUTH_ENCRYPTION_KEY are not set; using random ones generated now.\n" +
        "Tokens will not survive a restart (neither do users and sessions: storage is in memory).",
    );
  }

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

  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  const local = await startDemoProvider({ origin });
  const demo = await createDemoApp({ signingSecret, encryptionKey, origin, oauthProvider: local.registration });
  app = demo.app;
  console.log(`Portcullis demo listening on ${origin}/`);
  console.log(`Open ${origin}/ by that name, not 127.0.0.1: passkeys work only on a domain name, here "localhost".`);
  console.log(`Demo user: ${demo.demoUser.username}`);
  console.log(`Password:  ${demo.demoUser.password}`);
  console.log(`Local OpenID provider on ${local.provider.issuer}, for "Sign in with the local provider":`);
  console.log(`Provider user: ${local.account.username}`);
  console.log(`Password:      ${local.account.password}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
