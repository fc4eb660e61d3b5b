import { writeFile } from "node:fs/promises";
import { type Auth, openApiDocument } from "@portcullis/core";
import { requireAuth } from "@portcullis/express";
import type { Express } from "express";

/**
 * Writes the OpenAPI 3.1 document of the routes `auth` serves to a file, for a client generator,
 * an API gateway or a documentation site. Make it from the production configuration: the
 * document follows it (base path, features on, status mode).
 */
export async function writeOpenApiFile(auth: Auth, file: string, publicUrl: string): Promise<void> {
  const document = openApiDocument(auth, { servers: [{ url: publicUrl }] });
  await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
}

/** Serves the document at a path of the app's own, to administrators only, instead of `http.openApi`. */
export function serveOpenApiToAdmins(app: Express, auth: Auth): void {
  const document = openApiDocument(auth);
  app.get("/internal/openapi.json", requireAuth(auth, { roles: ["admin"] }), (_req, res) => {
    res.json(document);
  });
}
