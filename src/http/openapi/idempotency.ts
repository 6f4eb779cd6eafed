/**
 * `Idempotency-Key` as /docs shows it on every POST of the merchant API: what it dedupes, for how
 * long, what a repeat answers and which key to send (src/plugins/idempotency.ts holds the rules;
 * docs/adr/0004-idempotency-inside-the-business-transaction.md why the answer commits with the change).
 */

/** What else, besides the key, makes two requests one operation on each creating call. */
const WITHOUT_A_KEY: Record<string, string> = {
  '/api/v1/bill/create': 'Without a key every request makes a new bill.',
  '/api/v1/payment/charge': 'Charges are deduplicated **only** by this key: nothing else (not the card, the amount or `order_id`) makes two requests one charge, ' +
    'so a request repeated without a key, or with a new key, charges the card again. A charge keeps its key for good: the same key never charges again, ' +
    'even after the answer itself is no longer kept.',
  '/api/v1/payout/personal/create': 'Without a key, `order_id` dedupes too: the same `order_id` answers the payouts it made, with other fields it is a 422.',
  '/api/v1/payout/regular/create': 'Without a key, `order_id` dedupes too: the same `order_id` answers the payouts it made, with other fields it is a 422.',
  '/api/v1/refund/full/create': 'Without a key every request is a new refund (bounded by what the payment can still give back).',
  '/api/v1/refund/partial/create': 'Without a key every request is a new refund (bounded by what the payment can still give back).',
};

export function idempotencyHeader(path: string, ttlHours: number): Record<string, unknown> {
  const creating = WITHOUT_A_KEY[path];
  const description = [
    creating
      ? 'One key per operation you intend: e.g. your order id and attempt number (`order-1042-attempt-1`). Send the same key again on every retry of that request ' +
        '(a timeout, a lost answer, a 5xx), and a new key only for a new operation you mean (the next attempt after a FAIL, the next period of a subscription).'
      : 'Optional here (nothing is created): a repeat with the same key answers what the first request answered.',
    `**What it dedupes:** requests of your merchant account with the same key. The first answer is kept ${ttlHours} hours from the first request; ` +
      'within them a repeat with the same method, path, query and body is not run again: it gets the first answer (its status and body, a refusal too) ' +
      'with the header `Idempotent-Replayed: true`. The same key with other parameters is a 422 on `Idempotency-Key`; a repeat while the first request still runs is a 409 ' +
      'whose `Retry-After` says when to ask again (after a minute without an answer the first request is taken to be dead and a repeat runs it). A 5xx is not kept: ' +
      `the failed request changed nothing, so a repeat runs again. After ${ttlHours} hours the key is free and a request with it runs as new.`,
    ...(creating ? [creating] : []),
    'Format: 1 to 255 visible ASCII characters (else a 422 on `Idempotency-Key`).',
  ].join('\n\n');
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
    example: 'order-1042-attempt-1',
  };
}

/** On a success answer: whether it is the first request's, replayed. */
export const IDEMPOTENCY_REPLAY_HEADERS = {
  'Idempotent-Replayed': {
    description: '`true` when this is the answer kept for an earlier request with the same Idempotency-Key (nothing was done again); absent otherwise.',
    schema: { type: 'string', enum: ['true'] },
  },
};
