// One server process: `node --import tsx server.ts <mode> [options-json]` listens on a random
// port of 127.0.0.1 and prints `BENCH_READY {"port":…}` once it can be measured. Each mode
// loads only its own framework and library.
import { type BenchSecrets, type ServerMode, type ServerOptions, type ServerReady, readyMarker, serverModes } from "./common.js";

function secretsFromEnvironment(): BenchSecrets {
  const { BENCH_SIGNING_SECRET, BENCH_PASSWORD } = process.env;
  if (!BENCH_SIGNING_SECRET || !BENCH_PASSWORD) throw new Error("BENCH_SIGNING_SECRET and BENCH_PASSWORD must be set");
  return { BENCH_SIGNING_SECRET, BENCH_PASSWORD };
}

async function start(mode: ServerMode, secrets: BenchSecrets, options: ServerOptions): Promise<ServerReady> {
  switch (mode) {
    case "bare-express":
      return (await import("./servers/bare.js")).startBareExpress(secrets, options);
    case "bare-hono":
      return (await import("./servers/bare.js")).startBareHono();
    case "portcullis-express":
      return (await import("./servers/portcullis.js")).startPortcullis("express", secrets, options);
    case "portcullis-hono":
      return (await import("./servers/portcullis.js")).startPortcullis("hono", secrets, options);
    case "bare-fastify":
      return (await import("./servers/fastify.js")).startBareFastify();
    case "portcullis-fastify":
      return (await import("./servers/fastify.js")).startPortcullisFastify(secrets, options);
    case "express-jwt-keyobject":
      return (await import("./servers/jwt-peers.js")).startExpressJwt("keyobject", secrets);
    case "express-jwt-string":
      return (await import("./servers/jwt-peers.js")).startExpressJwt("string", secrets);
    case "passport-jwt-keyobject":
      return (await import("./servers/jwt-peers.js")).startPassportJwt("keyobject", secrets);
    case "passport-jwt-string":
      return (await import("./servers/jwt-peers.js")).startPassportJwt("string", secrets);
    case "better-auth-cookie":
      return (await import("./servers/better-auth.js")).startBetterAuth("cookie", secrets);
    case "better-auth-bearer":
      return (await import("./servers/better-auth.js")).startBetterAuth("bearer", secrets);
  }
}

const [mode, optionsJson] = process.argv.slice(2);
if (!serverModes.includes(mode as ServerMode)) throw new Error(`usage: server.ts <${serverModes.join("|")}> [options-json]`);
const ready = await start(mode as ServerMode, secretsFromEnvironment(), JSON.parse(optionsJson ?? "{}") as ServerOptions);
process.stdout.write(`${readyMarker}${JSON.stringify(ready)}\n`);
