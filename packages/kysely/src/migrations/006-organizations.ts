import { type Migration, columnTypes, userIdType } from "./column-types.js";

/**
 * Issue 40: organizations, their members (roles of the organization's own), invitations by
 * email and the domains they claim; each session's active organization (none for the sessions
 * of before). A domain's verified_domain is the domain while it is verified and null otherwise:
 * its unique key keeps a domain verified for one organization at most (OR-11), null keys never
 * colliding. A member's user id takes the type of the users' ids (your table's, with the users option).
 */
export const organizationSchema: Migration = {
  version: 6,
  creates: {
    what: "organizations",
    tables: (t) => [t.organizations, t.organizationMembers, t.organizationInvitations, t.organizationDomains],
  },
  statements(dialect, t, collations, users) {
    const c = columnTypes(dialect, collations);
    const table = c.table;
    const userId = userIdType(c, users);
    const orgId = c.ascii(255);
    return [
      `create table ${t.organizations} (
        id ${orgId} primary key,
        slug ${c.ascii(64)} not null,
        name ${c.text(512)} not null,
        rules ${c.long} not null,
        created_at ${c.time} not null,
        updated_at ${c.time} not null,
        constraint ${t.organizations}_slug unique (slug)
      )${table}`,
      `create table ${t.organizationMembers} (
        org_id ${orgId} not null references ${t.organizations} (id),
        user_id ${userId} not null references ${t.users} (id),
        roles ${c.long} not null,
        created_at ${c.time} not null,
        last_active_at ${c.time},
        primary key (org_id, user_id)
      )${table}`,
      `create index ${t.organizationMembers}_user on ${t.organizationMembers} (user_id)`,
      `create table ${t.organizationInvitations} (
        id ${c.ascii(255)} primary key,
        org_id ${orgId} not null references ${t.organizations} (id),
        email ${c.text(512)} not null,
        roles ${c.long} not null,
        token_hash ${c.ascii(255)} not null,
        invited_by ${userId} not null,
        created_at ${c.time} not null,
        expires_at ${c.time} not null,
        accepted_at ${c.time},
        accepted_by ${userId},
        revoked_at ${c.time},
        constraint ${t.organizationInvitations}_token unique (token_hash)
      )${table}`,
      `create index ${t.organizationInvitations}_email on ${t.organizationInvitations} (org_id, email)`,
      `create table ${t.organizationDomains} (
        org_id ${orgId} not null references ${t.organizations} (id),
        domain ${c.ascii(255)} not null,
        verification_value ${c.text(512)} not null,
        created_at ${c.time} not null,
        verified_at ${c.time},
        verified_domain ${c.ascii(255)},
        primary key (org_id, domain),
        constraint ${t.organizationDomains}_verified unique (verified_domain)
      )${table}`,
      `alter table ${t.sessions} add column active_org_id ${orgId}`,
      `create index ${t.sessions}_active_org on ${t.sessions} (active_org_id)`,
    ];
  },
};
