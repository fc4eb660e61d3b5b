import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { type NextFunction, type Request, type Response, type Router } from "express";

/** Where the viewer page lives: `public/api-docs/`, served with the rest of the page at this path. */
export const apiReferencePath = "/api-docs/";

/** The files of swagger-ui-dist the viewer page loads, served from the installed package, not a CDN. */
const swaggerUiFiles = ["swagger-ui-bundle.js", "swagger-ui.css"] as const;

/**
 * The content security policy of the viewer page: the demo's own, but Swagger UI sets `style`
 * attributes as it renders, and shows the schemas' example images from data: URLs.
 */
export const apiReferenceContentSecurityPolicy = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The routes of the API reference page, `/api-docs/`: Swagger UI's script and stylesheet from
 * the `swagger-ui-dist` package in node_modules, and the page's content security policy. The page
 * itself (`public/api-docs/`) reads the document the auth serves at
 * `/api/v1/auth/openapi.json` (`http: { openApi: true }`): the routes of the features this
 * configuration turns on, no others.
 */
export function apiReferenceRoutes(): Router {
  const swaggerUiDirectory = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const router = express.Router();
  router.use(apiReferencePath, (_req: Request, res: Response, next: NextFunction) => {
    res.set("content-security-policy", apiReferenceContentSecurityPolicy);
    next();
  });
  for (const file of swaggerUiFiles) {
    router.get(`${apiReferencePath}${file}`, (_req, res) => {
      res.set("cache-control", "public, max-age=3600").sendFile(file, { root: swaggerUiDirectory });
    });
  }
  return router;
}
