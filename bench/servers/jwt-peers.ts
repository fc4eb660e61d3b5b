import { createSecretKey } from "node:crypto";
import express, { type ErrorRequestHandler } from "express";
import { expressjwt } from "express-jwt";
import passport from "passport";
import { ExtractJwt, Strategy as JwtStrategy } from "passport-jwt";
import { type BenchSecrets, type ServerReady, audience, issuer, protectedPath } from "../common.js";
import { listenExpress, ok } from "./listen.js";

/** How a peer is given the HS256 secret: the string, as the READMEs show, or a `KeyObject` made once. */
export type SecretForm = "string" | "keyobject";

function secretIn(form: SecretForm, secrets: BenchSecrets): string | ReturnType<typeof createSecretKey> {
  return form === "string" ? secrets.BENCH_SIGNING_SECRET : createSecretKey(Buffer.from(secrets.BENCH_SIGNING_SECRET));
}

/** Answers a refused token with 401 in JSON instead of Express' HTML error page. */
const errorAsJson: ErrorRequestHandler = (error: { status?: number }, _req, res, _next) => {
  res.status(error.status ?? 500).json({ ok: false });
};

/** express-jwt as its README shows it: HS256, issuer and audience checked. */
export async function startExpressJwt(form: SecretForm, secrets: BenchSecrets): Promise<ServerReady> {
  const app = express();
  const checkToken = expressjwt({ secret: secretIn(form, secrets), algorithms: ["HS256"], issuer, audience });
  app.get(protectedPath, checkToken, (_req, res) => {
    res.json(ok);
  });
  app.use(errorAsJson);
  return { port: await listenExpress(app) };
}

/** passport-jwt as its README shows it (HS256, issuer and audience checked), with no user lookup in the verify callback. */
export async function startPassportJwt(form: SecretForm, secrets: BenchSecrets): Promise<ServerReady> {
  const strategy = new JwtStrategy(
    {
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // jsonwebtoken takes a KeyObject; passport-jwt's types name only string and Buffer.
      secretOrKey: secretIn(form, secrets) as string,
      algorithms: ["HS256"],
      issuer,
      audience,
    },
    (payload: { sub?: string }, done: (error: unknown, user?: unknown) => void) => done(null, { id: payload.sub }),
  );
  passport.use(strategy);
  const app = express();
  app.get(protectedPath, passport.authenticate("jwt", { session: false }), (_req, res) => {
    res.json(ok);
  });
  return { port: await listenExpress(app) };
}
