import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { post } from "./client.js";
import { describeContract } from "./contract-suite.js";
import { type MalformedContext, malformedCases } from "./malformed-cases.js";
import {
  type RunningServer,
  startExpress4,
  startExpress4ParsingJson,
  startExpress5,
  startExpress5ParsingJson,
  startHono,
} from "./servers.js";

describeContract("Express 5", startExpress5);
describeContract("Express 4", startExpress4);
describeContract("Hono on @hono/node-server", startHono);
describeContract("Express 5 behind express.json()", startExpress5ParsingJson, { bodyParsedEarlier: true });
describeContract("Express 4 behind express.json()", startExpress4ParsingJson, { bodyParsedEarlier: true });

describe("HTTP-5: the malformed table gets identical answers from every adapter", () => {
  const testAuth = makeTestAuth({ throttle: generousThrottle });
  const servers: [string, RunningServer][] = [];
  const context: MalformedContext = { token: "", userId: "", bodyParsedEarlier: false };

  beforeAll(async () => {
    for (const [name, start] of [
      ["Express 5", startExpress5],
      ["Express 4", startExpress4],
      ["Hono", startHono],
    ] as const) {
      servers.push([name, await start(testAuth.auth)]);
    }
    const user = await createTestUser(testAuth.auth, "mallory");
    const signedIn = await post(servers[0]![1], "/api/v1/auth/login", { username: "mallory", password: testPassword });
    context.token = signedIn.body.data.accessToken;
    context.userId = user.id;
  });
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()));
  });

  for (const testCase of malformedCases) {
    it(testCase.name, async () => {
      const answers: Record<string, unknown> = {};
      for (const [name, server] of servers) {
        const result = await testCase.send(server, context);
        answers[name] = {
          status: result.status,
          body: result.text,
          contentType: result.headers.get("content-type"),
          cacheControl: result.headers.get("cache-control"),
          nosniff: result.headers.get("x-content-type-options"),
        };
      }
      const [first, ...others] = Object.values(answers);
      expect(JSON.parse((first as { body: string }).body).code).toBe(testCase.code);
      for (const other of others) expect(other).toEqual(first);
    });
  }
});
