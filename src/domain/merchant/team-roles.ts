/** Merchant team roles. The merchant's own login is an `owner`; the cabinet maps them to permissions. */
export const TEAM_ROLES = ['owner', 'developer', 'accountant', 'support'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];
