/** Operator roles (docs/decisions.md "People: operators, roles, audit"); the operator API maps them to permissions. */
export const ROLES = ['admin', 'finance', 'support', 'auditor'] as const;
export type Role = (typeof ROLES)[number];
