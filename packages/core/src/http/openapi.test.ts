import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { compileErrors, validate } from "@readme/openapi-parser";
import type { OpenAPIV3_1 } from "openapi-types";
import { describe, expect, it } from "vitest";
import type { Auth } from "../auth.js";
import { fakeDirectory } from "../directory/directory.test-support.js";
import { defaultDirectoryPolicy } from "../directory/policy.js";
import { type AuthOverrides, encryptionKey, makeAuth } from "../flows/fixtures.test-support.js";
import { coreVersion } from "../version.js";
import type { OpenApiDocument } from "./describe-routes.js";
import { handleRequest } from "./handle-request.js";
import { openApiDocument } from "./openapi.js";
import { type OperationShape, schemaPointers, schemaValidators } from "./openapi.test-support.js";
import { type JsonSchema, componentSchemas } from "./openapi-schemas.js";
import { routes } from "./routes/index.js";

const { privateKey } = generateKeyPairSync("ed25519");
const eddsa = { alg: "EdDSA" as const, privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };

/** Every feature on: passkeys, an OAuth provider, a directory, an asymmetric signing key, the document route. */
const everythingOn: AuthOverrides = {
  secrets: { signing: eddsa, encryption: encryptionKey },
  passkeys: { rpId: "example.com", rpName: "Example", origins: ["https://example.com"] },
  oauth: {
    providers: {
      corp: { issuer: "https://id.example.com", clientId: "app", clientSecret: "s3cret", redirectUri: "https://example.com/cb" },
    },
  },
  directory: fakeDirectory(),
  http: { openApi: true, passwordChangeAlias: true },
  signUp: { enabled: true },
  secondFactor: { required: "always" },
  email: {
    send: () => {},
    resetUrl: "https://example.com/reset-password",
    verifyUrl: "https://example.com/verify-email",
    invitationUrl: "https://example.com/accept-invitation",
    signInUrl: "https://example.com/email-sign-in",
  },
  emailSignIn: { enabled: true, method: "both", signUp: true },
  organizations: { enabled: true, verifyDomain: async () => true },
  apiKeys: { enabled: true },
  serviceAccounts: { enabled: true },
  impersonation: { enabled: true },
};

const configurations: [string, AuthOverrides][] = [
  ["everything on", everythingOn],
  ["passkeys, OAuth and directory off, HS256", {}],
  ['statusMode "always-200"', { ...everythingOn, http: { openApi: true, statusMode: "always-200" } }],
  [
    "the original client's settings (docs/compatibility.md)",
    {
      ...everythingOn,
      http: { openApi: true, statusMode: "always-200", passwordChangeAlias: true },
      totp: { recoveryCodesAtSetup: true },
    },
  ],
  ['basePath ""', { ...everythingOn, http: { basePath: "" } }],
  ['basePath "/svc/auth-api"', { ...everythingOn, http: { basePath: "/svc/auth-api" } }],
];

const documentOf = (overrides: AuthOverrides): OpenApiDocument => openApiDocument(makeAuth(overrides).auth);

/** `METHOD path` of every operation of a document. */
const operationsOf = (document: OpenApiDocument): string[] =>
  Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );

const operation = (document: OpenApiDocument, path: string, method: string) => document.paths[path]?.[method] as OperationShape;

