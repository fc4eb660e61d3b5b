import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { authError, makeAuth } from "../flows/fixtures.test-support.js";
import { resolveUserFields, valueProblem } from "./declaration.js";
import { field } from "./field.js";
import { newUserFields, readFieldInput, storedFieldValues } from "./values.js";

const declared = resolveUserFields({
  fields: {
    company: field.string({ maxLength: 10, signUp: true, selfEdit: true }),
    plan: field.enum(["free", "pro"], { default: "free", inToken: true }),
    seats: field.integer({ min: 1, max: 500, default: 1 }),
    score: field.number({ min: 0, max: 1 }),
    beta: field.boolean({ selfEdit: true, inMe: false }),
    tags: field.stringArray({ maxItems: 2, maxLength: 5, selfEdit: true }),
    code: field.string({ pattern: /^[A-Z]{3}$/, required: true }),
  },
});

/** What a user without any value of {@link declared} reads: each default, else null. */
const defaults = { company: null, plan: "free", seats: 1, score: null, beta: null, tags: null, code: null };

/** The message of the `TypeError` that resolving `fields` throws, without the prefix every configuration error has. */
function refusal(fields: unknown): string {
  try {
    resolveUserFields({ fields });
  } catch (error) {
    if (error instanceof TypeError) return error.message.replace(/^Portcullis configuration: /, "");
    throw error;
  }
  throw new Error("no TypeError");
}

/** The code and message of the error that reading `input` for `writer` throws. */
async function readRefusal(input: unknown, writer: "signUp" | "selfEdit" | "admin") {
  const error = await authError(Promise.resolve().then(() => readFieldInput(declared, input, writer)));
  return [error.code, error.message];
}

