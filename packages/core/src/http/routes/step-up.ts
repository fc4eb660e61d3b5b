import { tokenDeliveryParameter } from "../../cookie-sessions/refresh-cookie.js";
import {
  reauthenticate,
  reauthenticateWithPasskeyBegin,
  reauthenticateWithPasskeyFinish,
} from "../../step-up/reauthenticate-session.js";
import { ceremonyHeader } from "../../webauthn/ceremony.js";
import { ceremonyStartData, reauthenticatedData, requestObject, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { ceremonyParameter, passkeysEnabled, webauthnBodyLimit } from "./passkeys.js";
import { proofFields, reauthentication, sessionOf, setsRefreshCookie, signedIn, signedInResponse } from "./shared.js";

/** What the re-authentication routes say of their answer (STUP-2, ASVS 7.2.4). */
const newSessionAnswer =
  "The session of the access token ends and a new one begins in its place, answered as a sign-in answers (`TokenSet`, no device token): a new access token and a new refresh token, with the same absolute expiry as the ended session (RT-4). Every token of the ended session is refused from then on (40101), its refresh token too. Of concurrent re-authentications of one session one succeeds; the others answer 40101.";

/**
 * Re-authenticating the signed-in session (STUP-2): what a client does on a 40104 before it sends
 * the refused request again. Each ends the session and answers the tokens of a new one in its
 * place, as a sign-in does (ASVS 7.2.4).
 */
export const stepUpRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/reauthenticate",
    access: "bearer",
    doc: {
      operationId: "reauthenticate",
      tag: "Step-up",
      summary: "Re-authenticate this session with the password (and a TOTP code)",
      description: `Every factor of the account, as a sign-in asks: the \`password\`, and a \`totpCode\` when TOTP is on (40001 naming what is missing; STUP-3). ${newSessionAnswer} The new session's \`auth_time\` is now and its \`amr\` \`pwd\` (with \`otp\`): routes that asked for a recent sign-in or a second factor (40104) let its tokens through, and its refreshes carry them. Attempts count against this session's failure budget (RL-1, RL-5).`,
      parameters: [tokenDeliveryParameter],
      body: requestObject(proofFields),
      data: reauthenticatedData,
      setsCookie: setsRefreshCookie,
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      const input = {
        ...reauthentication(context),
        userId: signedIn(context),
        sessionId: sessionOf(context),
        ip: context.ip,
        userAgent: context.header("user-agent"),
      };
      return signedInResponse(context, await reauthenticate(context.auth, input));
    },
  },
  {
    method: "POST",
    path: "/auth/reauthenticate/public-key/begin",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "reauthenticateWithPasskeyBegin",
      tag: "Step-up",
      summary: "Begin re-authenticating this session with a passkey",
      description:
        "Request options listing the user's passkeys; user verification is required when TOTP is on. The ceremony can be finished only by this session. 40900 when the account has no passkey.",
      body: requestObject({}),
      data: ceremonyStartData("CredentialRequestOptions"),
      codes: [40900, 42900],
    },
    async handle(context) {
      const input = { userId: signedIn(context), sessionId: sessionOf(context) };
      return { data: await reauthenticateWithPasskeyBegin(context.auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/reauthenticate/public-key/finish",
    access: "bearer",
    enabled: passkeysEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "reauthenticateWithPasskeyFinish",
      tag: "Step-up",
      summary: "Finish re-authenticating this session with the browser's assertion",
      description: `Bodies up to 1 MiB. ${newSessionAnswer} The new session's \`auth_time\` is now and its \`amr\` the passkey's: \`hwk\` (a device-bound key) or \`swk\` (a synced one), with \`user\` when the user was verified.`,
      parameters: [ceremonyParameter, tokenDeliveryParameter],
      body: schemaRef("AuthenticationResponse"),
      data: reauthenticatedData,
      setsCookie: setsRefreshCookie,
      codes: [40100, 42900],
    },
    async handle(context) {
      const input = {
        userId: signedIn(context),
        sessionId: sessionOf(context),
        ceremonyId: context.header(ceremonyHeader) as string,
        response: context.body,
        ip: context.ip,
        userAgent: context.header("user-agent"),
      };
      return signedInResponse(context, await reauthenticateWithPasskeyFinish(context.auth, input));
    },
  },
];
