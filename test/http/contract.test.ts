import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { call, post } from "./client.js";
import { describeContract, expectEnvelope } from "./contract-suite.js";
import { type MalformedContext, malformedCases } from "./malformed-cases.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import {
  type RunningServer,
  adapters,
  startExpress4,
  startExpress4ParsingJson,
  startExpress5,
  startExpress5ParsingJson,
  startFastify,
  startFastifyWithJsonParser,
  startHono,
  startHonoReadingJsonFirst,
} from "./servers.js";

/** `express.json()` with its defaults: it reads the body first and refuses one over 100kb. */
const expressJsonFirst = { bodyParsedEarlier: true, bodyParserLimit: 100 * 1024 };

describeContract("Express 5", startExpress5);
describeContract("Express 4", startExpress4);
describeContract("Hono on @hono/node-server", startHono);
describeContract("Express 5 behind express.json()", startExpress5ParsingJson, expressJsonFirst);
describeContract("Express 4 behind express.json()", startExpress4ParsingJson, expressJsonFirst);
describeContract("Hono behind a middleware that reads c.req.json()", startHonoReadingJsonFirst, { bodyParsedEarlier: true });
describeContract("Fastify", startFastify, { frameworkAnswersClientErrors: true });
describeContract("Fastify with the app's own JSON parser", startFastifyWithJsonParser, { frameworkAnswersClientErrors: true });

describe("HTTP-5: the malformed table gets identical answers from every adapter", () => {
  const testAuth = makeTestAuth({ throttle: generousThrottle });
  const servers: [string, RunningServer][] = [];
  const context: MalformedContext = { token: "", userId: "", bodyParsedEarlier: false };

  beforeAll(async () => {
    for (const [name, start] of adapters) servers.push([name, await start(testAuth.auth)]);
    const user = await createTestUser(testAuth.auth, "mallory");
    const signedIn = await post(servers[0]![1], "/api/v1/auth/login", { username: "mallory", password: testPassword });
    context.token = signedIn.body.data.accessToken;
    context.userId = user.id;
  });
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()));
  });

  for (const testCase of malformedCases) {
    it(testCase.name, async () => {
      const answers: Record<string, unknown> = {};
      for (const [name, server] of servers) {
        const result = await testCase.send(server, context);
        answers[name] = {
          status: result.status,
          body: result.text,
          contentType: result.headers.get("content-type"),
          cacheControl: result.headers.get("cache-control"),
          nosniff: result.headers.get("x-content-type-options"),
        };
      }
      const [first, ...others] = Object.values(answers);
      expect(JSON.parse((first as { body: string }).body).code).toBe(testCase.code);
      for (const other of others) expect(other).toEqual(first);
    });
  }
});

describe("HTTP-1: after a body refused as too large, the keep-alive connection serves the next request", () => {
  for (const [name, start] of adapters) {
    it(name, async () => {
      const { auth } = makeTestAuth({ throttle: generousThrottle });
      const server = await start(auth);
      try {
        const refused = await call(server, "POST", "/api/v1/auth/public-key/login/begin", {
          body: JSON.stringify({ username: "a".repeat(300_000) }),
          headers: { "content-type": "application/json" },
        });
        expectEnvelope(refused, 40002);
        expect(refused.body.message).toBe("The request body is too large");
        for (let round = 0; round < 3; round += 1) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          expectEnvelope(await call(server, "GET", "/api/v1/auth/public-key/config"), 0);
        }
      } finally {
        await server.close();
      }
    });
  }
});

