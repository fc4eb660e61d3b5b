import type { Auth } from "../../auth.js";
import {
  getDirectoryPolicy,
  previewDirectoryUser,
  saveDirectoryPolicy,
  testDirectoryPolicy,
} from "../../flows/directory-policy.js";
import { requestObject, requiredText, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";

/** The body limit of a directory policy: room for a `caBundle` of up to 256 KiB. */
const directoryPolicyBodyLimit = 512 * 1024;

/**
 * Whether the directory routes are served: only when `createAuth` was given a directory. Without
 * one a policy could be saved but never used, so the routes answer 40400 and the OpenAPI
 * document leaves them out, as it does the routes of passkeys or OAuth when those are off.
 */
const directoryConfigured = (auth: Auth) => auth.directory !== null;

/** The directory (LDAP) policy, for the admin role. */
export const directoryRoutes: readonly Route[] = [
  {
    method: "GET",
    path: "/auth/directory/policy",
    access: "admin",
    enabled: directoryConfigured,
    doc: {
      operationId: "getDirectoryPolicy",
      tag: "Directory",
      summary: "Read the saved directory policy",
      description: "Before any save, the defaults, disabled.",
      data: schemaRef("DirectoryPolicy"),
      codes: [],
    },
    async handle({ auth }) {
      return { data: await getDirectoryPolicy(auth) };
    },
  },
  {
    method: "PUT",
    path: "/auth/directory/policy",
    access: "admin",
    enabled: directoryConfigured,
    bodyLimit: directoryPolicyBodyLimit,
    doc: {
      operationId: "saveDirectoryPolicy",
      tag: "Directory",
      summary: "Save the directory policy",
      description: "Bodies up to 512 KiB. Raises every directory user's token version. 42200 names the first bad field.",
      body: schemaRef("DirectoryPolicyInput"),
      data: schemaRef("DirectoryPolicy"),
      codes: [42200],
    },
    async handle({ auth, body }) {
      return { data: await saveDirectoryPolicy(auth, body) };
    },
  },
  {
    method: "POST",
    path: "/auth/directory/policy/test",
    access: "admin",
    enabled: directoryConfigured,
    bodyLimit: directoryPolicyBodyLimit,
    doc: {
      operationId: "testDirectoryPolicy",
      tag: "Directory",
      summary: "Try a directory policy without saving it",
      description: "`{}` tries the saved policy; fields given are tried over it. A failure is code 0 with `ok: false`.",
      body: schemaRef("DirectoryPolicyInput"),
      data: schemaRef("DirectoryCheck"),
      codes: [],
    },
    async handle({ auth, body }) {
      return { data: await testDirectoryPolicy(auth, body) };
    },
  },
  {
    method: "POST",
    path: "/auth/directory/policy/preview",
    access: "admin",
    enabled: directoryConfigured,
    doc: {
      operationId: "previewDirectoryUser",
      tag: "Directory",
      summary: "Show what the saved policy makes of a directory user",
      body: requestObject({ username: requiredText }, ["username"]),
      data: schemaRef("DirectoryUserPreview"),
      codes: [40001, 40400],
    },
    async handle({ auth, body }) {
      return { data: await previewDirectoryUser(auth, { username: body.username as string }) };
    },
  },
];
