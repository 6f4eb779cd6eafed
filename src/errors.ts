/**
 * Every key the service answers with (`api:error.<code>`) and its usual status. The spec lists
 * a status per endpoint, and a few endpoints differ from the usual one (merchant_banned is 400
 * on payout creation, bill_not_found 403 on the payment list): those routes override it in
 * their `config.errorStatus`, which the error handler reads first.
 */
export const ERROR_STATUS = {
  // Who is asking: the merchant and its shop.
  merchant_banned: 403,
  merchant_not_found: 403,
  merchant_subscription_inactive: 403,
  merchant_subscription_not_found: 403,
  merchant_not_verified: 400,
  ip_access_denied: 403,
  // A restricted API key used outside its scopes (src/http/api-scopes.ts).
  insufficient_scope: 403,
  shop_not_found: 403,
  shop_not_enabled: 403,
  access_denied: 403,
  'rate-not-found': 403,
  // What they ask about.
  bill_not_found: 422,
  bill_is_finished: 403,
  bill_inactive: 403,
  bill_expired: 403,
  payment_not_found: 422,
  // A saved card unknown, another merchant's, of the other mode or revoked (docs/adr/0074-saved-cards-and-recurring-charges.md).
  payment_method_not_found: 422,
  payment_in_progress: 409,
  too_many_payments: 400,
  too_many_attempts: 429,
  // No connector may take the payer's method now (production: no enabled live-mode connector).
  method_unavailable: 422,
  payout_not_found: 422,
  // Money rules.
  invalid_amount: 400,
  balance_not_enough: 400,
  daily_payout_limit_exceeded: 400,
  monthly_payout_limit_exceeded: 400,
  payout_account_not_found: 400,
  payout_account_banned: 400,
  direction_not_available: 400,
} as const satisfies Record<string, number>;

/** A key the service may answer with: a misspelt one does not compile. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** A route's statuses where the spec lists other than the usual one for this endpoint. */
export type ErrorStatusMap = Partial<Record<ErrorCode, number>>;

/** A refusal with the spec's key; its status is the code's usual one unless the route overrides it. */
export class DomainError extends Error {
  readonly status: number;
  constructor(public readonly code: ErrorCode) {
    super(`api:error.${code}`);
    this.status = ERROR_STATUS[code];
  }
}

export function isErrorCode(s: string): s is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, s);
}

/** 422 with Laravel-style `errors: { field: [messages] }`. */
export class ValidationError extends Error {
  constructor(public readonly errors: Record<string, string[]>) {
    super('The given data was invalid.');
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

/** 401 Unauthenticated. */
export class UnauthenticatedError extends Error {
  constructor() { super('Unauthenticated.'); }
}

/** 403 for a missing grant. */
export class UnauthorizedActionError extends Error {
  constructor() { super('This action is unauthorized.'); }
}

/** 404 for the operator API and pages. */
export class NotFoundError extends Error {
  constructor(what = 'Not Found.') { super(what); }
}

/** 409, e.g. an Idempotency-Key request still running. */
export class ConflictError extends Error {}
