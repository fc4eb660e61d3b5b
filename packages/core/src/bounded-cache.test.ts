import { describe, expect, it } from "vitest";
import { rememberAnswers, setBounded } from "./bounded-cache.js";

describe("bounded caches", () => {
  it("setBounded keeps at most maxEntries, removing the oldest first; replacing a key removes nothing", () => {
    const map = new Map<string, number>();
    for (let index = 0; index < 10; index += 1) setBounded(map, `k${index}`, index, 3);
    expect([...map.keys()]).toEqual(["k7", "k8", "k9"]);
    setBounded(map, "k8", 80, 3);
    expect([...map.entries()]).toEqual([
      ["k7", 7],
      ["k8", 80],
      ["k9", 9],
    ]);
  });

  it("rememberAnswers asks the check once per input and stays within its bound under a stream of inputs", () => {
    const asked: string[] = [];
    const check = rememberAnswers((input) => {
      asked.push(input);
      return input.startsWith("yes");
    }, 2);
    expect([check("yes-1"), check("no-1"), check("yes-1"), check("no-1")]).toEqual([true, false, true, false]);
    expect(asked).toEqual(["yes-1", "no-1"]);
    for (let index = 0; index < 100; index += 1) check(`stream-${index}`);
    expect(check("yes-1")).toBe(true);
    expect(asked).toHaveLength(103);
  });
});
