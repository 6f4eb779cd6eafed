import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import {
  BANK, INACTIVE_BANK, balance, card, fund, insertAccount, payoutMerchant, personal, regular, sbp, seedBanks,
} from './helpers.js';

let t: TestApp;
let m: MerchantFixture;
let cardAccount: string;
beforeAll(async () => {
  t = await setupTestApp();
  await seedBanks(t);
  m = await payoutMerchant(t);
  await fund(t, m.merchantId, '1000');
  cardAccount = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
});
afterAll(async () => { await t.close(); });

async function payoutCount(merchantId: string): Promise<number> {
  const r = await t.db.pool.query('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [merchantId]);
  return r.rows[0].n;
}

/** Every refused request must leave nothing behind: no payout, no request, the balance as it was. */
async function expectUnchanged(merchantId: string, before: Awaited<ReturnType<typeof balance>>) {
  expect(await payoutCount(merchantId)).toBe(0);
  const r = await t.db.pool.query('SELECT count(*)::int AS n FROM payout_requests WHERE merchant_id = $1', [merchantId]);
  expect(r.rows[0].n).toBe(0);
  expect(await balance(t, merchantId)).toEqual(before);
}

const both = [
  ['personal', (f: MerchantFixture, amount: string, acc: string) => personal(t, f, { amount, payout_account_id: acc })],
  ['regular', (f: MerchantFixture, amount: string) => regular(t, f, card(amount))],
] as const;

describe.each(both)('payout/%s/create errors', (_name, send) => {
  it('401 Unauthenticated without a valid token', async () => {
    const res = await send({ ...m, auth: { authorization: 'Bearer nope' } }, '10', cardAccount);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ message: 'Unauthenticated.' });
  });

  it('a banned merchant gets 400 merchant_banned', async () => {
    const b = await payoutMerchant(t, { status: 'BANNED' });
    const res = await send(b, '10', await insertAccount(t, b.merchantId, { type: 'CARD', identifier: '4242424242424242' }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'api:error.merchant_banned' });
  });

  it('an inactive or missing subscription gets 400 with its key', async () => {
    for (const [subscription, key] of [['INACTIVE', 'merchant_subscription_inactive'], ['NONE', 'merchant_subscription_not_found']] as const) {
      const s = await payoutMerchant(t, { subscription });
      const res = await send(s, '10', await insertAccount(t, s.merchantId, { type: 'CARD', identifier: '4242424242424242' }));
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(`api:error.${key}`);
    }
  });

  it('an unverified merchant gets 400 merchant_not_verified and nothing is stored', async () => {
    const u = await payoutMerchant(t, { verified: false });
    await fund(t, u.merchantId, '100');
    const before = await balance(t, u.merchantId);
    const res = await send(u, '10', await insertAccount(t, u.merchantId, { type: 'CARD', identifier: '4242424242424242' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.merchant_not_verified');
    await expectUnchanged(u.merchantId, before);
  });

  it.each(['0', '100000000.00'])('amount %s (in the format, out of range) is 400 invalid_amount', async (amount) => {
    const res = await send(m, amount, cardAccount);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.invalid_amount');
  });

  it.each(['-5', '10.001', '1e9'])('amount %s is not the amount format: 422 on the field naming it', async (amount) => {
    const res = await send(m, amount, cardAccount);
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.amount[0]).toMatch(/digits with an optional dot and at most 2 decimals/);
  });

  it.each(['abc', '', '1,5'])('a non-numeric or missing amount (%j) is 422 with errors.amount', async (amount) => {
    const res = await send(m, amount, cardAccount);
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.amount).toBeDefined();
  });

  it('a balance that does not cover amount + commission is 400 balance_not_enough, nothing stored', async () => {
    const p = await payoutMerchant(t, { payoutCardPercent: '1', payoutCardFixed: '0' });
    await fund(t, p.merchantId, '100.99');
    const before = await balance(t, p.merchantId);
    // 100 + 1% = 101.00 > 100.99
    const res = await send(p, '100', await insertAccount(t, p.merchantId, { type: 'CARD', identifier: '4242424242424242' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.balance_not_enough');
    await expectUnchanged(p.merchantId, before);
  });

  it('over the daily limit is 400 daily_payout_limit_exceeded', async () => {
    const p = await payoutMerchant(t, { payoutDailyLimit: '50' });
    await fund(t, p.merchantId, '100');
    const res = await send(p, '50.01', await insertAccount(t, p.merchantId, { type: 'CARD', identifier: '4242424242424242' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.daily_payout_limit_exceeded');
  });

  it('over the monthly limit is 400 monthly_payout_limit_exceeded', async () => {
    const p = await payoutMerchant(t, { payoutMonthlyLimit: '50' });
    await fund(t, p.merchantId, '100');
    const res = await send(p, '50.01', await insertAccount(t, p.merchantId, { type: 'CARD', identifier: '4242424242424242' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.monthly_payout_limit_exceeded');
  });
});

describe('payout/personal/create errors of the payout account', () => {
  it('an unknown payout account is 400 payout_account_not_found', async () => {
    const res = await personal(t, m, { amount: '10', payout_account_id: 'nope' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.payout_account_not_found');
  });

  it("another merchant's payout account is 400 payout_account_not_found", async () => {
    const other = await payoutMerchant(t);
    const theirs = await insertAccount(t, other.merchantId, { type: 'CARD', identifier: '4242424242424242' });
    const res = await personal(t, m, { amount: '10', payout_account_id: theirs });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.payout_account_not_found');
  });

  it('a banned payout account is 400 payout_account_banned', async () => {
    const banned = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242', status: 'BANNED' });
    const res = await personal(t, m, { amount: '10', payout_account_id: banned });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.payout_account_banned');
  });

  it('an SBP account whose bank is not an active SBP member is 400 direction_not_available', async () => {
    const acc = await insertAccount(t, m.merchantId, { type: 'SBP', identifier: '+79161234567', bank: INACTIVE_BANK });
    const res = await personal(t, m, { amount: '10', payout_account_id: acc });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.direction_not_available');
  });

  it('a missing payout_account_id is 422 with errors.payout_account_id', async () => {
    const res = await personal(t, m, { amount: '10' });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toEqual(['payout_account_id']);
  });

  it('merchant_not_found when the merchant row is gone (service level: the auth hook finds it first over HTTP)', async () => {
    await expect(t.app.services.payouts.createPersonal({ id: 'no-such-merchant', verified: true }, { amount: new Decimal('10'), payoutAccountId: cardAccount }))
      .rejects.toMatchObject({ code: 'merchant_not_found' } satisfies Partial<DomainError>);
  });
});

describe('payout/regular/create errors', () => {
  it('without the grant: 403 "This action is unauthorized.", before any validation', async () => {
    const ng = await createMerchant(t, { merchant: { verified: true } });
    for (const payload of [card('10'), {}]) {
      const res = await regular(t, ng, payload);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ success: false, message: 'This action is unauthorized.' });
    }
  });

  it('an empty request lists every required field (422)', async () => {
    const res = await regular(t, m, {});
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors).sort()).toEqual(['account_identifier', 'account_type', 'amount', 'currency']);
  });

  it.each([
    ['currency other than RUB', card('10', { currency: 'USD' }), 'currency'],
    ['unknown account_type', card('10', { account_type: 'qiwi' }), 'account_type'],
    ['card failing Luhn', card('10', { account_identifier: '4242424242424241' }), 'account_identifier'],
    ['card too short', card('10', { account_identifier: '424242424242' }), 'account_identifier'],
    ['card with letters', card('10', { account_identifier: '4242abcd42424242' }), 'account_identifier'],
    ['card without card_holder', card('10', { card_holder: undefined }), 'card_holder'],
    ['phone not a Russian mobile', sbp('10', { account_identifier: '+1 555 123 4567' }), 'account_identifier'],
    ['phone too short', sbp('10', { account_identifier: '916123456' }), 'account_identifier'],
    ['sbp without account_bank', sbp('10', { account_bank: undefined }), 'account_bank'],
    ['account_bank not an integer', sbp('10', { account_bank: 'abc' }), 'account_bank'],
  ])('%s is 422 naming the field', async (_d, payload, field) => {
    const res = await regular(t, m, payload);
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors)).toEqual([field]);
  });

  it('an SBP bank that is unknown or not active is 400 direction_not_available', async () => {
    for (const bank of [INACTIVE_BANK, 123]) {
      const res = await regular(t, m, sbp('10', { account_bank: bank }));
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe('api:error.direction_not_available');
    }
  });

  it('phones are normalised to +7 and 10 digits; cards accepted with spaces', async () => {
    const res = await regular(t, m, sbp('1', { account_identifier: '8 (916) 123-45-67' }));
    expect(res.statusCode).toBe(200);
    expect(res.json().data[0].account_identifier).toBe('+79161234567');
    const res2 = await regular(t, m, card('1', { account_identifier: '4242 4242 4242 4242' }));
    expect(res2.statusCode).toBe(200);
    expect(res2.json().data[0].account_identifier).toBe('424242******4242');
    expect(BANK).toBeGreaterThan(0);
  });
});
