import type { ChallengeKind, ChallengeRecord, ChallengeStore } from "../types.js";
import { expiringMap } from "./expiring-map.js";
import { copy } from "./records.js";

/** Challenges; `deleteExpired` also prunes what `others` delete (sessions and tokens, counter windows), each as bounded. */
export function memoryChallenges(others: ((now: number, limit: number) => number)[]) {
  const challengeMap = expiringMap<ChallengeRecord>((challenge) => challenge.expiresAt);
  const { entries: challenges, set } = challengeMap;
  const live = (id: string, kind: ChallengeKind, now: number) => {
    const challenge = challenges.get(id);
    return challenge && challenge.kind === kind && challenge.expiresAt > now ? challenge : undefined;
  };
  const store: ChallengeStore = {
    async put(challenge) {
      set(challenge.id, copy(challenge), challenge.createdAt);
    },
    async find(id, kind, now) {
      const challenge = live(id, kind, now);
      return challenge ? copy(challenge) : null;
    },
    async consume(id, kind, now) {
      const challenge = live(id, kind, now);
      if (!challenge) return null;
      challenges.delete(id);
      return challenge;
    },
    async takeAttempt(id, kind, limit, now) {
      const challenge = live(id, kind, now);
      if (!challenge || challenge.attempts >= limit) return null;
      challenge.attempts += 1;
      return copy(challenge);
    },
    async deleteExpired(now, limit) {
      return others.reduce((deleted, prune) => deleted + prune(now, limit), challengeMap.deleteExpired(now, limit));
    },
  };
  return { store, size: () => challenges.size };
}
