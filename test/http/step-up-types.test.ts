// The step-up options and what requireAuth puts on the request, as types (STUP-1, STUP-2): a
// mistake in an option fails the type check in the user's editor, before any request.
import type { AccessContext, AmrValue, Auth, StepUpOptions } from "@portcullis/core";
import { requireAuth as requireAuthExpress } from "@portcullis/express";
import { requireAuth as requireAuthFastify } from "@portcullis/fastify";
import { requireAuth as requireAuthHono } from "@portcullis/hono";
import { describe, expectTypeOf, it } from "vitest";

describe("step-up types", () => {
  it("STUP-1, ASVS 10.3.4: the request's access context has authTime (epoch seconds) and amr in RFC 8176 values", () => {
    expectTypeOf<AccessContext["authTime"]>().toEqualTypeOf<number>();
    expectTypeOf<AccessContext["amr"]>().toEqualTypeOf<readonly AmrValue[]>();
    // `email` (PL-1) is Portcullis's own: no RFC 8176 value fits a code or link sent by email.
    expectTypeOf<AmrValue>().toEqualTypeOf<"pwd" | "otp" | "hwk" | "swk" | "user" | "fed" | "mfa" | "email">();
  });

  it("STUP-2, ASVS 7.5.3: every adapter's requireAuth takes maxAge, secondFactor and amr; an amr value RFC 8176 does not define here, or a maxAge that is no duration, does not compile", () => {
    const typeOnly = (auth: Auth) => {
      const good: StepUpOptions = { maxAge: "5m", secondFactor: true, amr: ["hwk", "user"] };
      requireAuthExpress(auth, { ...good, roles: ["admin"] });
      requireAuthHono(auth, { maxAge: 300 });
      requireAuthFastify(auth, { secondFactor: true });
      // @ts-expect-error: "sms" is no amr value Portcullis issues
      requireAuthExpress(auth, { amr: ["sms"] });
      // @ts-expect-error: five minutes is "5m" or 300
      requireAuthHono(auth, { maxAge: "5 minutes" });
      // @ts-expect-error: secondFactor is true or false
      requireAuthFastify(auth, { secondFactor: "yes" });
    };
    expectTypeOf(typeOnly).toBeFunction();
  });
});
