import type { Auth } from "../../auth.js";
import { tokenDeliveryParameter } from "../../cookie-sessions/refresh-cookie.js";
import { listPasskeys, renamePasskey, revokePasskey } from "../../flows/passkey-management.js";
import { webauthnBegin, webauthnFinish } from "../../flows/webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../../flows/webauthn-register.js";
import { declinePasskeyOffer } from "../../passwordless/passkey-offer.js";
import { ceremonyHeader } from "../../webauthn/ceremony.js";
import { deviceTokenFromCookie } from "../cookies.js";
import {
  answerObject,
  ceremonyStartData,
  enrolmentTokenData,
  listOf,
  requestObject,
  requiredText,
  schemaRef,
  tempTokenData,
} from "../openapi-schemas.js";
import type { ParameterDoc, Route } from "../route-types.js";
import { loginResponse, proofFields, reauthentication, sessionOf, setsDeviceCookie, signedIn } from "./shared.js";

/** Whether passkeys are configured: the passkey routes exist only then. */
export const passkeysEnabled = (auth: Auth) => auth.config.passkeys !== null;

/** The body limit of the WebAuthn finish routes (contract: 1 MiB). */
export const webauthnBodyLimit = 1024 * 1024;

/** The header of a WebAuthn finish route that names its ceremony. */
export const ceremonyParameter: ParameterDoc = {
  name: "X-WebAuthn-Ceremony",
  in: "header",
  required: true,
  description: "The `ceremonyId` the begin step answered; without it, 40002",
};
const credentialIdParameter: ParameterDoc = { name: "id", in: "path", description: "The passkey's credential id (base64url)" };