describe("user field declarations", () => {
  it("fills in the defaults: not required, shown in /me, not in tokens, set by administrators only", () => {
    const [company] = resolveUserFields({ fields: { company: field.string() } });
    expect(company).toMatchObject({
      name: "company",
      kind: "string",
      required: false,
      signUp: false,
      selfEdit: false,
      inToken: false,
      inMe: true,
      default: null,
      minLength: 0,
      maxLength: 255,
      pattern: null,
    });
    expect(resolveUserFields(undefined)).toEqual([]);
    expect(resolveUserFields({})).toEqual([]);
  });

  it("refuses names that are no lower camelCase identifier, or that are the user's own, naming the field", () => {
    expect(refusal({ Company: field.string() })).toMatch(
      /^user\.fields\.Company: a field name must be a lower camelCase identifier/,
    );
    expect(refusal({ "company-name": field.string() })).toMatch(/lower camelCase/);
    expect(refusal({ [`a${"b".repeat(63)}`]: field.string() })).toMatch(/lower camelCase/);
    for (const name of [
      "username",
      "roles",
      "email",
      "passwordHash",
      "createdAt",
      "totpEnabled",
      "fields",
      "id",
      "constructor",
      "toString",
    ]) {
      expect(refusal({ [name]: field.string() })).toBe(
        `user.fields.${name}: "${name}" is a name of the user's own; choose another`,
      );
    }
  });

  it("refuses what is not a field, an unknown option, a limit out of range, and a default the field refuses", () => {
    expect(refusal({ company: "string" })).toMatch(/^user\.fields\.company must be made with field\.string\(\)/);
    expect(refusal({ company: { kind: "date", options: {} } })).toMatch(/must be made with/);
    expect(refusal({ company: field.string({ max: 3 } as never) })).toBe(
      'user.fields.company has an unknown option "max" for a string field',
    );
    expect(refusal({ seats: field.integer({ maxLength: 3 } as never) })).toMatch(
      /unknown option "maxLength" for a integer field/,
    );
    expect(refusal({ company: field.string({ maxLength: 10_001 }) })).toMatch(/maxLength must be a whole number from 0 to 10000/);
    expect(refusal({ company: field.string({ minLength: 5, maxLength: 4 }) })).toMatch(/minLength must not exceed its maxLength/);
    expect(refusal({ seats: field.integer({ min: 1.5 }) })).toMatch(/min must be a safe integer/);
    expect(refusal({ seats: field.integer({ min: 5, max: 1 }) })).toMatch(/min must not exceed its max/);
    expect(refusal({ plan: field.enum([] as never) })).toMatch(/must list 1 to 100 different values/);
    expect(refusal({ plan: field.enum(["a", "a"]) })).toMatch(/must list 1 to 100 different values/);
    expect(refusal({ plan: field.enum(["free", "pro"], { default: "gold" as "free" }) })).toBe(
      "user.fields.plan.default must be one of free, pro",
    );
    expect(refusal({ seats: field.integer({ default: "1" as unknown as number }) })).toBe(
      "user.fields.seats.default must be a number",
    );
    expect(refusal({ company: field.string({ pattern: /x/g }) })).toMatch(/must not have the g or y flag/);
    expect(refusal({ company: field.string({ signUp: "yes" as unknown as boolean }) })).toBe(
      "user.fields.company.signUp must be true or false",
    );
    expect(() => resolveUserFields({ fields: {}, extra: 1 })).toThrow('user has an unknown option "extra"; it takes { fields }');
    expect(() => resolveUserFields("fields")).toThrow("user must be an object: { fields }");
  });

  it("UF-2: an inToken string is at most 200 characters and an inToken list at most 10 items of 50, so tokens stay small", () => {
    expect(refusal({ company: field.string({ inToken: true }) })).toMatch(/inToken: its maxLength must be at most 200/);
    expect(resolveUserFields({ fields: { company: field.string({ inToken: true, maxLength: 200 }) } })).toHaveLength(1);
    expect(refusal({ tags: field.stringArray({ inToken: true }) })).toMatch(
      /inToken: at most 10 items \(maxItems\) of 50 characters/,
    );
    expect(
      resolveUserFields({ fields: { tags: field.stringArray({ inToken: true, maxItems: 10, maxLength: 50 }) } }),
    ).toHaveLength(1);
    expect(refusal(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, field.boolean()])))).toMatch(/at most 50/);
  });

  it("createAuth refuses a required field without a default that sign-up, a provider or the directory could not give", () => {
    const code = field.string({ required: true });
    expect(() => makeAuth({ signUp: { enabled: true }, user: { fields: { code } } })).toThrow(
      "user.fields.code is required without a default, which sign-up (the field is not signUp) cannot give: give it a default",
    );
    expect(
      makeAuth({ signUp: { enabled: true }, user: { fields: { code: field.string({ required: true, signUp: true }) } } }).auth
        .userFields,
    ).toHaveLength(1);
    expect(
      makeAuth({ signUp: { enabled: true }, user: { fields: { code: field.string({ required: true, default: "x" }) } } }).auth
        .userFields,
    ).toHaveLength(1);
    expect(makeAuth({ user: { fields: { code } } }).auth.userFields).toHaveLength(1);
  });

  it("createAuth checks the declaration at startup and refuses an unknown option of user", () => {
    expect(() => makeAuth({ user: { fields: { roles: field.string() } } })).toThrow(/"roles" is a name of the user's own/);
    expect(makeAuth({ user: { fields: { company: field.string() } } }).auth.userFields.map((one) => one.name)).toEqual([
      "company",
    ]);
  });
});

