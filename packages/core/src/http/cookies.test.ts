import { describe, expect, it } from "vitest";
import { makeAuth } from "../flows/fixtures.test-support.js";
import { cookieValues, deviceCookie, deviceTokenFromCookie } from "./cookies.js";

describe("cookies", () => {
  it("cookieValues finds every value of one name, trimmed, in the order sent, and no other name", () => {
    expect(cookieValues(undefined, "a")).toEqual([]);
    expect(cookieValues("a=1; b=2;a = 3 ; ab=4; xa=5; a=; junk", "a")).toEqual(["1", "3", ""]);
    expect(cookieValues("a=x=y", "a")).toEqual(["x=y"]);
  });

  it("RL-5: the device cookie is __Host-, Secure and on / over TLS; plain and on the auth routes over HTTP; HttpOnly and Strict for the token's lifetime", () => {
    const { auth } = makeAuth({ throttle: { deviceTokenLifetime: "30d" } });
    expect(deviceCookie(auth, "tok", true)).toBe(
      "__Host-portcullis_device=tok; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000; Secure",
    );
    expect(deviceCookie(auth, "tok", false)).toBe(
      "portcullis_device=tok; Path=/api/v1/auth; HttpOnly; SameSite=Strict; Max-Age=2592000",
    );
  });

  it("RL-5, OA-10: over TLS only the __Host- device cookie counts; one sent twice counts as none", () => {
    expect(deviceTokenFromCookie("__Host-portcullis_device=t1; portcullis_device=t2", true)).toBe("t1");
    expect(deviceTokenFromCookie("__Host-portcullis_device=t1; portcullis_device=t2", false)).toBe("t2");
    expect(deviceTokenFromCookie("portcullis_device=t2", true)).toBeUndefined();
    expect(deviceTokenFromCookie("portcullis_device=t2; portcullis_device=planted", false)).toBeUndefined();
    expect(deviceTokenFromCookie(undefined, false)).toBeUndefined();
  });
});
