import { type Auth, type AuthConfig, createAuth } from "@portcullis/core";
import { authRouter, requireAuth } from "@portcullis/express";
import express, { type Express } from "express";

/** What the profile needs from your service: where it stores, who it is, its keys, and two password checks. */
export interface L2Essentials extends Pick<AuthConfig, "storage" | "issuer" | "audience" | "secrets" | "now"> {
  /** A breach check for new passwords (ASVS 6.2.12), e.g. `pwnedPasswordsCheck()` of breached-passwords.ts. */
  isBreached: (password: string) => boolean | Promise<boolean>;
  /** Your organisation's own words, refused as passwords (ASVS 6.1.2, 6.2.11). */
  ownWords: string[];
}

/** An auth instance whose settings meet ASVS 5.0 Level 2 where a library can (docs/l2-profile.md). */
export function createL2Auth({ isBreached, ownWords, ...essentials }: L2Essentials): Auth {
  return createAuth({
    ...essentials,
    // 7.1.1, 7.3.1, 7.3.2; SP 800-63B-4 § 2.2.3: a session ends 24 hours after its sign-in,
    // and after 1 hour without a refresh; an access token lives 15 minutes.
    ttl: { access: "15m", refresh: "24h", refreshIdle: "1h" },
    // 6.3.3: every account proves two factors; one without a second factor enrols it first (40105).
    secondFactor: { required: "always" },
    // 6.5.5: a TOTP code is accepted during its own 30-second step only.
    totp: { window: 0 },
    // 6.2.12, 6.2.11: breached passwords and your own words are refused when a password is set.
    password: { isBreached, blocklist: ownWords },
    // 7.1.2: at most 5 live sessions per account; a sixth sign-in ends the oldest.
    sessions: { maxPerUser: 5 },
    // 7.5.1: account changes take the password or a code unless the sign-in is 5 minutes old.
    reauthentication: { recentSignIn: "5m" },
  });
}

/** The routes, and two of yours: one for any session, one that needs a fresh two-factor proof. */
export function createL2App(auth: Auth): Express {
  const app = express();
  app.use(authRouter(auth));
  app.get("/api/v1/profile", requireAuth(auth), (req, res) => {
    res.json({ userId: req.auth?.userId });
  });
  // 7.5.3 (L3, here by choice): money moves only within 15 minutes of proving two factors.
  app.post("/api/v1/payouts", requireAuth(auth, { maxAge: "15m", secondFactor: true }), (_req, res) => {
    res.status(202).json({ accepted: true });
  });
  return app;
}
