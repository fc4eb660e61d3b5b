/**
 * An in-process revocation channel for the core tests: every subscribed instance hears every
 * message at once, and the test can cut the channel, restore it, or slip in any text.
 */
import type { RevocationChannel, RevocationReceiver } from "./revocation-channel.js";

/** A {@link RevocationChannel} whose delivery the test controls. */
export interface TestChannel extends RevocationChannel {
  /** Every message published, cut or not. */
  readonly published: string[];
  /** Stops delivery: each subscriber is told it is lost; messages published meanwhile are dropped. */
  cut(error?: unknown): void;
  /** Delivery resumes: each subscriber is told it is connected. */
  restore(): void;
  /** Hands `text` to every subscriber as if another instance had published it. */
  deliver(text: string): void;
}

/** A channel that is connected from the first subscription until {@link TestChannel.cut}. */
export function testChannel(): TestChannel {
  const receivers = new Set<RevocationReceiver>();
  const published: string[] = [];
  let up = true;
  return {
    published,
    async publish(message) {
      published.push(message);
      if (up) for (const receiver of receivers) receiver.message(message);
    },
    subscribe(receiver) {
      receivers.add(receiver);
      if (up) receiver.connected();
      else receiver.lost();
    },
    cut(error) {
      up = false;
      for (const receiver of receivers) receiver.lost(error);
    },
    restore() {
      up = true;
      for (const receiver of receivers) receiver.connected();
    },
    deliver(text) {
      for (const receiver of receivers) receiver.message(text);
    },
  };
}
