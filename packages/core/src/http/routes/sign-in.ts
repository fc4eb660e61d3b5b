import type { Auth } from "../../auth.js";
import { tokenDeliveryParameter } from "../../cookie-sessions/refresh-cookie.js";
import { login } from "../../flows/login.js";
import { type RegisterInput, register } from "../../flows/register.js";
import { useRecoveryCode } from "../../flows/use-recovery-code.js";
import { verifyTotp } from "../../flows/verify-totp.js";
import { type BeginPasskeySignUpInput, beginPasskeySignUp, finishPasskeySignUp } from "../../passwordless/passkey-sign-up.js";
import { ceremonyHeader } from "../../webauthn/ceremony.js";
import {
  ceremonyStartData,
  enrolmentTokenData,
  requestObject,
  requiredText,
  schemaRef,
  tempTokenData,
  userFieldsBody,
} from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { ceremonyParameter, passkeysEnabled, webauthnBodyLimit } from "./passkeys.js";
import { deviceTokenOf, loginResponse, setsDeviceCookie, signedInResponse } from "./shared.js";

/** Whether a sign-up with a passkey may happen: sign-up on and passkeys configured (PL-17). */
const passkeySignUpEnabled = (auth: Auth) => auth.config.signUp.enabled && passkeysEnabled(auth);

const signUpEmail = {
  type: "string",
  maxLength: 254,
  description: "An address (at most 254 characters, one `@`, no spaces or control characters), stored unverified",
} as const;

/**
 * Sign-in with a password (local or directory), the second-factor step that completes a 40102
 * answer, and sign-up (whose new account may be asked to enrol a second factor: 40105).
 */
