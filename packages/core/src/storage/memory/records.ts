import type { FieldValue } from "../../user-fields/field.js";
import type { UserRecord } from "../types.js";

/** A deep copy: what the stores hand out of records they keep mutable. */
export const copy = <T>(value: T): T => structuredClone(value);

/**
 * A frozen copy of a user, session or refresh-token record, whose members are plain values or
 * arrays of them: stored once, then handed to every read as it is.
 */
export function frozenCopy<T extends object>(record: T): T {
  const copied = { ...record } as Record<string, unknown>;
  for (const [name, value] of Object.entries(copied)) {
    if (Array.isArray(value)) copied[name] = Object.freeze([...value]);
  }
  return Object.freeze(copied) as T;
}

/** A user's additional fields copied and frozen, arrays too: nothing a caller holds reaches what is stored. */
export function frozenFields(fields: Record<string, FieldValue> | undefined): Record<string, FieldValue> | undefined {
  return fields === undefined ? undefined : frozenCopy(fields);
}

/** A user record copied and frozen, its additional fields too. */
export function frozenUser(user: UserRecord): UserRecord {
  const copied = frozenCopy(user);
  return user.fields === undefined ? copied : Object.freeze({ ...copied, fields: frozenFields(user.fields) });
}

/** A frozen record like `record` with `changes`: what a write of a frozen record stores in its place. */
export const frozenWith = <T>(record: T, changes: Partial<T>): T => Object.freeze({ ...record, ...changes });
