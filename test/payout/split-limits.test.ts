import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitAmount } from '../../src/domain/payout/payout.service.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { balance, booksBalance, card, FAIL_CARD, fund, insertAccount, payoutMerchant, personal, regular, sbp, seedBanks } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
  await seedBanks(t);
});
afterAll(async () => { await t.close(); });

const sum = (xs: Array<{ amount: string }>) => xs.reduce((a, x) => a.add(x.amount), new Decimal(0)).toFixed(2);

describe('splitting', () => {
  it('400000 to a card with max 150000 -> 150000 + 150000 + 100000, in one response', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '400000');
    const res = await regular(t, m, card('400000'));
    expect(res.statusCode).toBe(200);
    const { data, success } = res.json();
    expect(success).toBe(true);
    expect(data.map((p: { amount: number }) => p.amount)).toEqual([150000, 150000, 100000]);
    expect(new Set(data.map((p: { id: string }) => p.id)).size).toBe(3);
    for (const p of data) {
      expect(p).toMatchObject({ status: 'PROCESS', currency: 'RUB', commission: 0, account_identifier: '424242******4242' });
      expect(p.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '400000.00', hold: '0.00' });
    expect(await booksBalance(t)).toEqual([]);
  });

  it('the split sum always equals the amount asked, the remainder last', () => {
    for (const [amount, max] of [['0.01', '150000'], ['150000', '150000'], ['150000.01', '150000'], ['99999999.99', '150000'], ['10', '3.33']]) {
      const parts = splitAmount(new Decimal(amount!), new Decimal(max!))!;
      expect(parts.reduce((a, x) => a.add(x), new Decimal(0)).toFixed(2)).toBe(new Decimal(amount!).toFixed(2));
      for (const p of parts) expect(p.lte(max!) && p.gt(0)).toBe(true);
    }
  });

  it('the per-type maximum is the merchant setting: SBP uses payout_max_sbp', async () => {
    const m = await payoutMerchant(t, { payoutMaxSbp: '1000' });
    await fund(t, m.merchantId, '2500');
    const res = await regular(t, m, sbp('2500'));
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((p: { amount: number }) => p.amount)).toEqual([1000, 1000, 500]);
  });

  it('personal payouts split by their account type too, each with its own commission', async () => {
    const m = await payoutMerchant(t, { payoutMaxCard: '100', payoutCardPercent: '1', payoutCardFixed: '0.50' });
    await fund(t, m.merchantId, '1000');
    const acc = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
    const res = await personal(t, m, { amount: '250', payout_account_id: acc });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(sum(data)).toBe('250.00');
    expect(data.map((p: { commission: number }) => p.commission)).toEqual([1.5, 1.5, 1]);
    expect(await balance(t, m.merchantId)).toEqual({ available: '746.00', locked: '250.00', hold: '4.00' });
  });

  it('all or none: a split whose last part the balance cannot cover stores nothing', async () => {
    const m = await payoutMerchant(t, { payoutMaxCard: '100' });
    await fund(t, m.merchantId, '250');
    const res = await regular(t, m, card('250.01'));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.balance_not_enough');
    const r = await t.db.pool.query('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchantId]);
    expect(r.rows[0].n).toBe(0);
    expect(await balance(t, m.merchantId)).toEqual({ available: '250.00', locked: '0.00', hold: '0.00' });
  });

  it('a split into more than 1000 payouts is refused as invalid_amount', async () => {
    const m = await payoutMerchant(t, { payoutMaxCard: '1' });
    await fund(t, m.merchantId, '2000');
    const res = await regular(t, m, card('1000.01'));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('api:error.invalid_amount');
  });
});

