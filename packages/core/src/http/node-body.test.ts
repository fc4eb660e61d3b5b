import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { nodeRequestBody } from "./node-body.js";

async function readAll(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const listeners = (stream: PassThrough) =>
  ["data", "end", "error", "close"].map((event) => stream.listenerCount(event)).reduce((a, b) => a + b, 0);

describe("nodeRequestBody", () => {
  it("yields the chunks in order, those written before and while it waits, then ends and lets go of the stream", async () => {
    const stream = new PassThrough();
    stream.write("one,");
    const read = readAll(nodeRequestBody(stream));
    await new Promise((resolve) => setTimeout(resolve, 5));
    stream.write("two,");
    setTimeout(() => stream.end("three"), 5);
    expect(await read).toBe("one,two,three");
    expect(listeners(stream)).toBe(0);
  });

  it("HTTP-1: an early stop removes its listeners and leaves the stream open, so a refusal can still be sent", async () => {
    const stream = new PassThrough();
    stream.write("a".repeat(10));
    stream.write("b".repeat(10));
    let read = 0;
    for await (const chunk of nodeRequestBody(stream)) {
      read += chunk.byteLength;
      if (read > 5) break;
    }
    expect(read).toBe(10);
    expect(stream.destroyed).toBe(false);
    expect(listeners(stream)).toBe(0);
  });

  it("a stream that fails, or closes before its end, fails the read instead of leaving it waiting", async () => {
    const failing = new PassThrough();
    const failed = readAll(nodeRequestBody(failing));
    failing.write("partial");
    setTimeout(() => failing.destroy(new Error("connection reset")), 5);
    await expect(failed).rejects.toThrow("connection reset");
    expect(listeners(failing)).toBe(0);

    const closing = new PassThrough();
    const closed = readAll(nodeRequestBody(closing));
    setTimeout(() => closing.destroy(), 5);
    await expect(closed).rejects.toThrow("The request stream closed before its end");
  });

  it("a stream destroyed or failed before the read fails it at once; one that already ended reads as empty", {
    timeout: 2000,
  }, async () => {
    const destroyed = new PassThrough();
    destroyed.destroy();
    await new Promise((resolve) => destroyed.once("close", resolve));
    await expect(readAll(nodeRequestBody(destroyed))).rejects.toThrow("The request stream closed before its end");

    const errored = new PassThrough();
    errored.on("error", () => {});
    errored.destroy(new Error("already failed"));
    await new Promise((resolve) => errored.once("close", resolve));
    await expect(readAll(nodeRequestBody(errored))).rejects.toThrow("already failed");

    const ended = new PassThrough();
    ended.end("consumed by someone else");
    ended.resume();
    await new Promise((resolve) => ended.once("end", resolve));
    expect(await readAll(nodeRequestBody(ended))).toBe("");
  });
});
