import { type Auth, type OpenApiDocument, openApiDocument, routes, servesPath } from "@portcullis/core";
import type { ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import { envelopeStatus } from "../../packages/core/src/http/envelope.js";
import { normalizePath } from "../../packages/core/src/http/handle-request.js";
import { type OperationShape, pointerTo, schemaValidators } from "../../packages/core/src/http/openapi.test-support.js";
import { type RecordedExchange, recordedExchanges } from "./client.js";

/** A document's operations, ready to match requests, and its schemas' validators. */
interface DocumentCheck {
  operations: { method: string; template: string; segments: string[]; operation: OperationShape }[];
  validatorAt: (pointer: string) => ValidateFunction;
}

/** Checks by document text: the many auths of one configuration share one, so each schema is compiled once. */
const checksByText = new Map<string, DocumentCheck>();
const checksByAuth = new WeakMap<Auth, DocumentCheck>();

function checkOf(document: OpenApiDocument): DocumentCheck {
  const operations = Object.entries(document.paths).flatMap(([template, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      segments: template.split("/"),
      operation: operation as OperationShape,
    })),
  );
  return { operations, validatorAt: schemaValidators(document) };
}

function checkFor(auth: Auth): DocumentCheck {
  let check = checksByAuth.get(auth);
  if (!check) {
    const document = openApiDocument(auth);
    const text = JSON.stringify(document);
    check = checksByText.get(text) ?? checkOf(document);
    checksByText.set(text, check);
    checksByAuth.set(auth, check);
  }
  return check;
}

/** Whether a normalised path fits a path template: `{name}` stands for one non-empty segment. */
function fits(segments: string[], path: string): boolean {
  const actual = path.split("/");
  return (
    actual.length === segments.length && segments.every((segment, index) => segment.startsWith("{") || segment === actual[index])
  );
}

/** What checking one exchange found: the operation it exercised and the code it answered, or a problem. */
type Verdict =
  | { kind: "operation"; operationId: string; code: number | undefined }
  | { kind: "unknown route" }
  | { kind: "not ours"; why: string }
  | { kind: "problem"; problem: string };

