import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuth } from "../auth.js";
import { addUser, audience, encryptionKey, issuer, makeAuth, signingSecret } from "../flows/fixtures.test-support.js";
import { handleRequest } from "../http/handle-request.js";
import type { HttpRequest } from "../http/types.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import { describeInternalError, printInternalError } from "./operator-lines.js";

const password = "Tr0ub4dor&3-never-logged";

/** What the test captures of stderr while `run` runs. */
async function stderrOf(run: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines.join("");
}

/** Memory storage whose user lookups fail as a database without its tables does. */
function brokenStorage(): Storage {
  const storage = memoryStorage();
  const failure = () => {
    const error = new Error('relation "portcullis_users" does not exist');
    error.name = "DatabaseError";
    return Promise.reject(error);
  };
  return { ...storage, users: { ...storage.users, findByUsernameKey: failure, findById: failure } };
}

function loginRequest(body: string): HttpRequest {
  return {
    method: "POST",
    url: "/api/v1/auth/login",
    header: (name) => ({ "content-type": "application/json" })[name],
    body: {
      async *[Symbol.asyncIterator]() {
        yield new TextEncoder().encode(body);
      },
    },
    peerAddress: "127.0.0.1",
    secure: false,
  };
}

const config = {
  issuer,
  audience,
  secrets: { signing: signingSecret, encryption: encryptionKey },
  sweepInterval: false as const,
};

afterEach(() => vi.restoreAllMocks());

describe("onInternalError's default", () => {
  it("HTTP-6: prints one line per internal error with the request id, class, message and stack, and nothing the client sent", async () => {
    const auth = createAuth({ ...config, storage: brokenStorage() });
    let requestId: string | undefined;
    const printed = await stderrOf(async () => {
      const response = await handleRequest(auth, loginRequest(JSON.stringify({ username: "alice", password })));
      const envelope = JSON.parse(response?.body ?? "{}") as { code: number; requestId?: string };
      expect(envelope.code).toBe(50000);
      requestId = envelope.requestId;
    });
    expect(requestId).toMatch(/^[A-Za-z0-9_-]{12}$/);
    const lines = printed.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      `[portcullis] internal error, request ${requestId}: DatabaseError: relation "portcullis_users" does not exist`,
    );
    expect(lines[0]).toMatch(/ \| at .*operator-lines\.test\.ts:\d+:\d+/);
    expect(printed).not.toContain(password);
    expect(printed).not.toContain("alice");
  });

  it("is replaced by the option, and silenced by a function that does nothing", async () => {
    const reported: [unknown, string][] = [];
    const replaced = createAuth({
      ...config,
      storage: brokenStorage(),
      onInternalError: (error, id) => reported.push([error, id]),
    });
    const silenced = createAuth({ ...config, storage: brokenStorage(), onInternalError: () => {} });
    const printed = await stderrOf(async () => {
      await handleRequest(replaced, loginRequest(JSON.stringify({ username: "alice", password })));
      await handleRequest(silenced, loginRequest(JSON.stringify({ username: "alice", password })));
    });
    expect(printed).toBe("");
    expect(reported).toHaveLength(1);
    expect(String(reported[0]?.[0])).toContain("does not exist");
  });

  it("refuses an onInternalError that is not a function, saying how to silence it", () => {
    expect(() => createAuth({ ...config, storage: memoryStorage(), onInternalError: false as never })).toThrow(
      "onInternalError must be a function (error, requestId) => void; pass () => {} to silence it",
    );
  });

  it("says nothing for refusals that are not internal errors", async () => {
    const { auth } = makeAuth({ onInternalError: undefined });
    await addUser(auth, "alice");
    const printed = await stderrOf(() => handleRequest(auth, loginRequest(JSON.stringify({ username: "alice", password }))));
    expect(printed).toBe("");
  });
});

describe("describeInternalError", () => {
  it("keeps the line to one line, follows the causes, and names a thrown non-error by its type only", () => {
    const cause = new Error("connect ECONNREFUSED 127.0.0.1:5432\nsecond line");
    const line = describeInternalError(new Error("Storage is unavailable", { cause }), "abc");
    expect(line).toMatch(
      /^internal error, request abc: Error: Storage is unavailable \| at .* \| caused by Error: connect ECONNREFUSED/,
    );
    expect(describeInternalError({ password }, "abc")).toBe("internal error, request abc: thrown object");
    expect(describeInternalError(password, "abc")).toBe("internal error, request abc: thrown string");
  });

  it("follows at most five errors of the cause chain, a cycle included", () => {
    let chain = new Error("error 7");
    for (let n = 6; n >= 1; n--) chain = new Error(`error ${n}`, { cause: chain });
    const line = describeInternalError(chain, "abc");
    expect(line.match(/Error: error \d/g)).toEqual([
      "Error: error 1",
      "Error: error 2",
      "Error: error 3",
      "Error: error 4",
      "Error: error 5",
    ]);
    const cycle = new Error("again");
    cycle.cause = cycle;
    expect(describeInternalError(cycle, "abc").match(/Error: again/g)).toHaveLength(5);
  });

  it("takes stack frames only from an error's own string stack", () => {
    expect(describeInternalError({ stack: "Error\n    at sent by the client" }, "abc")).toBe(
      "internal error, request abc: thrown object",
    );
    const stackless = new Error("no stack");
    stackless.stack = undefined;
    expect(describeInternalError(stackless, "abc")).toBe("internal error, request abc: Error: no stack");
  });
});

describe("printInternalError", () => {
  it("writes one line, each run of line breaks and the spaces around them made one space", async () => {
    const error = new Error("first line  \r\n\n  second line\nthird");
    error.stack = undefined;
    const printed = await stderrOf(async () => printInternalError(error, "abc"));
    expect(printed).toBe("[portcullis] internal error, request abc: Error: first line second line third\n");
  });
});
