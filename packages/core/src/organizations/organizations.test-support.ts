import { type Harness, addUser } from "../flows/fixtures.test-support.js";
import { createOrganization } from "./manage-organization.js";

/** The invitation link of the organization tests' mail (`email.invitationUrl`). */
export const invitationUrl = "https://app.example.com/accept-invitation";

/** The claims of a JWT, unverified: what a test reads of a token core issued. */
export const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8")) as Record<string, unknown>;

/** Makes `userId` a member of `orgId` with `roles` straight in storage, as if joined at time 0: no invitation, no event. */
export async function addMember(
  harness: Pick<Harness, "storage">,
  orgId: string,
  userId: string,
  roles: string[] = ["member"],
): Promise<void> {
  await harness.storage.organizations?.addMember({ orgId, userId, roles, createdAt: 0, lastActiveAt: null });
}

/** A new user `ownerName` (`owner-of-<name>` unless told) and the organization `name` they created and own. */
export async function ownedOrganization(
  harness: Pick<Harness, "auth">,
  name = "Acme",
  ownerName = `owner-of-${name.toLowerCase()}`,
) {
  const ownerId = await addUser(harness.auth, ownerName);
  const org = await createOrganization(harness.auth, { userId: ownerId, name });
  return { ownerId, org };
}

/** Users `owner` and `member`, and the organization `name` the owner created, of which `member` is a plain member. */
export async function organizationWithMember(harness: Pick<Harness, "auth" | "storage">, name = "Acme") {
  const ownerId = await addUser(harness.auth, "owner");
  const memberId = await addUser(harness.auth, "member");
  const org = await createOrganization(harness.auth, { userId: ownerId, name });
  await addMember(harness, org.id, memberId);
  return { ownerId, memberId, org };
}