describe('limits', () => {
  it('daily limit: exactly the limit passes, a kopeck more fails', async () => {
    const m = await payoutMerchant(t, { payoutDailyLimit: '1000' });
    await fund(t, m.merchantId, '5000');
    expect((await regular(t, m, card('600'))).statusCode).toBe(200);
    const over = await regular(t, m, card('400.01'));
    expect(over.statusCode).toBe(400);
    expect(over.json().message).toBe('api:error.daily_payout_limit_exceeded');
    expect((await regular(t, m, card('400'))).statusCode).toBe(200);
    expect((await regular(t, m, card('0.01'))).json().message).toBe('api:error.daily_payout_limit_exceeded');
  });

  it('monthly limit: exactly the limit passes, a kopeck more fails', async () => {
    const m = await payoutMerchant(t, { payoutMonthlyLimit: '300.50' });
    await fund(t, m.merchantId, '5000');
    expect((await regular(t, m, card('300.50'))).statusCode).toBe(200);
    expect((await regular(t, m, card('0.01'))).json().message).toBe('api:error.monthly_payout_limit_exceeded');
  });

  it('payouts that ended FAIL, ERROR or DECLINED do not count; earlier days count for the month only', async () => {
    const m = await payoutMerchant(t, { payoutDailyLimit: '100', payoutMonthlyLimit: '150', moderationThreshold: '1000' });
    await fund(t, m.merchantId, '5000');
    // FAIL through the sandbox provider (a card ending 0002): the daily room is back.
    const failed = await regular(t, m, card('100', { account_identifier: FAIL_CARD }));
    expect(failed.statusCode).toBe(200);
    expect((await regular(t, m, card('0.01'))).json().message).toBe('api:error.daily_payout_limit_exceeded');
    await t.app.services.payouts.processDue();
    const row = await t.db.pool.query(`SELECT status FROM payouts WHERE id = $1`, [failed.json().data[0].id]);
    expect(row.rows[0].status).toBe('FAIL');
    const second = await regular(t, m, card('100'));
    expect(second.statusCode).toBe(200);
    // Move today's usage to an earlier day of this month when there is one: then it only counts monthly.
    const moved = await t.db.pool.query(
      `UPDATE payout_usage SET period_start = period_start - 1
        WHERE merchant_id = $1 AND period = 'D' AND extract(day FROM period_start) > 1 RETURNING 1`, [m.merchantId],
    );
    const movedToYesterday = moved.rowCount === 1;
    const third = await regular(t, m, card('50.01'));
    expect(third.json().message).toBe(movedToYesterday ? 'api:error.monthly_payout_limit_exceeded' : 'api:error.daily_payout_limit_exceeded');
    expect((await regular(t, m, card('50'))).statusCode).toBe(movedToYesterday ? 200 : 400);
  });

  it('a declined (moderated) payout gives its room back; usage follows every final status', async () => {
    const m = await payoutMerchant(t, { payoutDailyLimit: '300', moderationThreshold: '150' });
    await fund(t, m.merchantId, '5000');
    const moderated = await regular(t, m, card('200'));
    expect(moderated.json().data[0].status).toBe('MODERATING');
    expect((await regular(t, m, card('100.01'))).json().message).toBe('api:error.daily_payout_limit_exceeded');
    await t.app.services.payouts.decline(moderated.json().data[0].id);
    expect((await regular(t, m, card('100'))).statusCode).toBe(200);
    await t.app.services.payouts.processDue();
    const u = await t.db.pool.query(`SELECT period, amount::text FROM payout_usage WHERE merchant_id = $1 ORDER BY period`, [m.merchantId]);
    expect(u.rows).toEqual([{ period: 'D', amount: '100.00000000' }, { period: 'M', amount: '100.00000000' }]);
  });

  it('concurrent requests cannot pass a limit together: 20 x 100 against a daily limit of 1000 -> 10 accepted', async () => {
    const m = await payoutMerchant(t, { payoutDailyLimit: '1000' });
    await fund(t, m.merchantId, '100000');
    const res = await Promise.all(Array.from({ length: 20 }, () => regular(t, m, card('100'))));
    expect(res.filter((r) => r.statusCode === 200)).toHaveLength(10);
    expect(res.filter((r) => r.statusCode === 400).every((r) => r.json().message === 'api:error.daily_payout_limit_exceeded')).toBe(true);
    const s = await t.db.pool.query(`SELECT sum(amount)::text AS s FROM payouts WHERE merchant_id = $1`, [m.merchantId]);
    expect(new Decimal(s.rows[0].s).toFixed(2)).toBe('1000.00');
  });
});

describe('moderation', () => {
  it('a payout over the moderation threshold starts MODERATING; at the threshold it is PROCESS', async () => {
    const m = await payoutMerchant(t, { moderationThreshold: '500' });
    await fund(t, m.merchantId, '5000');
    expect((await regular(t, m, card('500'))).json().data[0].status).toBe('PROCESS');
    expect((await regular(t, m, card('500.01'))).json().data[0].status).toBe('MODERATING');
  });

  it('a split request over the threshold is moderated as a whole, even when each part is under it', async () => {
    const m = await payoutMerchant(t, { moderationThreshold: '150', payoutMaxCard: '100' });
    await fund(t, m.merchantId, '5000');
    const data = (await regular(t, m, card('200'))).json().data;
    expect(data.map((p: { status: string }) => p.status)).toEqual(['MODERATING', 'MODERATING']);
    // Money is locked while the operator decides.
    expect(await balance(t, m.merchantId)).toEqual({ available: '4800.00', locked: '200.00', hold: '0.00' });
  });
});
