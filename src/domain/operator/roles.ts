/** Operator roles (docs/adr/0031-operator-credentials-and-roles.md); the operator API maps them to permissions. */
export const ROLES = ['admin', 'finance', 'support', 'auditor'] as const;
export type Role = (typeof ROLES)[number];