const errorsOf = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message}`).join("; ");

/** What Fastify's default `clientErrorHandler` writes for a request Node's HTTP parser refused. */
const fastifyClientErrorBody = '{"error":"Bad Request","message":"Client Error","statusCode":400}';

/** The codes handleRequest answers before it looks for a route, and for a path no route has. */
const beforeAnyRoute = new Set([40300, 40400, 50000]);

/**
 * Checks one exchange against the document of the server's auth, as the server matches routes:
 * the same path normalisation, the operation for the method and path, the status among its
 * responses, the headers it requires, and the JSON body against the schema of that status.
 */
function verdictOf(exchange: RecordedExchange): Verdict {
  const { server, method, target, result } = exchange;
  const auth = server.auth;
  if (!auth) return { kind: "problem", problem: "the server was not started by test/http/servers.ts: its auth is unknown" };
  if (!servesPath(auth, target)) return { kind: "not ours", why: "the app's own route" };
  const refusedByServer = result.text === "" || result.text === fastifyClientErrorBody;
  if (result.status === 400 && refusedByServer && !result.headers.has("x-content-type-options")) {
    // Node's HTTP parser (and @hono/node-server, and Fastify's default clientErrorHandler, which
    // answers in its own JSON) refuse some malformed requests before any adapter runs.
    return { kind: "not ours", why: "refused by the HTTP server before the adapter" };
  }
  const check = checkFor(auth);
  const path = normalizePath(target);
  const found = check.operations.find((candidate) => candidate.method === method && fits(candidate.segments, path));
  if (!found) {
    const code = result.body?.code;
    const valid = check.validatorAt(pointerTo("components", "schemas", "Error"))(result.body);
    if (valid && beforeAnyRoute.has(code) && result.status === envelopeStatus(auth, code)) return { kind: "unknown route" };
    return { kind: "problem", problem: `no operation of the document is ${method} ${path}` };
  }
  const { operation, template } = found;
  const response = operation.responses[String(result.status)];
  if (!response) return { kind: "problem", problem: `status ${result.status} is not documented for ${operation.operationId}` };
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    if (header.required && !result.headers.has(name))
      return { kind: "problem", problem: `the required header ${name} is missing` };
  }
  if (response.content) {
    if (!result.headers.get("content-type")?.startsWith("application/json")) {
      return { kind: "problem", problem: `content-type ${result.headers.get("content-type")} is not the documented JSON` };
    }
    const pointer = pointerTo(
      "paths",
      template,
      method.toLowerCase(),
      "responses",
      String(result.status),
      "content",
      "application/json",
      "schema",
    );
    const validate = check.validatorAt(pointer);
    if (!validate(result.body)) return { kind: "problem", problem: `the body does not fit ${pointer}: ${errorsOf(validate)}` };
  }
  return { kind: "operation", operationId: operation.operationId, code: result.body?.code };
}

/** What the exchanges of a test file came to. */
export interface DriftReport {
  checked: number;
  unknownRoutes: number;
  notOurs: Record<string, number>;
  problems: string[];
  /** Business codes answered, by operationId. */
  exercised: Map<string, Set<number | undefined>>;
}

/** Checks every exchange recorded so far in this test file. */
export function checkRecordedExchanges(exchanges: readonly RecordedExchange[] = recordedExchanges): DriftReport {
  const report: DriftReport = { checked: 0, unknownRoutes: 0, notOurs: {}, problems: [], exercised: new Map() };
  for (const exchange of exchanges) {
    const verdict = verdictOf(exchange);
    if (verdict.kind === "operation") {
      report.checked += 1;
      const codes = report.exercised.get(verdict.operationId) ?? new Set();
      report.exercised.set(verdict.operationId, codes.add(verdict.code));
    } else if (verdict.kind === "unknown route") report.unknownRoutes += 1;
    else if (verdict.kind === "not ours") report.notOurs[verdict.why] = (report.notOurs[verdict.why] ?? 0) + 1;
    else {
      const { method, target, result } = exchange;
      report.problems.push(`${method} ${target} → ${result.status} ${result.text.slice(0, 300)}\n  ${verdict.problem}`);
    }
  }
  return report;
}

/** Every operationId of the route table. */
export const allOperationIds = routes.map((route) => route.doc.operationId);

/**
 * The OpenAPI drift check of a test file of `test/http`, as its last `describe`: every answer its
 * tests received on a Portcullis path must be an operation, status and body the document of the
 * server's configuration describes (or the 40400 of a path no operation has), and the file must
 * have exercised the operations it is expected to. With `OPENAPI_DRIFT_REPORT=1` in the
 * environment it prints what was checked and which operations were never exercised; otherwise a
 * passing check prints nothing, and a failing one says what drifted in its assertion.
 *
 * @param expected `exercises`: the operationIds the file must exercise; `elsewhere`: those it
 *   does not, each with the file that does, and every other operation is then expected.
 */
export function describeOpenApiDrift(expected: { exercises: string[] } | { elsewhere: Record<string, string> }): void {
  describe("OpenAPI drift: the answers of the tests above match the document of the server's configuration", () => {
    it("every answer on a Portcullis path is a documented operation, status and body, and the expected operations were exercised", () => {
      const report = checkRecordedExchanges();
      const never = allOperationIds.filter((id) => !report.exercised.has(id));
      const codes = [...report.exercised.values()].reduce((sum, seen) => sum + seen.size, 0);
      if (process.env.OPENAPI_DRIFT_REPORT) {
        console.info(
          `OpenAPI drift: ${report.checked} answers checked against ${report.exercised.size} of ${allOperationIds.length} operations ` +
            `(${codes} operation and code pairs), ${report.unknownRoutes} answers to paths no operation has, ` +
            `not Portcullis's: ${JSON.stringify(report.notOurs)}; never exercised here: ${never.join(", ") || "none"}`,
        );
      }
      expect(report.problems.slice(0, 20)).toEqual([]);
      const required = "exercises" in expected ? expected.exercises : allOperationIds.filter((id) => !(id in expected.elsewhere));
      expect(required.filter((id) => !report.exercised.has(id))).toEqual([]);
      if ("elsewhere" in expected)
        expect(Object.keys(expected.elsewhere).filter((id) => !allOperationIds.includes(id))).toEqual([]);
    });
  });
}
