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

/** The error body: `success: false` and the message (the key), plus the fields of a 422. */
export const ERROR_BODY = {
  type: 'object',
  required: ['success', 'message'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    message: { type: 'string', description: 'The error key (api:error.*) or the spec\'s words' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'A 422\'s messages by field' },
  },
};

/** The OpenAPI responses for an error list: each status with its keys, each key an example body. */
export function errorResponses(list: ErrorList): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, keys] of Object.entries(list)) {
    const examples: Record<string, { summary: string; value: unknown }> = {};
    for (const k of keys!) {
      examples[k] = { summary: k, value: k === INVALID ? { success: false, message: k, errors: { amount: ['The amount field is required.'] } } : { success: false, message: k } };
      if (k === 'api:error.balance_not_enough' && status === '422') examples[k]!.value = { success: false, message: k, errors: { amount: ['The amount would take the available balance below zero.'] } };
    }
    out[status] = {
      description: keys!.map((k) => `\`${k}\``).join(', '),
      'x-error-keys': keys,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
    };
  }
  return out;
}
