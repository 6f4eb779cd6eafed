/**
 * The error responses of each merchant operation, as the spec lists them (payment-api.md part
 * 4, authoritative per endpoint; part 7 for what a key means). Operations the spec gives no list
 * for get the errors every merchant call can answer. Messages without a key are the spec's
 * words ("Unauthenticated.", "This action is unauthorized"); a 422 without a key carries the
 * fields (Laravel-style `errors`).
 */
export type ErrorList = Partial<Record<'400' | '401' | '403' | '404' | '409' | '422' | '429' | '500' | '503', string[]>>;

const SUB = ['api:error.merchant_banned', 'api:error.merchant_subscription_inactive', 'api:error.merchant_subscription_not_found', 'api:error.merchant_not_found'];
const INVALID = 'The given data was invalid.';
const UNAUTHORIZED = 'This action is unauthorized.';
const COMMON: ErrorList = { 401: ['Unauthenticated.'], 429: ['Too Many Attempts.'] };
const SEARCH: ErrorList = { ...COMMON, 403: ['api:error.merchant_banned'], 422: [INVALID] };
const PAYOUT_CREATE: ErrorList = {
  ...COMMON,
  400: ['api:error.invalid_amount', ...SUB, 'api:error.payout_account_not_found', 'api:error.payout_account_banned',
    'api:error.daily_payout_limit_exceeded', 'api:error.monthly_payout_limit_exceeded', 'api:error.balance_not_enough',
    'api:error.direction_not_available', 'api:error.merchant_not_verified'],
  422: [INVALID], 500: ['api:error.general_error'],
};
const REFUND_CREATE: ErrorList = {
  ...COMMON, 400: ['api:error.balance_not_enough'], 403: ['api:error.merchant_banned', 'api:error.merchant_not_found', UNAUTHORIZED],
  422: [INVALID], 500: ['api:error.general_error'],
};

export const MERCHANT_ERRORS: Record<string, ErrorList> = {
  'post /api/v1/bill/create': {
    ...COMMON,
    403: ['api:error.invalid_amount', ...SUB, 'api:error.shop_not_found', 'api:error.shop_not_enabled', 'api:error.access_denied', 'api:error.rate-not-found'],
    422: [INVALID], 500: ['api:error.general_error'],
  },
  'post /api/v1/bill/toggle_activity': { ...COMMON, 403: [...SUB, 'api:error.bill_is_finished'], 422: ['api:error.bill_not_found', INVALID], 500: ['api:error.general_error'] },
  'get /api/v1/bill/payments': { ...COMMON, 400: ['api:error.too_many_payments'], 403: ['api:error.merchant_not_found', 'api:error.merchant_banned', 'api:error.bill_not_found'] },
  'get /api/v1/bill/status': { ...COMMON, 403: ['api:error.merchant_banned'], 422: ['api:error.bill_not_found'] },
  'get /api/v1/bill/search': SEARCH,
  'get /api/v1/payment/status': { ...COMMON, 403: ['api:error.merchant_banned'], 422: ['api:error.payment_not_found'] },
  'get /api/v1/payment/search': SEARCH,
  'post /api/v1/payment/charge': {
    ...COMMON,
    403: ['api:error.invalid_amount', ...SUB, 'api:error.shop_not_found', 'api:error.shop_not_enabled', 'api:error.insufficient_scope', 'api:error.rate-not-found'],
    422: ['api:error.payment_method_not_found', 'api:error.method_unavailable', INVALID], 500: ['api:error.general_error'],
  },
  'get /api/v1/payment/methods': { ...COMMON, 403: ['api:error.merchant_banned', 'api:error.insufficient_scope'] },
  'post /api/v1/payment/methods/revoke': { ...COMMON, 403: ['api:error.merchant_banned', 'api:error.insufficient_scope'], 422: ['api:error.payment_method_not_found', INVALID] },
  'get /api/v1/merchant/balance': { ...COMMON, 403: SUB, 422: [INVALID] },
  'post /api/v1/payout/personal/create': PAYOUT_CREATE,
  'post /api/v1/payout/regular/create': { ...PAYOUT_CREATE, 403: [UNAUTHORIZED] },
  'get /api/v1/payout/status': { ...COMMON, 403: SUB, 422: ['api:error.payout_not_found', INVALID] },
  'get /api/v1/payout/search': SEARCH,
  'get /api/v1/payout/dictionaries/sbp_banks': { ...COMMON, 403: ['api:error.merchant_banned'], 422: [INVALID] },
  'post /api/v1/refund/full/create': REFUND_CREATE,
  'post /api/v1/refund/partial/create': REFUND_CREATE,
  'get /api/v1/refund/status': { ...COMMON, 403: ['api:error.merchant_banned', 'api:error.merchant_not_found', UNAUTHORIZED], 422: [INVALID], 500: ['api:error.general_error'] },
  'get /api/v1/refund/search': { ...SEARCH, 403: ['api:error.merchant_banned', UNAUTHORIZED] },
  'post /pay/{bill_id}': { 403: ['api:error.bill_not_found', 'api:error.bill_is_finished', 'api:error.shop_not_enabled'], 404: ['api:error.bill_not_found'], 422: [INVALID], 429: ['Too Many Attempts.'] },
  'get /pay/{bill_id}/payments/{payment_id}': { 404: ['api:error.payment_not_found'] },
};

