/**
 * What a restricted API key may do, as Stripe's restricted keys: each key
 * holds some of these scopes; the endpoint table (src/http/api-scopes.ts) says which scopes
 * each /api/v1 endpoint accepts.
 */
export const API_SCOPES = [
  'bills:read', 'bills:write', 'payments:read', 'refunds:write', 'payouts:read', 'payouts:write', 'balance:read',
] as const;

export type ApiScope = (typeof API_SCOPES)[number];

/** Scopes that move money out of the merchant's balance: the owner's to grant (not a developer's). */
export const MONEY_OUT_SCOPES: ReadonlySet<ApiScope> = new Set<ApiScope>(['refunds:write', 'payouts:write']);

export const isApiScope = (s: unknown): s is ApiScope => typeof s === 'string' && (API_SCOPES as readonly string[]).includes(s);

/** A key's token: `rk_live_` and 64 base64url characters (a live token is 64 characters, no prefix). */
export const KEY_TOKEN_PREFIX = 'rk_live_';
export const KEY_TOKEN_LENGTH = KEY_TOKEN_PREFIX.length + 64;

/**
 * True for a restricted key's token. Exact by length alone (a merchant's token is always 64
 * characters), so the live token's path never looks at the keys table, nor a key's at merchants.
 */
export const isKeyToken = (token: string): boolean => token.length === KEY_TOKEN_LENGTH && token.startsWith(KEY_TOKEN_PREFIX);