export const signInRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/login",
    access: "public",
    doc: {
      operationId: "login",
      tag: "Sign-in",
      summary: "Sign in with a username and password",
      description:
        'Local accounts, or the directory with `provider: "directory"` (or first, under the policy\'s `loginOrder: "directory-first"`). A user with TOTP gets 40102 with a temporary token for `2fa/verify` or `2fa/recovery`; a user who must have a second factor and has none, 40105 with one for `2fa/enrolment/*` or `public-key/enrolment/*` (STUP-4); one whose second factor is a passkey, 40300.',
      body: requestObject(
        {
          username: requiredText,
          password: requiredText,
          provider: { enum: ["local", "directory"] },
          deviceToken: {
            type: "string",
            description:
              "The `deviceToken` of an earlier sign-in of this client, for clients without cookies (RL-5): its failures spend a budget of their own",
          },
        },
        ["username", "password"],
      ),
      data: schemaRef("TokenSet"),
      secondFactor: tempTokenData,
      enrolment: enrolmentTokenData,
      parameters: [tokenDeliveryParameter],
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40300, 40400, 40900, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip } = context;
      const result = await login(auth, {
        username: body.username as string,
        password: body.password as string,
        provider: body.provider as string,
        deviceToken: deviceTokenOf(context),
        ip,
        userAgent: context.header("user-agent"),
      });
      return loginResponse(context, result);
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/verify",
    access: "public",
    doc: {
      operationId: "verifyTotp",
      tag: "Sign-in",
      summary: "Complete a 40102 sign-in with a TOTP code",
      body: requestObject({ tempToken: requiredText, code: { ...requiredText, description: "Six digits" } }, [
        "tempToken",
        "code",
      ]),
      data: schemaRef("TokenSet"),
      parameters: [tokenDeliveryParameter],
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40103, 40300, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip, header } = context;
      const input = { tempToken: body.tempToken as string, code: body.code as string, ip, userAgent: header("user-agent") };
      return signedInResponse(context, await verifyTotp(auth, input));
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/recovery",
    access: "public",
    doc: {
      operationId: "useRecoveryCode",
      tag: "Sign-in",
      summary: "Complete a 40102 sign-in with a one-time recovery code",
      body: requestObject({ tempToken: requiredText, recoveryCode: requiredText }, ["tempToken", "recoveryCode"]),
      data: schemaRef("TokenSet"),
      parameters: [tokenDeliveryParameter],
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40103, 40300, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip } = context;
      const tokens = await useRecoveryCode(auth, {
        tempToken: body.tempToken as string,
        recoveryCode: body.recoveryCode as string,
        ip,
        userAgent: context.header("user-agent"),
      });
      return signedInResponse(context, tokens);
    },
  },
  {
    method: "POST",
    path: "/auth/register",
    access: "public",
    enabled: (auth) => auth.config.signUp.enabled,
    doc: {
      operationId: "register",
      tag: "Sign-in",
      summary: "Make an account and sign it in (sign-up)",
      description:
        "Only with `signUp.enabled` (40400 otherwise). Where `secondFactor.required` names the new account, 40105 with a temporary token to enrol one (STUP-4). The account gets `signUp.defaultRoles`; no role, id or state is read from the body (SU-1). `email` is stored unverified, whoever else has it (EV-1: only the address's own token verifies it); one that is not an address is 40002. `fields` takes the additional user fields declared `signUp: true`; the others get their defaults. Each client address may sign up `throttle.unauthenticatedWrites` times, refusals included (RL-7).",
      body: requestObject(
        {
          username: requiredText,
          password: { ...requiredText, description: "Checked against the password policy (PW-3)" },
          email: signUpEmail,
          fields: userFieldsBody("only those declared `signUp: true`"),
        },
        ["username", "password"],
      ),
      data: schemaRef("TokenSet"),
      enrolment: enrolmentTokenData,
      parameters: [tokenDeliveryParameter],
      setsCookie: setsDeviceCookie,
      codes: [40001, 40002, 40400, 40900, 42200, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip } = context;
      const result = await register(auth, {
        username: body.username as string,
        password: body.password as string,
        email: body.email as string | undefined,
        ip,
        userAgent: context.header("user-agent"),
        acceptLanguage: context.header("accept-language"),
        fields: body.fields as RegisterInput["fields"],
      });
      return loginResponse(context, result);
    },
  },
  {
    method: "POST",
    path: "/auth/register/public-key/begin",
    access: "public",
    enabled: passkeySignUpEnabled,
    doc: {
      operationId: "beginPasskeySignUp",
      tag: "Sign-in",
      summary: "Begin making an account whose way in is a passkey (sign-up without a password)",
      description:
        "Only with `signUp.enabled` and `passkeys` configured (40400 otherwise). The body is checked as `POST /auth/register`'s; then one attempt from the client address's `throttle.unauthenticatedWrites` (RL-7), refusals included; a taken username is 40900 here already. Nothing but the ceremony is stored; its creation options ask for a discoverable passkey (resident key required) with a user handle of 32 random bytes. No role, id or state is read from the body (SU-1).",
      body: requestObject(
        {
          username: requiredText,
          email: signUpEmail,
          label: { type: "string", description: 'What the person calls the passkey, 1 to 64 characters; default "Passkey"' },
          fields: userFieldsBody("only those declared `signUp: true`"),
        },
        ["username"],
      ),
      data: ceremonyStartData("CredentialCreationOptions"),
      codes: [40001, 40002, 40400, 40900, 42200, 42900],
    },
    async handle({ auth, body, ip }) {
      const input: BeginPasskeySignUpInput = {
        username: body.username as string,
        email: body.email as string | undefined,
        label: body.label as string | undefined,
        fields: body.fields as BeginPasskeySignUpInput["fields"],
        ip,
      };
      return { data: await beginPasskeySignUp(auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/register/public-key/finish",
    access: "public",
    enabled: passkeySignUpEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "finishPasskeySignUp",
      tag: "Sign-in",
      summary: "Make the account with the browser's attestation, and sign it in",
      description:
        "Bodies up to 1 MiB. The ceremony is spent first (WA-1); the passkey is verified as a registration's, then the account and its passkey are stored as one, or nothing is (40900: the username taken meanwhile, or the passkey registered already). Answers as `POST /auth/register`: the token set, or 40105 where a second factor is required and the passkey did not verify the user (STUP-4).",
      parameters: [ceremonyParameter, tokenDeliveryParameter],
      body: schemaRef("RegistrationResponse"),
      data: schemaRef("TokenSet"),
      enrolment: enrolmentTokenData,
      setsCookie: setsDeviceCookie,
      codes: [40002, 40100, 40400, 40900, 50300],
    },
    async handle(context) {
      const { auth, body, header, ip } = context;
      const result = await finishPasskeySignUp(auth, {
        ceremonyId: header(ceremonyHeader) as string,
        response: body,
        ip,
        userAgent: header("user-agent"),
        acceptLanguage: header("accept-language"),
      });
      return loginResponse(context, result);
    },
  },
];
