import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter, type NestFastifyApplication } from "@nestjs/platform-fastify";
import type { Auth } from "@portcullis/core";
import { frameworkErrorHandler, portcullis } from "@portcullis/fastify";
import type { FastifyInstance } from "fastify";
import { appModule } from "./app.module.js";

/** The same application on Nest's Fastify platform, not listening yet: `await (await createFastifyApp(auth)).listen(3000)`. */
export async function createFastifyApp(auth: Auth): Promise<NestFastifyApplication> {
  // frameworkErrors: Portcullis answers, on its paths, what Fastify's router refuses before any
  // plugin runs (`/api/v1/auth/%ff`). Typed against your Fastify release, as the instance below,
  // while the adapter's options are typed against the one Nest pins: hence the cast.
  const adapter = new FastifyAdapter({ frameworkErrors: frameworkErrorHandler(auth) as never });
  const app = await NestFactory.create<NestFastifyApplication>(appModule(auth), adapter, { logger: false });
  // @nestjs/platform-fastify pins its own Fastify release; when it differs from the one
  // @portcullis/fastify is typed against, the two FastifyInstance types differ in details the
  // plugin does not use, so the instance is seen through the app's own Fastify types.
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  await fastify.register(portcullis, { auth }); // POST /api/v1/auth/login, /refresh, …, GET /api/v1/auth/me
  return app;
}
