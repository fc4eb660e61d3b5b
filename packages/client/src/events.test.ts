import { describe, expect, it, vi } from "vitest";
import { createAuthClient } from "./client.js";
import { createClientEvents } from "./events.js";
import { scriptedBaseUrl, scriptedServer, scriptedUser, tokenSet } from "./scripted-server.test-support.js";

describe("client events", () => {
  it("every listener of an event is called, in order, until it unsubscribes", () => {
    const events = createClientEvents();
    const calls: string[] = [];
    const stopFirst = events.on("signedOut", ({ reason }) => calls.push(`first ${reason}`));
    events.on("signedOut", ({ reason }) => calls.push(`second ${reason}`));
    events.emit("signedOut", { reason: "logout" });
    stopFirst();
    events.emit("signedOut", { reason: "session_ended" });
    expect(calls).toEqual(["first logout", "second logout", "second session_ended"]);
  });

  it("a listener that throws goes to onListenerError and the others still run; a throwing reporter is ignored", () => {
    const failure = new Error("listener bug");
    const reported = vi.fn();
    const events = createClientEvents(reported);
    const after = vi.fn();
    events.on("signedIn", () => {
      throw failure;
    });
    events.on("signedIn", after);
    events.emit("signedIn", { user: scriptedUser });
    expect(reported).toHaveBeenCalledWith(failure, "signedIn");
    expect(after).toHaveBeenCalledOnce();

    const broken = createClientEvents(() => {
      throw new Error("reporter bug");
    });
    broken.on("signedIn", () => {
      throw failure;
    });
    expect(() => broken.emit("signedIn", { user: scriptedUser })).not.toThrow();
  });

  it("an event without listeners calls nothing, not even onListenerError, and a sign-in carries on", async () => {
    const onListenerError = vi.fn();
    const server = scriptedServer(() => ({ code: 0, data: tokenSet(1) }));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, onListenerError });
    expect(await client.login({ username: "alice", password: "pw" })).toEqual({
      status: "authenticated",
      user: scriptedUser,
      offerPasskey: false,
    });
    expect(onListenerError).not.toHaveBeenCalled();
  });
});
