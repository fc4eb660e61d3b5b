import {
  reauthenticate,
  reauthenticateWithPasskeyBegin,
  reauthenticateWithPasskeyFinish,
} from "../../step-up/reauthenticate-session.js";
import { ceremonyHeader } from "../../webauthn/ceremony.js";
import { ceremonyStartData, reauthenticatedData, requestObject, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { ceremonyParameter, passkeysEnabled, webauthnBodyLimit } from "./passkeys.js";
import { proofFields, reauthentication, sessionOf, signedIn } from "./shared.js";

/**
 * Re-authenticating the signed-in session (STUP-2): what a client does on a 40104 before it sends
 * the refused request again. Each answers a new access token of the same session.
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
      description:
        "Every factor of the account, as a sign-in asks: the `password`, and a `totpCode` when TOTP is on (40001 naming what is missing; STUP-3). The session's `auth_time` becomes now and its `amr` `pwd` (with `otp`): routes that asked for a recent sign-in or a second factor (40104) now let it through, and its refreshes carry them. Attempts count against this session's failure budget (RL-1, RL-5).",
      body: requestObject(proofFields),
      data: reauthenticatedData,
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      const input = { ...reauthentication(context), userId: signedIn(context), sessionId: sessionOf(context), ip: context.ip };
      return { data: await reauthenticate(context.auth, input) };
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
      description:
        "Bodies up to 1 MiB. The session's `auth_time` becomes now and its `amr` the passkey's: `hwk` (a device-bound key) or `swk` (a synced one), with `user` when the user was verified.",
      parameters: [ceremonyParameter],
      body: schemaRef("AuthenticationResponse"),
      data: reauthenticatedData,
      codes: [40100, 42900],
    },
    async handle(context) {
      const input = {
        userId: signedIn(context),
        sessionId: sessionOf(context),
        ceremonyId: context.header(ceremonyHeader) as string,
        response: context.body,
        ip: context.ip,
      };
      return { data: await reauthenticateWithPasskeyFinish(context.auth, input) };
    },
  },
];
