// RL-7: what a caller who is not signed in can make storage keep (OAuth authorize's state,
// passkey begin's ceremony) stays bounded under a stream of such requests, in memory storage and
// in SQL (PGlite): per address by throttle.unauthenticatedWrites, and across addresses because
// every such store counts towards the sweep of expired rows.

import { randomBytes } from "node:crypto";
import {
  type Auth,
  type Storage,
  emailDeliveriesSettled,
  forgotPassword,
  memoryStorage,
  oauthAuthorize,
  sweepExpired,
  webauthnBegin,
} from "@portcullis/core";
import { type KyselyStorage, pgliteStorage } from "@portcullis/kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestClock, makeTestAuth } from "../fixtures/auth.js";
import { type OidcTestProvider, corpOAuthConfig, startOidcProvider } from "../fixtures/oidc-provider.js";

const redirectUri = "https://app.example.com/auth/callback";
let idp: OidcTestProvider;

beforeAll(async () => {
  idp = await startOidcProvider({ redirectUris: [redirectUri] });
});

afterAll(async () => {
  await idp.close();
});

/** The rows (or entries) of the two tables these requests fill. */
interface Rows {
  challenges: number;
  counters: number;
}

/** A storage under test, and how to count what it holds. */
interface Subject {
  name: string;
  open(): Promise<{ storage: Storage; rows(): Promise<Rows>; close(): Promise<void> }>;
}

const subjects: Subject[] = [
  {
    name: "memory storage",
    async open() {
      const storage = memoryStorage();
      return {
        storage,
        rows: async () => ({ challenges: storage.sizes().challenges, counters: storage.sizes().counters }),
        close: async () => {},
      };
    },
  },
  {
    name: "SQL storage (PGlite)",
    async open() {
      const storage: KyselyStorage = await pgliteStorage({ dataDir: "memory://" });
      const count = async (table: string) =>
        Number(
          (
            await storage.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as("rows"))
              .executeTakeFirstOrThrow()
          ).rows,
        );
      return {
        storage,
        rows: async () => ({
          challenges: await count(storage.tables.challenges),
          counters: await count(storage.tables.counters),
        }),
        close: () => storage.close(),
      };
    },
  },
];

/** Whether a request was answered or refused; anything but an AuthError fails the test. */
async function settled(request: Promise<unknown>): Promise<"stored" | number> {
  try {
    await request;
    return "stored";
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== "number") throw error;
    return code;
  }
}

/** An auth on `storage` with the provider `corp` and passkeys, its clock frozen (moved by hand). */
function authOn(storage: Storage): { auth: Auth; clock: TestClock } {
  return makeTestAuth({ storage, oauth: corpOAuthConfig(idp, redirectUri) });
}

/** An auth on `storage` with email configured, its clock frozen; what it sends is dropped. */
function forgotAuthOn(storage: Storage): { auth: Auth; clock: TestClock } {
  return makeTestAuth({
    storage,
    email: { send: () => {}, resetUrl: "https://app.example.com/reset", verifyUrl: "https://app.example.com/verify" },
  });
}

/** A name nobody has, new each call: what a stream of forgot requests for random names types. */
const randomName = () => `nobody-${randomBytes(9).toString("base64url")}`;

/** The sweep interval's timer, moved by hand with the frozen clock: every 5 minutes of the clock. */
function sweepEveryFiveMinutes(auth: Auth, clock: TestClock): () => Promise<void> {
  let lastSweep = clock.now;
  return async () => {
    if (clock.now - lastSweep < 5 * 60_000) return;
    lastSweep = clock.now;
    await sweepExpired(auth);
  };
}

