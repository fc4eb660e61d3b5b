import { createAuthClient } from "@portcullis/client";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { AuthProvider, usePasskeys, useSession, useSessions, useSignIn, useStepUp } from "./index.js";

/** A component that renders what each hook answers, as JSON. */
function EveryHook() {
  const session = useSession();
  const signIn = useSignIn();
  const passkeys = usePasskeys();
  const sessions = useSessions();
  const stepUp = useStepUp();
  return createElement(
    "pre",
    null,
    JSON.stringify({
      session,
      signIn: { step: signIn.step, pending: signIn.pending, error: signIn.error },
      passkeys: { passkeys: passkeys.passkeys, loading: passkeys.loading, supported: passkeys.supported },
      sessions: { sessions: sessions.sessions, loading: sessions.loading },
      stepUp,
    }),
  );
}

describe("server rendering", () => {
  it("runs in Node with no DOM: every hook answers its loading or empty state, and nothing is fetched or stored", async () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe("undefined");
    expect(typeof (globalThis as { document?: unknown }).document).toBe("undefined");
    const fetched: string[] = [];
    const stored: string[] = [];
    const client = createAuthClient({
      baseUrl: "https://api.example.com/api/v1",
      fetch: async (input) => {
        fetched.push(String(input));
        return new Response("{}");
      },
      store: {
        load: async () => {
          stored.push("load");
          return null;
        },
        save: async () => {
          stored.push("save");
        },
      },
    });
    const html = renderToString(createElement(AuthProvider, { client }, createElement(EveryHook)));
    const rendered = JSON.parse(
      html
        .replace(/^<pre>|<\/pre>$/g, "")
        .replaceAll("&quot;", '"')
        .replaceAll("&amp;", "&"),
    );
    expect(rendered).toEqual({
      session: { status: "loading", user: null },
      signIn: { step: "credentials", pending: false, error: null },
      passkeys: { passkeys: [], loading: true, supported: false },
      sessions: { sessions: [], loading: true },
      stepUp: null,
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(fetched).toEqual([]);
    expect(stored).toEqual([]);
  });

  it("says where the provider is missing", () => {
    expect(() => renderToString(createElement(EveryHook))).toThrow(/inside an <AuthProvider/);
  });
});
