/**
 * A real request for every merchant operation, so the documents can be tried as they are: what a client sends, never a
 * generated `"string"`. Bodies for POSTs, query parameters for GETs.
 */
export const REQUEST_EXAMPLES: Record<string, { body?: Record<string, unknown>; query?: Record<string, string> }> = {
  'post /api/v1/bill/create': {
    body: {
      amount: 1500.5, shop_id: 'Zx8Wq2LmN4pR7tYv', order_id: 'order-1042', description: 'Order #1042: wool scarf', type: 'normal',
      currency_in: 'RUB', custom: 'cart=7781', payer_pays_commission: 0, save_payment_method: 1, name: 'Wool scarf', payment_method: 'BANK_CARD',
      ttl: 3600, payer_email: 'buyer@example.com', request_fields: ['email', 'phone'],
      items: [{ name: 'Wool scarf', price: '1450.50', quantity: 1 }, { name: 'Delivery', price: '50.00', quantity: 1 }],
    },
  },
  'post /api/v1/bill/toggle_activity': { body: { id: 'kD3vPq8Rz1', active: 0 } },
  'get /api/v1/bill/status': { query: { id: 'kD3vPq8Rz1' } },
  'get /api/v1/bill/search': { query: { start_date: '2026-11-01', finish_date: '2026-11-30', per_page: '50' } },
  'get /api/v1/bill/payments': { query: { id: 'kD3vPq8Rz1', per_page: '50' } },
  'get /api/v1/payment/status': { query: { id: 'Qm7Tz2Vb9KcX4wEr', refunds: 'true', chargeback: 'false' } },
  'get /api/v1/payment/search': { query: { start_date: '2026-11-01', finish_date: '2026-11-30', per_page: '50' } },
  'get /api/v1/merchant/balance': {},
  'post /api/v1/payment/charge': { body: { payment_method_id: 'Zq3LmN8pR2sT5vW7', amount: '990.00', currency: 'RUB', order_id: 'sub-2026-12', description: 'Subscription, December' } },
  'get /api/v1/payment/methods': {},
  'post /api/v1/payment/methods/revoke': { body: { payment_method_id: 'Zq3LmN8pR2sT5vW7' } },
  'post /api/v1/payout/personal/create': { body: { amount: 5000, payout_account_id: 'Ac7Rt2Pm9Lx', order_id: 'payout-2026-11-30' } },
  'post /api/v1/payout/regular/create': {
    body: { amount: 2500, currency: 'RUB', account_type: 'sbp', account_identifier: '79161234567', account_bank: 100000000111, order_id: 'payout-771' },
  },
  'get /api/v1/payout/status': { query: { id: 'Po4Kx9Tz2Wq' } },
  'get /api/v1/payout/search': { query: { start_date: '2026-11-01', finish_date: '2026-11-30', per_page: '50' } },
  'get /api/v1/payout/dictionaries/sbp_banks': {},
  'post /api/v1/refund/full/create': { body: { payment_id: 'Qm7Tz2Vb9KcX4wEr' } },
  'post /api/v1/refund/partial/create': { body: { payment_id: 'Qm7Tz2Vb9KcX4wEr', amount: 250.75 } },
  'get /api/v1/refund/status': { query: { payment_id: 'Qm7Tz2Vb9KcX4wEr' } },
  'get /api/v1/refund/search': { query: { start_date: '2026-11-01', finish_date: '2026-11-30', payment_id: 'Qm7Tz2Vb9KcX4wEr' } },
};

/**
 * Values a generator writes when nobody gave an example (`exampleOf`'s last resort is `"<name> example"`):
 * a document must not show them.
 */
export const PLACEHOLDERS = ['"string"', 'additionalProp1', '"2019-08-24', '"user@example.com"', ' example"'];
