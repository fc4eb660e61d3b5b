import { beginTotpSetup, disableTotp, enableTotp, regenerateRecoveryCodes } from "../../flows/totp-enrolment.js";
import { answerObject, requestObject, requiredText } from "../openapi-schemas.js";
import type { Route, RouteContext } from "../route-types.js";
import { passwordProof, reauthentication, sessionOf, signedIn } from "./shared.js";

/** The recovery codes enabling and regenerating answer: ten of 24 Crockford base32 characters in six groups of four (STUP-7). */
const issuedRecoveryCodes = {
  type: "array",
  items: {
    type: "string",
    pattern: "^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$",
    examples: ["7K3D-9QXM-2HBT-W0RZ-5NPV-C8JE"],
  },
  minItems: 10,
  maxItems: 10,
  description: "Ten codes of 120 bits, shown this once; only their hashes are kept",
} as const;

/** What `2fa/setup` answers: the new secret. */
const totpSetupProperties = {
  secret: { type: "string", description: "Base32, for typing in" },
  otpauthUrl: { type: "string", description: "The `otpauth://totp/…` URI, for a QR code" },
} as const;
const totpSetupData = answerObject(totpSetupProperties);

/** What `2fa/setup` answers with `totp.recoveryCodesAtSetup`: the secret and the pending recovery codes (RC-4). */
const totpSetupWithCodesData = answerObject({
  ...totpSetupProperties,
  recoveryCodes: {
    ...issuedRecoveryCodes,
    description:
      "Ten codes of 120 bits, usable only once `2fa/enable` turns this factor on (the same ones it answers); a new setup replaces them",
  },
});

/** The body of a change to the second factor (STUP-3): a current code and the password. */
const secondFactorChangeBody = requestObject({
  code: {
    type: "string",
    description: "A current code of the authenticator, unless the session recently proved a second factor",
  },
  password: passwordProof,
});

/** The input of a change to the second factor: the user and session of the token, and the body's proofs. */
const secondFactorChangeOf = (context: RouteContext) => ({
  userId: signedIn(context),
  sessionId: sessionOf(context),
  code: context.body.code as string | undefined,
  password: context.body.password as string | undefined,
});

/** TOTP enrolment and recovery codes of the signed-in user. */
export const secondFactorRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/2fa/setup",
    access: "bearer",
    doc: {
      operationId: "beginTotpSetup",
      tag: "Second factor",
      summary: "Start TOTP enrolment",
      description:
        "The factor stays pending until `2fa/enable`; calling again replaces a pending secret. With `totp.recoveryCodesAtSetup`, also the recovery codes `2fa/enable` will make usable (RC-4); with `reauthentication.unsafeAllowTotpEnrolmentWithoutProof`, no re-authentication (TOTP-7).",
      body: requestObject({ password: passwordProof }),
      data: totpSetupData,
      dataFor: (auth) => (auth.config.totp.recoveryCodesAtSetup ? totpSetupWithCodesData : totpSetupData),
      codes: [40001, 40100, 40900, 42900],
    },
    async handle(context) {
      return { data: await beginTotpSetup(context.auth, { ...reauthentication(context), userId: signedIn(context) }) };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/enable",
    access: "bearer",
    doc: {
      operationId: "enableTotp",
      tag: "Second factor",
      summary: "Turn the pending TOTP factor on with a code from it",
      description: "Ends every other session of the user; this call's session and its tokens go on (SE-2).",
      body: requestObject({ code: requiredText, password: passwordProof }, ["code"]),
      data: answerObject({
        enabled: { const: true },
        recoveryCodes: issuedRecoveryCodes,
      }),
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      const { recoveryCodes } = await enableTotp(context.auth, {
        ...reauthentication(context),
        userId: signedIn(context),
        code: context.body.code as string,
      });
      return { data: { enabled: true, recoveryCodes } };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/disable",
    access: "bearer",
    doc: {
      operationId: "disableTotp",
      tag: "Second factor",
      summary: "Turn TOTP off with the password and a current code",
      description:
        "Needs every factor (STUP-3): the `password` and a current `code`, or either for a factor the session proved at a sign-in or re-authentication within `reauthentication.recentSignIn` (40001 naming what is missing). Ends every other session of the user; this one goes on (SE-2).",
      body: secondFactorChangeBody,
      data: answerObject({ disabled: { const: true } }),
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      await disableTotp(context.auth, secondFactorChangeOf(context));
      return { data: { disabled: true } };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/recovery-codes",
    access: "bearer",
    doc: {
      operationId: "regenerateRecoveryCodes",
      tag: "Second factor",
      summary: "Replace the recovery codes with a new set",
      description:
        "Needs every factor, as `2fa/disable` (STUP-3): the `password` and a current `code`, or what the session recently proved. Ends every other session of the user; this one goes on (SE-2).",
      body: secondFactorChangeBody,
      data: answerObject({ recoveryCodes: issuedRecoveryCodes }),
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      return { data: await regenerateRecoveryCodes(context.auth, secondFactorChangeOf(context)) };
    },
  },
];
