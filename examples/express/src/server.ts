import { createDemoApp } from "./app.js";

/**
 * Starts the demo on 127.0.0.1:$PORT (default 3000) and prints the demo user's name and
 * password. This is a demo: printing the DEMO user's password is its purpose. Never print a
 * real user's password.
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

  const { app, demoUser } = await createDemoApp({ signingSecret, encryptionKey, issuer: `http://127.0.0.1:${port}` });
  const server = app.listen(port, "127.0.0.1", () => {
    const address = server.address();
    const actualPort = typeof address === "object" && address !== null ? address.port : port;
    console.log(`Portcullis demo listening on http://127.0.0.1:${actualPort}/`);
    console.log(`Demo user: ${demoUser.username}`);
    console.log(`Password:  ${demoUser.password}`);
  });
  server.on("error", (error) => {
    console.error(`Cannot listen on 127.0.0.1:${port}:`, error.message);
    process.exitCode = 1;
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