/**
 * The operator API's errors beyond the ones every operator call can answer (401, 403, 422 and,
 * with an id in the path, 404): a debit the balance cannot cover, a reset link with no mail.
 */
export const OPERATOR_EXTRA_ERRORS: Record<string, ErrorList> = {
  'post /admin/v1/payments/{id}/chargebacks': { 422: [INVALID, 'api:error.balance_not_enough'] },
  'post /admin/v1/merchants/{id}/balance-adjustments': { 422: [INVALID, 'api:error.balance_not_enough'] },
  'post /admin/v1/merchants/{id}/password-reset': { 503: ['Outgoing mail is not configured (SMTP_URL): no reset link can be sent.'] },
};

export const IDEMPOTENCY_IN_PROGRESS = 'A request with this Idempotency-Key is in progress.';

/**
 * What each message the merchant API (and the operator API) can answer means, one sentence each.
 * Keys the spec defines open with the spec's own meaning (payment-api.md part 7); the rest of the
 * sentence says when this service answers it and what to do.
 */
export const ERROR_MEANINGS: Record<string, string> = {
  'Unauthenticated.': 'Invalid or missing API token: send `Authorization: Bearer <token>` with the current token (a refreshed token stops the old one at once).',
  'This action is unauthorized.': 'Merchant has no access to this API: refunds and regular payouts need a grant, asked for from support.',
  [INVALID]: 'Invalid or missing request data: `errors` names each field with its messages; nothing was created or changed.',
  'Too Many Attempts.': 'Too many requests from this token or address: wait for the seconds in `Retry-After` and send again.',
  [IDEMPOTENCY_IN_PROGRESS]: 'The first request with this Idempotency-Key is still running: send the same request again after the seconds in `Retry-After` to get its answer.',
  'Not Found.': 'No such object, or no such path.',
  'Outgoing mail is not configured (SMTP_URL): no reset link can be sent.': 'The service has no outgoing mail configured (SMTP_URL), so no reset link can be sent.',
  'api:error.invalid_amount': 'Invalid amount: zero, or above 99,999,999.99 (an amount in a wrong format is a 422 on its field).',
  'api:error.merchant_banned': 'Merchant is blocked: the operator has banned the account; nothing can be created until support lifts it.',
  'api:error.merchant_not_found': 'Merchant not found: the account behind the token is gone.',
  'api:error.merchant_subscription_inactive': 'Subscription not active: the merchant\'s subscription has lapsed; renew it with support.',
  'api:error.merchant_subscription_not_found': 'Merchant has no subscription: ask support to start one.',
  'api:error.merchant_not_verified': 'Merchant does not have Verified status: payouts need a verified merchant.',
  'api:error.ip_access_denied': 'The request came from an address outside the merchant\'s API allow-list (cabinet: API integration).',
  'api:error.insufficient_scope': 'The restricted API key used lacks the scope this endpoint needs (or the endpoint takes the merchant\'s own token only).',
  'api:error.shop_not_found': 'Shop not found: no shop of yours has this shop_id.',
  'api:error.shop_not_enabled': 'Shop or merchant deactivated: the shop cannot take payments now.',
  'api:error.access_denied': 'Merchant has no access to the shop: the shop_id is another merchant\'s.',
  'api:error.rate-not-found': 'Invalid currency or country: no fee rate is set for this currency and method, so the payment cannot be taken.',
  'api:error.bill_not_found': 'Bill not found: no bill of yours has this id (a test bill is unknown to the live token, and the reverse).',
  'api:error.bill_is_finished': 'NORMAL bill is already paid, cannot be toggled (nor paid again).',
  'api:error.payment_not_found': 'Payment not found: no payment of yours has this id.',
  'api:error.payment_method_not_found': 'No saved card of yours has this payment_method_id in this mode, or it was revoked.',
  'api:error.method_unavailable': 'No connector can take this payment now (for a saved card: the connector that saved it is disabled or gone).',
  'api:error.too_many_payments': 'Too many payments requested at once: ask for fewer (per_page) and follow the cursor.',
  'api:error.payout_not_found': 'Payout not found: no payout of yours has this id or order_id.',
  'api:error.payout_account_not_found': 'Payout account not found: no payout account of yours has this payout_account_id.',
  'api:error.payout_account_banned': 'Payout account blocked: the operator has banned this account.',
  'api:error.daily_payout_limit_exceeded': 'Daily payout limit exceeded: the payouts of the day would pass the merchant\'s daily limit.',
  'api:error.monthly_payout_limit_exceeded': 'Monthly payout limit exceeded: the payouts of the month would pass the merchant\'s monthly limit.',
  'api:error.balance_not_enough': 'Not enough balance (payout or refund): the available balance cannot cover the amount and its fees.',
  'api:error.direction_not_available': 'Account cannot be used for this payout (or refund): no connector serves this card, SBP bank or method now.',
  'api:error.bill_expired': 'The bill\'s ttl has passed: it takes no payment any more.',
  'api:error.bill_inactive': 'The bill was deactivated (bill/toggle_activity with active=0): it takes no payment until activated.',
  'api:error.payment_in_progress': 'A payment of this bill is still in progress: wait for its outcome before paying again.',
  'api:error.too_many_attempts': 'Too many payment attempts on this bill or from this address: wait for the seconds in `Retry-After`.',
  'api:error.general_error': 'Internal error (500): nothing was changed; send the same request again later (with the same Idempotency-Key).',
};