/** WebAuthn sign-in, registration and the signed-in user's passkeys; all but `config` only with `passkeys` configured. */
export const passkeyRoutes: readonly Route[] = [
  {
    method: "GET",
    path: "/auth/public-key/config",
    access: "public",
    doc: {
      operationId: "passkeyConfig",
      tag: "Passkeys",
      summary: "Whether passkeys are enabled",
      data: answerObject({ enabled: { type: "boolean" } }),
      codes: [],
    },
    async handle({ auth }) {
      return { data: { enabled: passkeysEnabled(auth) } };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/login/begin",
    access: "public",
    enabled: passkeysEnabled,
    doc: {
      operationId: "webauthnBegin",
      tag: "Passkeys",
      summary: "Begin a passkey sign-in",
      description: "With a username, that account's passkeys are listed; without one the ceremony is discoverable.",
      body: requestObject({ username: { type: "string" } }),
      data: ceremonyStartData("CredentialRequestOptions"),
      codes: [42900, 50300],
    },
    async handle({ auth, body, ip }) {
      return { data: await webauthnBegin(auth, { username: body.username as string | undefined, ip }) };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/login/finish",
    access: "public",
    enabled: passkeysEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "webauthnFinish",
      tag: "Passkeys",
      summary: "Finish a passkey sign-in with the browser's assertion",
      description:
        "Bodies up to 1 MiB. A passkey without user verification, for a user with TOTP, answers 40102; for a user who must have a second factor and has none, 40105 (STUP-4).",
      parameters: [ceremonyParameter, tokenDeliveryParameter],
      body: schemaRef("AuthenticationResponse"),
      data: schemaRef("TokenSet"),
      setsCookie: setsDeviceCookie,
      secondFactor: tempTokenData,
      enrolment: enrolmentTokenData,
      codes: [40100, 40300, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, header, ip, secure } = context;
      const deviceToken = deviceTokenFromCookie(header("cookie"), secure);
      const result = await webauthnFinish(auth, {
        ceremonyId: header(ceremonyHeader) as string,
        response: body,
        deviceToken,
        ip,
        userAgent: header("user-agent"),
      });
      return loginResponse(context, result);
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/register/begin",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "webauthnRegisterBegin",
      tag: "Passkeys",
      summary: "Begin registering a passkey",
      description:
        "Needs every factor of the account (STUP-3, WA-6): the `password`, and a `totpCode` with TOTP on, or a sign-in or re-authentication within `passkeys.reauthenticationWindow` that proved them.",
      body: requestObject({ label: requiredText, ...proofFields }, ["label"]),
      data: ceremonyStartData("CredentialCreationOptions"),
      codes: [40001, 40100, 40103, 40900, 42200, 42900],
    },
    async handle(context) {
      return {
        data: await webauthnRegisterBegin(context.auth, {
          ...reauthentication(context),
          userId: signedIn(context),
          label: context.body.label as string,
        }),
      };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/register/finish",
    access: "bearer",
    enabled: passkeysEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "webauthnRegisterFinish",
      tag: "Passkeys",
      summary: "Finish registering a passkey with the browser's attestation",
      description: "Bodies up to 1 MiB. Ends every other session of the user; this one goes on (SE-2).",
      parameters: [ceremonyParameter],
      body: schemaRef("RegistrationResponse"),
      data: schemaRef("PasskeyInfo"),
      codes: [40100, 40900],
    },
    async handle(context) {
      const ceremonyId = context.header(ceremonyHeader) as string;
      return {
        data: await webauthnRegisterFinish(context.auth, {
          userId: signedIn(context),
          sessionId: sessionOf(context),
          ceremonyId,
          response: context.body,
        }),
      };
    },
  },
  {
    method: "GET",
    path: "/auth/public-key/credentials",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "listPasskeys",
      tag: "Passkeys",
      summary: "List the signed-in user's passkeys, oldest first",
      data: listOf("PasskeyInfo"),
      codes: [],
    },
    async handle(context) {
      return { data: await listPasskeys(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "PUT",
    path: "/auth/public-key/credentials/:id",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "renamePasskey",
      tag: "Passkeys",
      summary: "Rename one of the signed-in user's passkeys",
      parameters: [credentialIdParameter],
      body: requestObject({ label: { ...requiredText, description: "1 to 64 characters of visible text" } }, ["label"]),
      data: answerObject({ renamed: { const: true } }),
      codes: [40001, 40400, 42200],
    },
    async handle(context) {
      const input = { userId: signedIn(context), id: context.params.id as string, label: context.body.label as string };
      await renamePasskey(context.auth, input);
      return { data: { renamed: true } };
    },
  },
  {
    method: "DELETE",
    path: "/auth/public-key/credentials/:id",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "revokePasskey",
      tag: "Passkeys",
      summary: "Revoke one of the signed-in user's passkeys",
      description:
        "Needs every factor of the account (STUP-3): the `password`, and a `totpCode` with TOTP on, in an optional JSON body, or a sign-in or re-authentication within `passkeys.reauthenticationWindow` that proved them. 40900 when it is the account's last way to sign in. Ends every other session of the user; this one goes on (SE-2).",
      parameters: [credentialIdParameter],
      body: requestObject(proofFields),
      data: answerObject({ revoked: { const: true } }),
      codes: [40001, 40100, 40103, 40400, 40900, 42900],
    },
    async handle(context) {
      await revokePasskey(context.auth, {
        ...reauthentication(context),
        userId: signedIn(context),
        id: context.params.id as string,
      });
      return { data: { revoked: true } };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/offer/decline",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "declinePasskeyOffer",
      tag: "Passkeys",
      summary: "Decline the passkey offer of a sign-in",
      description:
        "The answers of this account's sign-ins say `offerPasskey: false` for `passkeys.offerDeclinedFor` (90 days by default; PL-14). Declining again meanwhile changes nothing.",
      data: answerObject({ declined: { const: true } }),
      codes: [],
    },
    async handle(context) {
      await declinePasskeyOffer(context.auth, { userId: signedIn(context) });
      return { data: { declined: true } };
    },
  },
];
