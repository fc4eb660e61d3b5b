/** What {@link nodeRequestBody} needs of a stream: Node's readable events, and its state flags where it has them. */
type NodeReadable = NodeJS.ReadableStream & {
  readonly destroyed?: boolean;
  readonly readableEnded?: boolean;
  readonly errored?: unknown;
};

const prematureClose = () => new Error("The request stream closed before its end");

/**
 * A Node request stream (or any Node readable) as core reads a body (`HttpRequest.body`): its
 * chunks as they arrive, from `data` events. The stream's own async iterator does the same
 * with more set-up (an end-of-stream watcher and half a dozen listeners a request), about a
 * twentieth of a refresh's CPU on Express. A stream that fails, or closes before its end, fails
 * the read. An early stop (core refusing an oversized body halfway) removes the listeners
 * without destroying the stream, so the refusal can still be sent (HTTP-1); Node discards the
 * rest of the body. The adapters of `@portcullis/express` and `@portcullis/fastify` use it.
 *
 * @example
 * ```ts
 * const request: HttpRequest = { …, body: nodeRequestBody(req) };
 * ```
 */
export function nodeRequestBody(stream: NodeJS.ReadableStream): AsyncIterable<Uint8Array> {
  return { [Symbol.asyncIterator]: () => readChunks(stream as NodeReadable) };
}

function readChunks(stream: NodeReadable): AsyncIterator<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let ended = stream.readableEnded === true;
  let failure: unknown =
    stream.errored ?? (stream.destroyed === true && stream.readableEnded !== true ? prematureClose() : undefined);
  let waiting: (() => void) | undefined;
  const wake = () => {
    const resolve = waiting;
    waiting = undefined;
    resolve?.();
  };
  const onData = (chunk: Uint8Array) => {
    chunks.push(chunk);
    wake();
  };
  const onEnd = () => {
    ended = true;
    wake();
  };
  const onError = (error: unknown) => {
    failure ??= error;
    wake();
  };
  const onClose = () => {
    if (!ended) failure ??= prematureClose();
    wake();
  };
  const stop = () => {
    stream.removeListener("data", onData);
    stream.removeListener("end", onEnd);
    stream.removeListener("error", onError);
    stream.removeListener("close", onClose);
  };
  stream.on("end", onEnd);
  stream.on("error", onError);
  stream.on("close", onClose);
  stream.on("data", onData);
  return {
    async next() {
      for (;;) {
        const chunk = chunks.shift();
        if (chunk !== undefined) return { done: false, value: chunk };
        if (failure !== undefined) {
          stop();
          throw failure;
        }
        if (ended) {
          stop();
          return { done: true, value: undefined };
        }
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
      }
    },
    async return() {
      stop();
      return { done: true, value: undefined };
    },
  };
}