/** The error body: `success: false` and the message (the key), plus the fields of a 422. */
export const ERROR_BODY = {
  type: 'object',
  required: ['success', 'message'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    message: { type: 'string', description: 'The error key (api:error.*) or the spec\'s words; ErrorKey lists each with its meaning' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'A 422\'s messages by field' },
  },
};

/** The OpenAPI responses for an error list: each status with its keys, each key an example body. */
export function errorResponses(list: ErrorList): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, keys] of Object.entries(list)) {
    const examples: Record<string, { summary: string; description?: string; value: unknown }> = {};
    for (const k of keys!) {
      examples[k] = { summary: k, ...(ERROR_MEANINGS[k] ? { description: ERROR_MEANINGS[k] } : {}), value: k === INVALID ? { success: false, message: k, errors: { amount: ['The amount field is required.'] } } : { success: false, message: k } };
      if (k === 'api:error.balance_not_enough' && status === '422') examples[k]!.value = { success: false, message: k, errors: { amount: ['The amount would take the available balance below zero.'] } };
    }
    out[status] = {
      description: keys!.map((k) => (ERROR_MEANINGS[k] ? `\`${k}\`: ${ERROR_MEANINGS[k]}` : `\`${k}\``)).join('\n\n'),
      'x-error-keys': keys,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
    };
  }
  return out;
}
