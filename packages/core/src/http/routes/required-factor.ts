import type { Auth } from "../../auth.js";
import { tokenDeliveryParameter } from "../../cookie-sessions/refresh-cookie.js";
import { beginPasskeyEnrolment, finishPasskeyEnrolment, passkeyEnrolmentOffered } from "../../required-factor/enrol-passkey.js";
import { beginTotpEnrolment, finishTotpEnrolment } from "../../required-factor/enrol-totp.js";
import { ceremonyHeader } from "../../webauthn/ceremony.js";
import {
  answerObject,
  ceremonyStartData,
  passkeyEnrolledData,
  requestObject,
  requiredText,
  schemaRef,
  totpEnrolledData,
} from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { setsDeviceCookie, signedInResponse } from "./shared.js";

/** The enrolment routes exist only where the operator requires a second factor of someone (STUP-4). */
const enrolmentEnabled = (auth: Auth) => auth.config.secondFactor.required !== null;

/** And those of a passkey only where a passkey is a second factor: passkeys requiring user verification. */
const passkeyEnrolmentEnabled = (auth: Auth) => enrolmentEnabled(auth) && passkeyEnrolmentOffered(auth);

const enrolmentToken = { ...requiredText, description: "The `tempToken` of the 40105 answer" };

/** The body limit of the passkey enrolment's finish (contract: 1 MiB for WebAuthn finish). */
const webauthnBodyLimit = 1024 * 1024;

/**
 * The enrolment a 40105 answer asks for (STUP-4): with its temporary token, and nothing else,
 * TOTP or a passkey is enrolled and the sign-in completes. Access tokens are not accepted here
 * (a signed-in user enrols with `2fa/setup` and `public-key/register/*`), and the temporary token
 * is accepted nowhere else.
 */
export const requiredFactorRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/2fa/enrolment/setup",
    access: "public",
    enabled: enrolmentEnabled,
    doc: {
      operationId: "beginTotpEnrolment",
      tag: "Sign-in",
      summary: "Start enrolling TOTP with the temporary token of a 40105 answer",
      description:
        "The factor stays pending until `2fa/enrolment/enable`; calling again replaces a pending secret. Every request with the token takes one of its `secondFactor.enrolmentAttempts`.",
      body: requestObject({ tempToken: enrolmentToken }, ["tempToken"]),
      data: answerObject({
        secret: { type: "string", description: "Base32, for typing in" },
        otpauthUrl: { type: "string", description: "The `otpauth://totp/…` URI, for a QR code" },
      }),
      codes: [40001, 40100, 40900, 42900, 50300],
    },
    async handle({ auth, body, ip }) {
      return { data: await beginTotpEnrolment(auth, { tempToken: body.tempToken as string, ip }) };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/enrolment/enable",
    access: "public",
    enabled: enrolmentEnabled,
    doc: {
      operationId: "finishTotpEnrolment",
      tag: "Sign-in",
      summary: "Turn the pending TOTP factor on with a code from it, and complete the 40105 sign-in",
      description:
        "Answers the token set of a new session with the ten recovery codes, shown this once. Spends the temporary token; every session the user had ends.",
      body: requestObject({ tempToken: enrolmentToken, code: { ...requiredText, description: "Six digits" } }, [
        "tempToken",
        "code",
      ]),
      data: totpEnrolledData,
      parameters: [tokenDeliveryParameter],
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40103, 40900, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip, header } = context;
      const { tokens, recoveryCodes } = await finishTotpEnrolment(auth, {
        tempToken: body.tempToken as string,
        code: body.code as string,
        ip,
        userAgent: header("user-agent"),
      });
      const answer = await signedInResponse(context, tokens);
      return { ...answer, data: { ...(answer.data as object), recoveryCodes } };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/enrolment/begin",
    access: "public",
    enabled: passkeyEnrolmentEnabled,
    doc: {
      operationId: "beginPasskeyEnrolment",
      tag: "Sign-in",
      summary: "Begin registering a passkey with the temporary token of a 40105 answer",
      description:
        'Only where passkeys require user verification (`passkeys.userVerification: "required"`): a passkey is then a second factor.',
      body: requestObject({ tempToken: enrolmentToken, label: requiredText }, ["tempToken", "label"]),
      data: ceremonyStartData("CredentialCreationOptions"),
      codes: [40001, 40100, 42200, 42900, 50300],
    },
    async handle({ auth, body, ip }) {
      const input = { tempToken: body.tempToken as string, label: body.label as string, ip };
      return { data: await beginPasskeyEnrolment(auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/enrolment/finish",
    access: "public",
    enabled: passkeyEnrolmentEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "finishPasskeyEnrolment",
      tag: "Sign-in",
      summary: "Finish registering the passkey, and complete the 40105 sign-in",
      description:
        "Bodies up to 1 MiB: the temporary token beside the browser's attestation. Answers the token set of a new session with the passkey. Spends the temporary token; every session the user had ends.",
      parameters: [
        {
          name: "X-WebAuthn-Ceremony",
          in: "header",
          required: true,
          description: "The `ceremonyId` the begin step answered; without it, 40002",
        },
        tokenDeliveryParameter,
      ],
      body: requestObject({ tempToken: enrolmentToken, response: schemaRef("RegistrationResponse") }, ["tempToken", "response"]),
      data: passkeyEnrolledData,
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40900, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip, header } = context;
      const { tokens, passkey } = await finishPasskeyEnrolment(auth, {
        tempToken: body.tempToken as string,
        ceremonyId: header(ceremonyHeader) as string,
        response: body.response,
        ip,
        userAgent: header("user-agent"),
      });
      const answer = await signedInResponse(context, tokens);
      return { ...answer, data: { ...(answer.data as object), passkey } };
    },
  },
];
