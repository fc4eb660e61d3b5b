// The program of one process that reads a JSON Lines file with jsonLines, for import-command.test.ts:
// run with `node --import tsx --expose-gc` by that test, never imported. It prints, as one JSON
// line, what it read (a record's username, or an unreadable line's reason), the most heap in use
// after a collection at any item it was given, and the process's peak resident memory (VmHWM).
import { readFileSync } from "node:fs";
import { UnreadableRecord } from "@portcullis/core";
import { jsonLines } from "./import-command.js";

const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error("run with --expose-gc");
const mebibytes = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const items: unknown[] = [];
let mostHeld = 0;
for await (const item of jsonLines(process.argv[2] as string)) {
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  mostHeld = Math.max(mostHeld, heapUsed + arrayBuffers);
  items.push(item instanceof UnreadableRecord ? { unreadable: item.reason } : (item as { username: string }).username);
}
const peakKiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
process.stdout.write(
  `${JSON.stringify({ items, mostHeldMiB: mebibytes(mostHeld), peakResidentMiB: mebibytes(peakKiB * 1024) })}\n`,
);
