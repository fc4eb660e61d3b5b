// docs/sign-in-pathways.md lists every way into an account (ASVS 5.0 6.1.3, 6.3.4). This file
// holds the page to the route table: a route that can lead to a session, raise one or stand in
// for a factor must be named in the page's table, so a new pathway cannot go unlisted.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Route, routes } from "@portcullis/core";
import { describe, expect, it } from "vitest";

const page = readFileSync(fileURLToPath(new URL("../../docs/sign-in-pathways.md", import.meta.url)), "utf8");

/** The text of the page's table of pathways: from its heading to the next one. */
const pathwaysTable = page.slice(page.indexOf("## The pathways"), page.indexOf("\n## ", page.indexOf("## The pathways") + 1));

/** Public routes that are no way into an account, each with the reason. */
const notPathways: Record<string, string> = {
  "GET /.well-known/jwks.json": "the public keys that verify access tokens",
  "GET /auth/openapi.json": "the OpenAPI document",
  "GET /auth/oauth/providers": "the names of the configured providers",
  "GET /auth/public-key/config": "the relying party's passkey settings",
  "POST /auth/logout": "ends a session",
  "POST /auth/email/verify": "verifies an address; starts no session and proves no factor",
};

/** Signed-in routes that raise a session or take a factor away: pathways too. */
const signedInPathways = (route: Route) =>
  route.doc.operationId.toLowerCase().includes("reauthenticate") || route.doc.operationId === "removeTotp";

const routeKey = (route: Route) => `${route.method} ${route.path}`;

describe("docs/sign-in-pathways.md", () => {
  it("ASVS 6.1.3, 6.3.4: names every route that can lead to a session, raise one or remove a factor, as `METHOD /path`", () => {
    const pathways = routes.filter(
      (route) => (route.access === "public" && !(routeKey(route) in notPathways)) || signedInPathways(route),
    );
    expect(pathways.length).toBeGreaterThan(15);
    expect(pathways.map(routeKey).filter((key) => !pathwaysTable.includes(`\`${key}\``))).toEqual([]);
  });

  it("ASVS 6.1.3: every route it sets aside as no pathway is a public route of the table", () => {
    const publicRoutes = routes.filter((route) => route.access === "public").map(routeKey);
    expect(Object.keys(notPathways).filter((key) => !publicRoutes.includes(key))).toEqual([]);
  });
});