describe("openApiDocument", () => {
  for (const [name, overrides] of configurations) {
    it(`is valid OpenAPI 3.1 for ${name}: @readme/openapi-parser with its semantic checks, and every schema compiles as JSON Schema 2020-12`, async () => {
      const document = documentOf(overrides);
      const result = await validate(structuredClone(document) as unknown as OpenAPIV3_1.Document, {
        resolve: { external: false },
      });
      expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
      expect(result.warnings).toEqual([]);
      const validatorAt = schemaValidators(document);
      const pointers = schemaPointers(document);
      expect(pointers.length).toBeGreaterThan(Object.keys(document.paths).length);
      for (const pointer of pointers) expect(() => validatorAt(pointer), pointer).not.toThrow();
    });
  }

  it("has every route of the table with everything on, and leaves out each feature that is off", () => {
    const all = operationsOf(documentOf(everythingOn));
    expect(all).toHaveLength(routes.length);
    expect(all).toContain("GET /api/v1/auth/public-key/credentials");
    expect(all).toContain("PUT /api/v1/auth/public-key/credentials/{id}");
    expect(all).toContain("GET /.well-known/jwks.json");

    const off = operationsOf(documentOf({ passkeys: undefined }));
    // Organizations, API keys, service accounts and impersonation are off there too: their routes are checked below.
    const absent = all.filter(
      (entry) => !off.includes(entry) && !/\/(orgs|api-keys|service-accounts|token|impersonate|impersonation)(\/|$)/.test(entry),
    );
    expect(absent.sort()).toEqual([
      "DELETE /api/v1/auth/public-key/credentials/{id}",
      "GET /.well-known/jwks.json",
      "GET /api/v1/auth/directory/policy",
      "GET /api/v1/auth/oauth/{provider}/authorize",
      "GET /api/v1/auth/oauth/{provider}/callback",
      "GET /api/v1/auth/openapi.json",
      "GET /api/v1/auth/public-key/credentials",
      "POST /api/v1/auth/2fa/enrolment/enable",
      "POST /api/v1/auth/2fa/enrolment/setup",
      "POST /api/v1/auth/directory/policy/preview",
      "POST /api/v1/auth/directory/policy/test",
      "POST /api/v1/auth/email",
      "POST /api/v1/auth/email-sign-in/begin",
      "POST /api/v1/auth/email-sign-in/finish",
      "POST /api/v1/auth/email/verify",
      "POST /api/v1/auth/oauth/{provider}/reauthenticate",
      "POST /api/v1/auth/password/forgot",
      "POST /api/v1/auth/password/reset",
      "POST /api/v1/auth/public-key/enrolment/begin",
      "POST /api/v1/auth/public-key/enrolment/finish",
      "POST /api/v1/auth/public-key/login/begin",
      "POST /api/v1/auth/public-key/login/finish",
      "POST /api/v1/auth/public-key/offer/decline",
      "POST /api/v1/auth/public-key/register/begin",
      "POST /api/v1/auth/public-key/register/finish",
      "POST /api/v1/auth/reauthenticate/public-key/begin",
      "POST /api/v1/auth/reauthenticate/public-key/finish",
      "POST /api/v1/auth/register",
      "POST /api/v1/auth/register/public-key/begin",
      "POST /api/v1/auth/register/public-key/finish",
      "PUT /api/v1/auth/directory/policy",
      "PUT /api/v1/auth/public-key/credentials/{id}",
      "PUT /api/v1/users/me/password",
    ]);
    const signUpOff = { ...everythingOn, signUp: undefined, emailSignIn: { enabled: true, method: "both" as const } };
    // PL-17: a sign-up with a passkey needs sign-up on as well as passkeys (the passkeys-off set above).
    expect(all.filter((entry) => !operationsOf(documentOf(signUpOff)).includes(entry))).toEqual([
      "POST /api/v1/auth/register",
      "POST /api/v1/auth/register/public-key/begin",
      "POST /api/v1/auth/register/public-key/finish",
    ]);
    expect(
      all.filter((entry) => !operationsOf(documentOf({ ...everythingOn, secondFactor: undefined })).includes(entry)),
    ).toEqual([
      "POST /api/v1/auth/2fa/enrolment/setup",
      "POST /api/v1/auth/2fa/enrolment/enable",
      "POST /api/v1/auth/public-key/enrolment/begin",
      "POST /api/v1/auth/public-key/enrolment/finish",
    ]);
    const preferred = {
      ...everythingOn,
      passkeys: {
        rpId: "example.com",
        rpName: "Example",
        origins: ["https://example.com"],
        userVerification: "preferred" as const,
      },
    };
    expect(all.filter((entry) => !operationsOf(documentOf(preferred)).includes(entry))).toEqual([
      "POST /api/v1/auth/public-key/enrolment/begin",
      "POST /api/v1/auth/public-key/enrolment/finish",
    ]);
    expect(
      all.filter(
        (entry) => !operationsOf(documentOf({ ...everythingOn, email: undefined, emailSignIn: undefined })).includes(entry),
      ),
    ).toEqual([
      "POST /api/v1/auth/password/forgot",
      "POST /api/v1/auth/password/reset",
      "POST /api/v1/auth/email",
      "POST /api/v1/auth/email/verify",
      "POST /api/v1/auth/email-sign-in/begin",
      "POST /api/v1/auth/email-sign-in/finish",
      "POST /api/v1/auth/orgs/{orgId}/invitations",
      "POST /api/v1/auth/orgs/{orgId}/invitations/{invitationId}/resend",
    ]);
    const organizationsOff = operationsOf(documentOf({ ...everythingOn, organizations: undefined }));
    const organizations = all.filter((entry) => !organizationsOff.includes(entry));
    const organizationKeys = routes.filter((route) => route.path.startsWith("/auth/orgs/:orgId/api-keys"));
    expect(organizationKeys).toHaveLength(3);
    expect(organizations).toHaveLength(
      routes.filter((route) => route.doc.tag === "Organizations").length + organizationKeys.length,
    );
    expect(organizations.every((entry) => /\/auth\/(admin\/)?orgs(\/|$)/.test(entry))).toBe(true);
    const apiKeysOff = operationsOf(documentOf({ ...everythingOn, apiKeys: undefined }));
    expect(all.filter((entry) => !apiKeysOff.includes(entry)).sort()).toEqual([
      "DELETE /api/v1/auth/admin/users/{id}/api-keys/{keyId}",
      "DELETE /api/v1/auth/api-keys/{id}",
      "DELETE /api/v1/auth/orgs/{orgId}/api-keys/{id}",
      "GET /api/v1/auth/admin/users/{id}/api-keys",
      "GET /api/v1/auth/api-keys",
      "GET /api/v1/auth/orgs/{orgId}/api-keys",
      "PATCH /api/v1/auth/api-keys/{id}",
      "POST /api/v1/auth/api-keys",
      "POST /api/v1/auth/orgs/{orgId}/api-keys",
    ]);
    expect(
      all.filter((entry) => !operationsOf(documentOf({ ...everythingOn, organizations: { enabled: true } })).includes(entry)),
    ).toEqual(["POST /api/v1/auth/orgs/{orgId}/domains/{domain}/verify"]);
    const serviceAccountsOff = operationsOf(documentOf({ ...everythingOn, serviceAccounts: undefined }));
    expect(all.filter((entry) => !serviceAccountsOff.includes(entry)).sort()).toEqual([
      "DELETE /api/v1/auth/admin/service-accounts/{id}",
      "DELETE /api/v1/auth/admin/service-accounts/{id}/credentials/{credentialId}",
      "GET /api/v1/auth/admin/service-accounts",
      "GET /api/v1/auth/admin/service-accounts/{id}",
      "PATCH /api/v1/auth/admin/service-accounts/{id}",
      "POST /api/v1/auth/admin/service-accounts",
      "POST /api/v1/auth/admin/service-accounts/{id}/keys",
      "POST /api/v1/auth/admin/service-accounts/{id}/secrets",
      "POST /api/v1/auth/token",
    ]);
    const impersonationOff = operationsOf(documentOf({ ...everythingOn, impersonation: undefined }));
    expect(all.filter((entry) => !impersonationOff.includes(entry)).sort()).toEqual([
      "POST /api/v1/auth/admin/users/{id}/impersonate",
      "POST /api/v1/auth/impersonation/end",
    ]);
    // What a client asks to learn which features are on stays: public-key/config and oauth/providers.
    expect(off).toContain("GET /api/v1/auth/public-key/config");
    expect(off).toContain("GET /api/v1/auth/oauth/providers");
    // The schemas only passkey routes use are left out with them.
    expect(Object.keys(documentOf({ passkeys: undefined }).components.schemas)).not.toContain("PasskeyInfo");
    expect(Object.keys(documentOf(everythingOn).components.schemas)).toContain("PasskeyInfo");
  });

  it("ASVS 6.4.2: with everything on, no route takes or answers a password hint or a secret question", () => {
    const names: string[] = [];
    JSON.stringify(documentOf(everythingOn), (key, value) => {
      names.push(key);
      return value;
    });
    expect(names).toContain("newPassword");
    expect(names.filter((name) => /hint|question|secret_?answer|securityAnswer|memorable/i.test(name))).toEqual([]);
  });

  it("puts every path but the JWKS under the base path", () => {
    for (const basePath of ["", "/svc/auth-api"]) {
      const paths = Object.keys(documentOf({ ...everythingOn, http: { basePath } }).paths);
      expect(paths).toContain(`${basePath}/auth/login`);
      expect(paths.filter((path) => !path.startsWith(`${basePath}/auth/`))).toEqual(["/.well-known/jwks.json"]);
    }
  });

  it("SE-6: the password-change alias is documented only with http.passwordChangeAlias, under the base path, as PUT with {oldPassword, newPassword}", () => {
    for (const basePath of ["/api/v1", "", "/svc/auth-api"]) {
      const paths = documentOf({ ...everythingOn, http: { basePath, passwordChangeAlias: true } }).paths;
      expect(Object.keys(paths).filter((path) => !path.startsWith(`${basePath}/auth/`))).toEqual([
        `${basePath}/users/me/password`,
        "/.well-known/jwks.json",
      ]);
      expect(Object.keys(paths[`${basePath}/users/me/password`] ?? {})).toEqual(["put"]);
    }
    const alias = operation(documentOf(everythingOn), "/api/v1/users/me/password", "put");
    const own = operation(documentOf(everythingOn), "/api/v1/auth/password", "post");
    expect(JSON.stringify(alias.requestBody)).toContain('"required":["oldPassword","newPassword"]');
    expect(alias.responses).toEqual(own.responses);
    expect(Object.keys(documentOf({}).paths)).not.toContain("/api/v1/users/me/password");
  });

  it("RC-4: 2fa/setup's success data holds recoveryCodes only with totp.recoveryCodesAtSetup", () => {
    const setupData = (overrides: AuthOverrides) =>
      JSON.stringify(operation(documentOf(overrides), "/api/v1/auth/2fa/setup", "post").responses["200"]);
    expect(setupData({})).not.toContain("recoveryCodes");
    expect(setupData({ totp: { recoveryCodesAtSetup: true } })).toContain('"required":["secret","otpauthUrl","recoveryCodes"]');
  });

  it("gives each code the status it travels with: by its first three digits in standard mode, 200 in always-200 mode", () => {
    const standard = operation(documentOf(everythingOn), "/api/v1/auth/login", "post");
    expect(Object.keys(standard.responses)).toEqual(["200", "400", "401", "403", "404", "409", "429", "500", "503"]);
    expect(standard.responses["429"]?.headers?.["Retry-After"]?.required).toBe(true);
    const codesAt = (status: string) =>
      JSON.stringify(standard.responses[status]?.content)
        .match(/"enum":\[[\d,]+\]|"const":\d+/g)
        ?.join();
    expect(codesAt("200")).toBe('"const":0,"const":40102,"const":40105');
    expect(codesAt("401")).toBe('"enum":[40100]');
    expect(codesAt("400")).toBe('"enum":[40001,40002]');

    const always200 = operation(
      documentOf({ ...everythingOn, http: { statusMode: "always-200" } }),
      "/api/v1/auth/login",
      "post",
    );
    expect(Object.keys(always200.responses)).toEqual(["200"]);
    expect(JSON.stringify(always200.responses["200"]?.content)).toContain(
      '"enum":[40001,40002,40100,40300,40400,40900,42900,50000,50300]',
    );
    expect(always200.responses["200"]?.headers?.["Retry-After"]?.required).toBe(false);
  });

  it("STUP-4, ASVS 6.3.3: 40105 travels with 200 and is documented, with its enrolment token, on the routes that complete a sign-in only where secondFactor.required is configured", () => {
    const completing = [
      ["/api/v1/auth/login", "post"],
      ["/api/v1/auth/register", "post"],
      ["/api/v1/auth/public-key/login/finish", "post"],
      ["/api/v1/auth/oauth/{provider}/callback", "get"],
    ];
    const required = documentOf(everythingOn);
    const open = documentOf({ ...everythingOn, secondFactor: undefined });
    for (const [path, method] of completing as [string, string][]) {
      expect(JSON.stringify(operation(required, path, method).responses["200"])).toContain('"const":40105');
      expect(JSON.stringify(operation(open, path, method).responses["200"])).not.toContain("40105");
    }
    const login = JSON.stringify(operation(required, "/api/v1/auth/login", "post").responses["200"]);
    expect(login).toContain(
      '"properties":{"code":{"const":40105},"message":{"type":"string"},"data":{"type":"object","properties":{"tempToken"',
    );
    for (const [path, method] of [
      ["/api/v1/auth/2fa/verify", "post"],
      ["/api/v1/auth/refresh", "post"],
      ["/api/v1/auth/me", "get"],
    ]) {
      expect(JSON.stringify(operation(required, path as string, method as string).responses)).not.toContain("40105");
    }
  });

  it("adds the codes of the checks before a handler: TLS and internal errors everywhere, the body on POST and PUT, the token on bearer routes", () => {
    const document = documentOf(everythingOn);
    const statuses = (path: string, method: string) => Object.keys(operation(document, path, method).responses);
    expect(statuses("/api/v1/auth/public-key/config", "get")).toEqual(["200", "403", "500"]);
    expect(statuses("/api/v1/auth/refresh", "post")).toEqual(["200", "400", "401", "403", "500", "503"]);
    expect(statuses("/api/v1/auth/me", "get")).toEqual(["200", "401", "403", "500", "503"]);
    const me = operation(document, "/api/v1/auth/me", "get") as OperationShape & { security?: unknown };
    expect(me.security).toEqual([{ bearerAuth: [] }]);
    expect(operation(document, "/api/v1/auth/login", "post")).not.toHaveProperty("security");
  });

  it("names the configured admin role on the admin routes", () => {
    const document = documentOf({ ...everythingOn, adminRole: "operator" });
    const policy = document.paths["/api/v1/auth/directory/policy"] as Record<string, { description: string }>;
    expect(policy.put).toMatchObject({ "x-portcullis-role": "operator" });
    expect(policy.put?.description).toContain("`operator`");
  });

  it("declares the ceremony header, the path parameters and the OAuth cookie and redirect", () => {
    const document = documentOf(everythingOn);
    expect(operation(document, "/api/v1/auth/public-key/login/finish", "post").parameters).toEqual([
      expect.objectContaining({ name: "X-WebAuthn-Ceremony", in: "header", required: true }),
      expect.objectContaining({ name: "X-Portcullis-Token-Delivery", in: "header", required: false }),
    ]);
    expect(operation(document, "/api/v1/auth/public-key/credentials/{id}", "delete").parameters).toEqual([
      expect.objectContaining({ name: "id", in: "path", required: true }),
    ]);
    const authorize = operation(document, "/api/v1/auth/oauth/{provider}/authorize", "get");
    expect(authorize.responses["302"]?.headers?.Location?.required).toBe(true);
    expect(authorize.responses["200"]?.headers).toHaveProperty("Set-Cookie");
  });

  it("CK-1, CK-2: every route that answers tokens declares cookie mode's header and cookie; refresh and logout read the cookie and need no body token", () => {
    const document = documentOf(everythingOn);
    const answersTokens = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, OperationShape>)
        // A refresh token or a token set: switchOrganization answers an access token only, the refresh token unchanged.
        // An impersonation's tokens are answered in the body only: the administrator's browser keeps its own refresh cookie.
        .filter(([, operation]) => operation.operationId !== "impersonateUser")
        .filter(([, operation]) => /refreshToken|\/TokenSet"/.test(JSON.stringify(operation.responses["200"] ?? {})))
        .map(([method, operation]) => [operation.operationId, `${method} ${path}`] as const),
    );
    expect(answersTokens.map(([id]) => id).sort()).toEqual([
      "finishEmailSignIn",
      "finishPasskeyEnrolment",
      "finishPasskeySignUp",
      "finishTotpEnrolment",
      "login",
      "oauthCallback",
      "reauthenticate",
      "reauthenticateWithPasskeyFinish",
      "refresh",
      "register",
      "useRecoveryCode",
      "verifyTotp",
      "webauthnFinish",
    ]);
    for (const [, entry] of answersTokens) {
      const [method, path] = entry.split(" ") as [string, string];
      const declared = operation(document, path, method);
      expect(
        declared.parameters?.map((parameter) => parameter.name),
        entry,
      ).toContain("X-Portcullis-Token-Delivery");
      const setCookie = declared.responses["200"]?.headers?.["Set-Cookie"] as { description?: string } | undefined;
      expect(setCookie?.description, entry).toMatch(/portcullis_refresh/);
    }
    for (const path of ["/api/v1/auth/refresh", "/api/v1/auth/logout"]) {
      const declared = operation(document, path, "post");
      expect(declared.parameters?.filter((parameter) => parameter.in === "cookie").map((parameter) => parameter.name)).toEqual([
        "__Host-portcullis_refresh",
        "portcullis_refresh",
      ]);
      const body = declared.requestBody as { content: Record<string, { schema: object }> };
      expect(body.content["application/json"]?.schema).not.toHaveProperty("required");
    }
    expect(componentSchemas.TokenSet.required).not.toContain("refreshToken");
  });

  it("has the core package's version, and the servers it is given", () => {
    const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(coreVersion).toBe(packageJson.version);
    const { auth } = makeAuth();
    expect(openApiDocument(auth).info.version).toBe(packageJson.version);
    expect(openApiDocument(auth)).not.toHaveProperty("servers");
    const servers = [{ url: "https://api.example.com", description: "Production" }];
    expect(openApiDocument(auth, { servers }).servers).toEqual(servers);
  });

  it("describes the directory policy with exactly the policy's fields", () => {
    const fields = Object.keys(defaultDirectoryPolicy);
    const propertiesOf = (schema: JsonSchema) => Object.keys(schema.properties as object).sort();
    expect(propertiesOf(componentSchemas.DirectoryPolicy)).toEqual([...fields, "credentialConfigured"].sort());
    expect(propertiesOf(componentSchemas.DirectoryPolicyInput)).toEqual([...fields, "bindPassword"].sort());
  });

  it("gives every route a unique operationId", () => {
    const ids = routes.map((route) => route.doc.operationId);
    expect(new Set(ids).size).toBe(routes.length);
  });
});

describe("GET <basePath>/auth/openapi.json", () => {
  const get = async (auth: Auth, url: string) =>
    handleRequest(auth, { method: "GET", url, header: () => undefined, body: null, peerAddress: "192.0.2.1", secure: true });

  it("serves the document itself with http.openApi, cacheable for five minutes", async () => {
    const { auth } = makeAuth({ ...everythingOn, http: { openApi: true, basePath: "/svc" } });
    const response = await get(auth, "/svc/auth/openapi.json");
    expect(response?.status).toBe(200);
    expect(response?.headers["cache-control"]).toBe("public, max-age=300");
    expect(response?.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(response?.body ?? "")).toEqual(openApiDocument(auth));
  });

  it("is 40400 without http.openApi, which defaults to false", async () => {
    const { auth } = makeAuth();
    expect(auth.config.openApi).toBe(false);
    const response = await get(auth, "/api/v1/auth/openapi.json");
    expect(response?.status).toBe(404);
    expect(JSON.parse(response?.body ?? "")).toEqual({ code: 40400, message: "No such route" });
  });
});