describeOpenApiDrift({
  elsewhere: {
    oauthAuthorize: "test/http/oauth.test.ts, against a real OpenID provider",
    oauthCallback: "test/http/oauth.test.ts, against a real OpenID provider",
    oauthReauthenticate: "test/http/oauth.test.ts, against a real OpenID provider",
    getDirectoryPolicy: "test/http/directory.test.ts, against a real slapd",
    saveDirectoryPolicy: "test/http/directory.test.ts, against a real slapd",
    testDirectoryPolicy: "test/http/directory.test.ts, against a real slapd",
    previewDirectoryUser: "test/http/directory.test.ts, against a real slapd",
    register: "test/http/register.test.ts, with signUp.enabled",
    beginPasskeySignUp: "test/http/passkey-sign-up.test.ts, with signUp.enabled",
    finishPasskeySignUp: "test/http/passkey-sign-up.test.ts, with signUp.enabled",
    updateProfile: "test/http/user-fields.test.ts, with user fields declared",
    listUsers: "test/http/admin.test.ts, and test/storage/admin-users.test.ts on every store",
    adminCreateUser: "test/http/admin.test.ts",
    getUserDetails: "test/http/admin.test.ts",
    updateUser: "test/http/admin.test.ts",
    endUserSessions: "test/http/admin.test.ts",
    removeTotp: "test/http/admin.test.ts",
    revokeAllSessions: "test/http/incident.test.ts, and test/storage/incident.test.ts on every store",
    forgotPassword: "test/http/email.test.ts, with email configured",
    resetPassword: "test/http/email.test.ts, with email configured",
    changeEmail: "test/http/email.test.ts, with email configured",
    verifyEmail: "test/http/email.test.ts, with email configured",
    beginEmailSignIn: "test/http/email-sign-in.test.ts, with emailSignIn.enabled",
    finishEmailSignIn: "test/http/email-sign-in.test.ts, with emailSignIn.enabled",
    declinePasskeyOffer: "test/http/passkey-offer.test.ts",
    beginTotpEnrolment: "test/http/required-factor.test.ts, with secondFactor.required",
    finishTotpEnrolment: "test/http/required-factor.test.ts, with secondFactor.required",
    beginPasskeyEnrolment: "test/http/required-factor.test.ts, with secondFactor.required",
    finishPasskeyEnrolment: "test/http/required-factor.test.ts, with secondFactor.required",
    reauthenticate: "test/http/step-up.test.ts, with the app's step-up routes",
    reauthenticateWithPasskeyBegin: "test/http/step-up.test.ts",
    reauthenticateWithPasskeyFinish: "test/http/step-up.test.ts",
    changePasswordAlias: "test/http/original-client.test.ts, with http.passwordChangeAlias",
    createOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    listMyOrganizations: "test/http/organizations.test.ts, with organizations.enabled",
    listJoinableOrganizations: "test/http/organizations.test.ts, with organizations.enabled",
    switchOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    acceptInvitation: "test/http/organizations.test.ts, with organizations.enabled",
    getOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    updateOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    deleteOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    joinOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    listMembers: "test/http/organizations.test.ts, with organizations.enabled",
    changeMemberRoles: "test/http/organizations.test.ts, with organizations.enabled",
    removeMember: "test/http/organizations.test.ts, with organizations.enabled",
    inviteMember: "test/http/organizations.test.ts, with organizations.enabled",
    listInvitations: "test/http/organizations.test.ts, with organizations.enabled",
    resendInvitation: "test/http/organizations.test.ts, with organizations.enabled",
    revokeInvitation: "test/http/organizations.test.ts, with organizations.enabled",
    addDomain: "test/http/organizations.test.ts, with organizations.enabled",
    listDomains: "test/http/organizations.test.ts, with organizations.enabled",
    verifyDomain: "test/http/organizations.test.ts, with organizations.enabled",
    removeDomain: "test/http/organizations.test.ts, with organizations.enabled",
    listAllOrganizations: "test/http/organizations.test.ts, with organizations.enabled",
    deleteAnyOrganization: "test/http/organizations.test.ts, with organizations.enabled",
    createApiKey: "test/http/api-keys.test.ts, with apiKeys.enabled",
    listApiKeys: "test/http/api-keys.test.ts, with apiKeys.enabled",
    renameApiKey: "test/http/api-keys.test.ts, with apiKeys.enabled",
    revokeApiKey: "test/http/api-keys.test.ts, with apiKeys.enabled",
    listUserApiKeys: "test/http/api-keys.test.ts, with apiKeys.enabled",
    revokeUserApiKey: "test/http/api-keys.test.ts, with apiKeys.enabled",
    createOrganizationApiKey: "test/http/api-keys.test.ts, with apiKeys and organizations enabled",
    listOrganizationApiKeys: "test/http/api-keys.test.ts, with apiKeys and organizations enabled",
    revokeOrganizationApiKey: "test/http/api-keys.test.ts, with apiKeys and organizations enabled",
    createServiceAccount: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    listServiceAccounts: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    getServiceAccount: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    updateServiceAccount: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    deleteServiceAccount: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    addClientSecret: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    addPublicKey: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    removeServiceAccountCredential: "test/http/service-accounts.test.ts, with serviceAccounts.enabled",
    issueClientCredentialsToken: "test/http/service-accounts.test.ts, with oauth4webapi as the client",
    impersonateUser: "test/http/impersonation.test.ts, with impersonation.enabled",
    endImpersonation: "test/http/impersonation.test.ts, with impersonation.enabled",
  },
});
