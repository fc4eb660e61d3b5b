import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { ExpressAdapter, type NestExpressApplication } from "@nestjs/platform-express";
import type { Auth } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import { appModule } from "./app.module.js";

/** The application on Nest's Express platform, not listening yet: `await (await createExpressApp(auth)).listen(3000)`. */
export async function createExpressApp(auth: Auth): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(appModule(auth), new ExpressAdapter(), { logger: false });
  app.use(authRouter(auth)); // POST /api/v1/auth/login, /refresh, …, GET /api/v1/auth/me
  return app;
}