/** An IPv4 address per index, each its own throttling bucket. */
const address = (index: number) => `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;

for (const subject of subjects) {
  describe(`RL-7 on ${subject.name}`, () => {
    it("RL-7: 500 authorize calls and 500 passkey begins from one address, one of each every 300 ms, store no more than the 30-a-minute tier lets through", async () => {
      const { storage, rows, close } = await subject.open();
      try {
        const { auth, clock } = authOn(storage);
        const outcomes = new Map<"stored" | number, number>();
        const tally = (outcome: "stored" | number) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        for (let index = 0; index < 500; index += 1) {
          clock.advance(300);
          tally(await settled(oauthAuthorize(auth, { provider: "corp", ip: "203.0.113.9" })));
          tally(await settled(webauthnBegin(auth, { ip: "203.0.113.9" })));
        }
        // 150 seconds: three one-minute windows of 30, shared by both routes; nothing expired yet.
        expect(outcomes.get("stored")).toBe(90);
        expect(outcomes.get(42900)).toBe(910);
        const held = await rows();
        expect(held.challenges).toBe(90);
        expect(held.counters).toBeLessThanOrEqual(4);
      } finally {
        await close();
      }
    });

    it("RL-7: 2,100 authorize calls from 2,100 addresses over 105 minutes: what expired is swept as new states arrive, so the tables never hold every state and window ever made", async () => {
      const { storage, rows, close } = await subject.open();
      try {
        const { auth, clock } = authOn(storage);
        const peak: Rows = { challenges: 0, counters: 0 };
        for (let index = 0; index < 2100; index += 1) {
          clock.advance(3000);
          expect(await settled(oauthAuthorize(auth, { provider: "corp", ip: address(index) }))).toBe("stored");
          if (index % 50 === 49) {
            const held = await rows();
            peak.challenges = Math.max(peak.challenges, held.challenges);
            peak.counters = Math.max(peak.counters, held.counters);
          }
        }
        // Live at once: 200 states (10 minutes), one hourly window per address of the last hour
        // (1,200) and a minute's windows (20). A sweep runs every 1,000 stores, so what expired
        // since the last one waits for the next: at most 1,000 states, and 1,000 windows of each
        // tier; never all the 2,100 states and 4,200 windows made.
        expect(peak.challenges).toBeLessThanOrEqual(200 + 1000);
        expect(peak.counters).toBeLessThanOrEqual(1200 + 20 + 2 * 1000);
      } finally {
        await close();
      }
    });

    it("RL-7: 2,000 forgot requests for random unknown names from one address over 25 hours leave at most a day of that address's allowed names (10 per 15 minutes)", async () => {
      const { storage, rows, close } = await subject.open();
      try {
        const { auth, clock } = forgotAuthOn(storage);
        const sweep = sweepEveryFiveMinutes(auth, clock);
        const outcomes = new Map<"stored" | number, number>();
        let peak = 0;
        for (let index = 0; index < 2000; index += 1) {
          clock.advance(45_000);
          await sweep();
          const outcome = await settled(forgotPassword(auth, { username: randomName(), ip: "203.0.113.9" }));
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          if (index % 50 === 49) peak = Math.max(peak, (await rows()).counters);
        }
        await emailDeliveriesSettled(auth);
        // 25 hours: 100 windows of 15 minutes, 10 names each; the rest refused before any name's counter.
        expect(outcomes.get("stored")).toBe(1000);
        expect(outcomes.get(42900)).toBe(1000);
        // Live at once: each allowed name's daily window (960 in a day), the 15-minute windows of the
        // last 10 names and the address's own, and what expired since the last sweep (5 minutes:
        // at most 7 names' daily windows and 10 short ones).
        expect(peak).toBeLessThanOrEqual(960 + 10 + 1 + 7 + 10 + 1);
        expect(peak).toBeGreaterThan(900);
      } finally {
        await close();
      }
    }, 240_000);

    it("RL-7: 2,100 forgot requests for random unknown names from 2,100 addresses over 105 minutes: the 15-minute windows are swept as they end, each name's daily window stays its day (bounded by time only, docs/storage.md)", async () => {
      const { storage, rows, close } = await subject.open();
      try {
        const { auth, clock } = forgotAuthOn(storage);
        const sweep = sweepEveryFiveMinutes(auth, clock);
        let peak = 0;
        for (let index = 0; index < 2100; index += 1) {
          clock.advance(3000);
          await sweep();
          expect(await settled(forgotPassword(auth, { username: randomName(), ip: address(index) }))).toBe("stored");
          if (index % 50 === 49) peak = Math.max(peak, (await rows()).counters);
        }
        // Three windows per request: the address's and the name's of 15 minutes, the name's of a day.
        // Live at once: every name's daily window (2,100, none a day old yet) and the short windows
        // of the last 15 minutes and of one sweep interval (2 × 400); never 3 × 2,100.
        expect(peak).toBeLessThanOrEqual(2100 + 2 * 400);
        expect((await rows()).counters).toBeGreaterThanOrEqual(2100);
        await emailDeliveriesSettled(auth);
        clock.advance(24 * 3_600_000);
        await sweepExpired(auth);
        expect((await rows()).counters).toBe(0);
      } finally {
        await close();
      }
    }, 240_000);

    it("RL-7: 2,100 passkey begins from 2,100 addresses over 105 minutes: expired ceremonies are swept as new ones arrive", async () => {
      const { storage, rows, close } = await subject.open();
      try {
        const { auth, clock } = authOn(storage);
        let peak = 0;
        for (let index = 0; index < 2100; index += 1) {
          clock.advance(3000);
          expect(await settled(webauthnBegin(auth, { ip: address(index) }))).toBe("stored");
          if (index % 50 === 49) peak = Math.max(peak, (await rows()).challenges);
        }
        // Live at once: 100 ceremonies (5 minutes); at most 1,000 expired ones wait for the next sweep.
        expect(peak).toBeLessThanOrEqual(100 + 1000);
      } finally {
        await close();
      }
    });
  });
}
