// The client cannot import @portcullis/core (a browser has no use for argon2 and the rest), so it
// declares the shapes of the contract's data again. These checks fail the type check when the two drift.
import type { AuthUser, PasskeyInfo, SessionInfo, TokenSet } from "@portcullis/client";
import type {
  PasskeyInfo as CorePasskeyInfo,
  SessionInfo as CoreSessionInfo,
  TokenSet as CoreTokenSet,
  PublicUser,
} from "@portcullis/core";
import { describe, expectTypeOf, it } from "vitest";

describe("the client's types of the contract's data", () => {
  it("are core's: the user, the token set, a passkey and a session", () => {
    expectTypeOf<AuthUser>().toEqualTypeOf<PublicUser>();
    expectTypeOf<TokenSet>().toEqualTypeOf<CoreTokenSet>();
    expectTypeOf<PasskeyInfo>().toEqualTypeOf<CorePasskeyInfo>();
    expectTypeOf<SessionInfo>().toEqualTypeOf<CoreSessionInfo>();
  });
});
