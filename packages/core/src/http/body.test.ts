import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { readFormBody, readJsonBody } from "./body.js";
import type { HttpRequest } from "./types.js";

const limit = 64 * 1024;

/** A JSON object holding arrays nested `depth` deep: `{"deep":[[[…]]]}`. */
function nestedText(depth: number): string {
  return `{"deep":${"[".repeat(depth)}${"]".repeat(depth)}}`;
}

function streamed(text: string, headers: Record<string, string | undefined> = {}): HttpRequest {
  const all: Record<string, string | undefined> = { "content-type": "application/json", ...headers };
  return {
    method: "POST",
    url: "/api/v1/auth/refresh",
    header: (name) => all[name],
    body: (async function* () {
      yield new TextEncoder().encode(text);
    })(),
    peerAddress: "127.0.0.1",
    secure: true,
  };
}

/** A request whose body an earlier middleware (`express.json()`, `c.req.json()`) already parsed. */
function preParsed(value: unknown): HttpRequest {
  return { ...streamed(""), body: null, parsedBody: value };
}

async function refusal(request: HttpRequest, bodyLimit = limit): Promise<AuthError> {
  const error = await readJsonBody(request, bodyLimit).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AuthError);
  expect((error as AuthError).code).toBe(40002);
  return error as AuthError;
}

describe("readJsonBody", () => {
  it("HTTP-2: application/json in any case, with parameters and surrounding whitespace, is read; any other type is 40002", async () => {
    for (const type of [
      "application/json",
      "Application/JSON",
      "application/json;charset=utf-8",
      "application/json ; charset=utf-8",
      " application/json\t",
    ]) {
      expect(await readJsonBody(streamed('{"a":1}', { "content-type": type }), limit), type).toEqual({ a: 1 });
    }
    for (const type of [
      "application/json-seq",
      "application/jsonp",
      "x-application/json",
      "text/plain; profile=application/json",
      "application/x-json",
      "text/plain",
      "",
      undefined,
    ]) {
      const error = await refusal(streamed('{"a":1}', { "content-type": type }));
      expect(error.message, String(type)).toBe("The request body must be application/json");
    }
  });

  it("HTTP-1: a streamed body of exactly the limit is read; one byte more is 40002 (too large)", async () => {
    const text = JSON.stringify({ pad: "a".repeat(100) });
    expect(await readJsonBody(streamed(text), text.length)).toEqual(JSON.parse(text));
    expect((await refusal(streamed(text), text.length - 1)).message).toBe("The request body is too large");
  });

  it("HTTP-1: a Content-Length over the limit is refused before the body is read; one at the limit is read", async () => {
    const text = '{"a":1}';
    let read = false;
    const request = streamed(text, { "content-length": String(text.length + 1) });
    const body = request.body as AsyncIterable<Uint8Array>;
    request.body = {
      [Symbol.asyncIterator]: () => {
        read = true;
        return body[Symbol.asyncIterator]();
      },
    };
    expect((await refusal(request, text.length)).message).toBe("The request body is too large");
    expect(read).toBe(false);
    expect(await readJsonBody(streamed(text, { "content-length": String(text.length) }), text.length)).toEqual({ a: 1 });
  });

  it("HTTP-1: a streamed body is measured in the bytes that arrived, not re-serialised", async () => {
    // 1E20 is four bytes as sent and 21 once JSON.stringify writes it out.
    const text = '{"n":[1E20,1E20]}';
    expect(await readJsonBody(streamed(text), text.length)).toEqual({ n: [1e20, 1e20] });
  });

  it("HTTP-1: a pre-parsed body of exactly the limit as JSON is read; one byte more is 40002 (too large)", async () => {
    const value = { pad: "a".repeat(100) };
    const size = JSON.stringify(value).length;
    expect(await readJsonBody(preParsed(value), size)).toEqual(value);
    expect((await refusal(preParsed(value), size - 1)).message).toBe("The request body is too large");
  });

  it("HTTP-5: a body that is not JSON is 40002, saying so", async () => {
    for (const text of ["{", "{username: 1}", "undefined"]) {
      expect((await refusal(streamed(text))).message, text).toBe("The request body is not valid JSON");
    }
  });

  it("a body of only whitespace reads as {}, like an empty one", async () => {
    expect(await readJsonBody(streamed(" \r\n\t "), limit)).toEqual({});
    expect(await readJsonBody(streamed(""), limit)).toEqual({});
  });

  it("HTTP-5: a pre-parsed body nested 5,000 deep is 40002 (too deep), not a RangeError from JSON.stringify", async () => {
    const error = await refusal(preParsed(JSON.parse(nestedText(5000))));
    expect(error.message).toBe("The JSON body is nested too deeply");
  });

  it("HTTP-5: a streamed body nested 5,000 deep is 40002 (too deep)", async () => {
    expect((await refusal(streamed(nestedText(5000)))).message).toBe("The JSON body is nested too deeply");
  });

  it("HTTP-5: a pre-parsed body nested 200,000 deep is refused without recursion", async () => {
    let value: unknown = [];
    for (let depth = 0; depth < 200_000; depth += 1) value = [value];
    expect((await refusal(preParsed({ deep: value }))).message).toBe("The JSON body is nested too deeply");
  });

  it("HTTP-5: depth and forbidden keys are checked before the size of a pre-parsed body", async () => {
    const large = "a".repeat(limit);
    expect((await refusal(preParsed({ large, deep: JSON.parse(nestedText(40)) }))).message).toBe(
      "The JSON body is nested too deeply",
    );
    expect((await refusal(preParsed(JSON.parse(`{"large":"${large}","x":[{"__proto__":1}]}`)))).message).toBe(
      'The key "__proto__" is not allowed',
    );
    expect((await refusal(preParsed({ large }))).message).toBe("The request body is too large");
  });

  it("HTTP-5: 32 levels are read; 33 are too deep, on both paths", async () => {
    // The object is level 0 and its arrays levels 1 to 32; a value one level further is refused.
    expect(await readJsonBody(streamed(nestedText(32)), limit)).toEqual(JSON.parse(nestedText(32)));
    expect(await readJsonBody(preParsed(JSON.parse(nestedText(32))), limit)).toEqual(JSON.parse(nestedText(32)));
    await refusal(streamed(nestedText(33)));
    await refusal(preParsed(JSON.parse(nestedText(33))));
  });

  it("PW-5: a forbidden key at the deepest level read is found, on both paths", async () => {
    const text = `{"a":${"[".repeat(31)}{"constructor":1}${"]".repeat(31)}}`;
    expect((await refusal(streamed(text))).message).toBe('The key "constructor" is not allowed');
    expect((await refusal(preParsed(JSON.parse(text)))).message).toBe('The key "constructor" is not allowed');
  });

  it("HTTP-5: a pre-parsed null is not an object (40002), and no pre-parsed body reads as {}", async () => {
    expect((await refusal(preParsed(null))).message).toBe("The request body must be a JSON object");
    expect(await readJsonBody(preParsed(undefined), limit)).toEqual({});
  });
});