describe("reading field values", () => {
  it("answers 40002 for a fields that is no object, an undeclared name or the wrong type, naming the field", async () => {
    expect(await readRefusal([], "admin")).toEqual([ErrorCode.MalformedParameter, "fields must be an object"]);
    expect(await readRefusal("x", "admin")).toEqual([ErrorCode.MalformedParameter, "fields must be an object"]);
    expect(await readRefusal({ nope: 1 }, "admin")).toEqual([
      ErrorCode.MalformedParameter,
      "fields.nope is not a declared field",
    ]);
    expect(await readRefusal(JSON.parse('{"__proto__": {"a": 1}}'), "admin")).toEqual([
      ErrorCode.MalformedParameter,
      "fields.__proto__ is not a declared field",
    ]);
    expect(await readRefusal({ company: 5 }, "admin")).toEqual([ErrorCode.MalformedParameter, "fields.company must be a string"]);
    expect(await readRefusal({ seats: "5" }, "admin")).toEqual([ErrorCode.MalformedParameter, "fields.seats must be a number"]);
    expect(await readRefusal({ beta: "true" }, "admin")).toEqual([
      ErrorCode.MalformedParameter,
      "fields.beta must be true or false",
    ]);
    expect(await readRefusal({ tags: ["a", 1] }, "admin")).toEqual([
      ErrorCode.MalformedParameter,
      "fields.tags must be an array of strings",
    ]);
    expect(await readRefusal({ plan: 1 }, "admin")).toEqual([ErrorCode.MalformedParameter, "fields.plan must be a string"]);
  });

  it("answers 42200 for a value out of the field's limits, naming the field", async () => {
    const refused = ErrorCode.ValidationFailed;
    expect(await readRefusal({ company: "x".repeat(11) }, "admin")).toEqual([
      refused,
      "fields.company must be at most 10 characters",
    ]);
    expect(await readRefusal({ plan: "gold" }, "admin")).toEqual([refused, "fields.plan must be one of free, pro"]);
    expect(await readRefusal({ seats: 0 }, "admin")).toEqual([refused, "fields.seats must be from 1 to 500"]);
    expect(await readRefusal({ seats: 1.5 }, "admin")).toEqual([refused, "fields.seats must be a whole number"]);
    expect(await readRefusal({ score: Number.NaN }, "admin")).toEqual([refused, "fields.score must be a finite number"]);
    expect(await readRefusal({ tags: ["a", "b", "c"] }, "admin")).toEqual([refused, "fields.tags must have at most 2 items"]);
    expect(await readRefusal({ tags: ["abcdef"] }, "admin")).toEqual([refused, "fields.tags items must be at most 5 characters"]);
    expect(await readRefusal({ code: "abc" }, "admin")).toEqual([refused, "fields.code does not have the required form"]);
    expect(await readRefusal({ plan: null }, "admin")).toEqual([refused, "fields.plan cannot be null"]);
    expect(await readRefusal({ code: null }, "admin")).toEqual([refused, "fields.code cannot be null"]);
  });

  it("UF-1: sign-up sets only signUp fields and the user only selfEdit ones (42200 naming the field); administrators any", async () => {
    expect(await readRefusal({ plan: "pro" }, "signUp")).toEqual([
      ErrorCode.ValidationFailed,
      "fields.plan cannot be set at sign-up",
    ]);
    expect(await readRefusal({ plan: "pro" }, "selfEdit")).toEqual([
      ErrorCode.ValidationFailed,
      "fields.plan cannot be changed by the user",
    ]);
    expect(await readRefusal({ beta: true }, "signUp")).toEqual([
      ErrorCode.ValidationFailed,
      "fields.beta cannot be set at sign-up",
    ]);
    expect(readFieldInput(declared, { company: "Acme" }, "signUp")).toEqual({ company: "Acme" });
    expect(readFieldInput(declared, { company: null, beta: true, tags: ["a"] }, "selfEdit")).toEqual({
      company: null,
      beta: true,
      tags: ["a"],
    });
    expect(readFieldInput(declared, { plan: "pro", seats: 3, score: 0.5, code: "ABC" }, "admin")).toEqual({
      plan: "pro",
      seats: 3,
      score: 0.5,
      code: "ABC",
    });
    expect(readFieldInput(declared, undefined, "signUp")).toEqual({});
  });

  it("a new user gets each default, null without one; a required field without a value or default is 40001", async () => {
    expect(newUserFields(declared, { code: "ABC" })).toEqual({ ...defaults, code: "ABC" });
    const missing = await authError(Promise.resolve().then(() => newUserFields(declared, {})));
    expect([missing.code, missing.message]).toEqual([ErrorCode.MissingParameter, "fields.code is required"]);
  });

  it("a stored user without a field (made before it was declared) or with a value the declaration now refuses reads the default", () => {
    expect(storedFieldValues(declared, undefined)).toEqual(defaults);
    expect(storedFieldValues(declared, { plan: "gold", seats: 7, removed: "x", company: "Acme" })).toEqual({
      ...defaults,
      company: "Acme",
      seats: 7,
    });
  });

  it("valueProblem tells a malformed value from one out of the limits", () => {
    const [company] = declared;
    expect(valueProblem(company as never, 1)).toEqual({ code: "malformed", message: "must be a string" });
    expect(valueProblem(company as never, "x".repeat(11))).toEqual({ code: "refused", message: "must be at most 10 characters" });
    expect(valueProblem(company as never, "Acme")).toBeNull();
  });
});
