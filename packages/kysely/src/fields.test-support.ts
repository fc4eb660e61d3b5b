/** A service's user field declaration, as the module `portcullis fields --fields` loads in the tests. */
import { field } from "@portcullis/core";

export const fields = {
  company: field.string({ maxLength: 100, signUp: true, selfEdit: true }),
  plan: field.enum(["free", "pro"], { default: "free", inToken: true }),
  seats: field.integer({ min: 1 }),
  beta: field.boolean({ default: false }),
  tags: field.stringArray(),
};

export const notFields = "not a declaration";