describe("readFormBody (the token endpoint's application/x-www-form-urlencoded body, RFC 6749 §4.4.2)", () => {
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const formRefusal = async (request: HttpRequest, bodyLimit = limit) => {
    const error = await readFormBody(request, bodyLimit).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).code).toBe(40002);
    return (error as AuthError).message;
  };

  it("reads each parameter once, decoding + and percent-escapes as UTF-8; an empty body has none", async () => {
    const body = await readFormBody(streamed("grant_type=client_credentials&scope=a+b%20c&x=%C3%A9&empty=&bare", form), limit);
    expect({ ...body }).toEqual({ grant_type: "client_credentials", scope: "a b c", x: "é", empty: "", bare: "" });
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect({ ...(await readFormBody(streamed("", form), limit)) }).toEqual({});
    const charset = { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" };
    expect({ ...(await readFormBody(streamed("a=1", charset), limit)) }).toEqual({ a: "1" });
  });

  it("refuses a parameter given twice (RFC 6749 §3.2), a malformed escape, JSON or another content type, a body over the limit", async () => {
    expect(await formRefusal(streamed("scope=a&scope=b", form))).toBe("scope must be given once");
    expect(await formRefusal(streamed("scope=%E0%A4%A", form))).toMatch(/percent-escape/);
    expect(await formRefusal(streamed('{"grant_type":"client_credentials"}'))).toMatch(/x-www-form-urlencoded/);
    expect(await formRefusal(streamed("a=1", { "content-type": "text/plain" }))).toMatch(/x-www-form-urlencoded/);
    expect(await formRefusal(streamed("a=1", { "content-type": "application/x-www-form-urlencoded; charset=latin1" }))).toMatch(
      /x-www-form-urlencoded/,
    );
    expect(await formRefusal(streamed(`a=${"x".repeat(100)}`, form), 50)).toBe("The request body is too large");
    expect(await formRefusal(streamed("a=1", { ...form, "content-length": "99999" }), 50)).toBe("The request body is too large");
  });

  it("checks a body express.urlencoded() parsed first the same way: strings once each, within the limit", async () => {
    const parsed = (value: unknown) => ({ ...streamed("", form), body: null, parsedBody: value });
    expect({ ...(await readFormBody(parsed({ grant_type: "client_credentials" }), limit)) }).toEqual({
      grant_type: "client_credentials",
    });
    expect(await formRefusal(parsed({ scope: ["a", "b"] }))).toBe("scope must be given once");
    expect(await formRefusal(parsed({ scope: { nested: "a" } }))).toMatch(/plain form value/);
    expect(await formRefusal(parsed([1]))).toMatch(/must be a form/);
    expect(await formRefusal(parsed({ a: "x".repeat(100) }), 50)).toBe("The request body is too large");
    expect({ ...(await readFormBody(parsed("a=1&b=2"), limit)) }).toEqual({ a: "1", b: "2" });
    expect(await formRefusal(parsed(`a=${"x".repeat(100)}`), 50)).toBe("The request body is too large");
    expect(await formRefusal({ ...parsed(undefined), bodyRefusal: "tooLarge" })).toBe("The request body is too large");
    expect({ ...(await readFormBody(parsed(undefined), limit)) }).toEqual({});
  });
});
