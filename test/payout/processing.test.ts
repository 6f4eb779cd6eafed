import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutService } from '../../src/domain/payout/payout.service.js';
import { ConnectorRefusedError, type CreatePayout, type OperationOutcome } from '../../src/domain/providers/connector.js';
import { ConnectorRegistry } from '../../src/domain/providers/registry.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';

/** A PayoutService whose `sandbox` connector answers payouts with `send`. */
function serviceWith(t: TestApp, send: (p: CreatePayout) => Promise<OperationOutcome>): PayoutService {
  const registry = new ConnectorRegistry(t.config, t.db);
  registry.override(new class extends SandboxConnector {
    override createPayout(p: CreatePayout) { return send(p); }
  }());
  return new PayoutService(t.config, t.db, registry);
}
import { payoutSignature } from '../../src/outbox/events.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { FAIL_CARD, FAIL_PHONE, balance, booksBalance, card, fund, insertAccount, payoutMerchant, personal, regular, sbp, seedBanks } from './helpers.js';
import { startOperationWorker } from '../../src/workers/operation-worker.js';
import { waitFor } from '../helpers/wait.js';

let t: TestApp;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
beforeAll(async () => {
  t = await setupTestApp();
  await seedBanks(t);
});
afterAll(async () => { await t.close(); });

const HOOK = 'http://127.0.0.1:9/payout-hook';

async function merchantWithHook(extra: Record<string, unknown> = {}) {
  const m = await payoutMerchant(t, { payoutWebhookUrl: HOOK, payoutCardPercent: '2', payoutCardFixed: '1', ...extra });
  await fund(t, m.merchantId, '1000');
  return m;
}

async function payoutStatus(id: string): Promise<string> {
  return (await t.db.pool.query('SELECT status FROM payouts WHERE id = $1', [id])).rows[0].status;
}

async function webhook(id: string) {
  const r = await t.db.pool.query(`SELECT url, status, payload FROM outbox_events WHERE kind = 'PAYOUT_WEBHOOK' AND aggregate_id = $1`, [id]);
  return r.rows;
}

const process = () => t.app.services.payouts.processDue();

describe('sandbox provider and the ledger after each final status', () => {
  it('SUCCESS debits the locked amount and the held commission; the webhook row carries every field', async () => {
    const m = await merchantWithHook();
    const p = (await regular(t, m, card('100'))).json().data[0];
    expect(p.commission).toBe(3);
    expect(await balance(t, m.merchantId)).toEqual({ available: '897.00', locked: '100.00', hold: '3.00' });
    expect(await process()).toBeGreaterThanOrEqual(1);
    expect(await payoutStatus(p.id)).toBe('SUCCESS');
    expect(await balance(t, m.merchantId)).toEqual({ available: '897.00', locked: '0.00', hold: '0.00' });
    expect(await booksBalance(t)).toEqual([]);
    const [ev] = await webhook(p.id);
    expect(ev.url).toBe(HOOK);
    expect(ev.status).toBe('PENDING');
    expect(ev.payload.fields).toEqual({
      TrsId: p.id, Amount: '100.00000000', IsAuto: 'false', Status: 'SUCCESS', Currency: 'RUB', Commission: '3.00000000',
      AccountType: 'BANK_CARD', AccountNumber: '424242******4242', BalanceAmount: '100.00000000',
      BalanceCommission: '3.00000000', BalanceCurrency: 'RUB', CommissionApplyType: 'sender',
    });
    // The signature is computed over exactly the posted Amount string.
    expect(payoutSignature(ev.payload.fields, m.token)).toMatch(/^[0-9A-F]{32}$/);
    const status = await t.app.inject({ method: 'GET', url: `/api/v1/payout/status?id=${p.id}`, headers: m.auth });
    expect(status.json()).toMatchObject({ id: p.id, status: 'SUCCESS', success: true });
  });

  it('a card ending 0002 FAILs: amount and commission return to available; webhook Status FAIL', async () => {
    const m = await merchantWithHook();
    const p = (await regular(t, m, card('100', { account_identifier: FAIL_CARD }))).json().data[0];
    await process();
    expect(await payoutStatus(p.id)).toBe('FAIL');
    expect(await balance(t, m.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
    expect(await booksBalance(t)).toEqual([]);
    expect((await webhook(p.id))[0].payload.fields).toMatchObject({ Status: 'FAIL', AccountNumber: '400000******0002', AccountType: 'BANK_CARD' });
  });

  it('an SBP phone ending 0002 FAILs; other phones succeed; AccountType SBP with the +7 phone', async () => {
    const m = await merchantWithHook({ payoutSbpPercent: '0', payoutSbpFixed: '0' });
    const bad = (await regular(t, m, sbp('10', { account_identifier: FAIL_PHONE }))).json().data[0];
    const acc = await insertAccount(t, m.merchantId, { type: 'SBP', identifier: '+79161234567' });
    const good = (await personal(t, m, { amount: '20', payout_account_id: acc })).json().data[0];
    await process();
    expect(await payoutStatus(bad.id)).toBe('FAIL');
    expect(await payoutStatus(good.id)).toBe('SUCCESS');
    expect((await webhook(good.id))[0].payload.fields).toMatchObject({ Status: 'SUCCESS', AccountType: 'SBP', AccountNumber: '+79161234567' });
    expect(await balance(t, m.merchantId)).toEqual({ available: '980.00', locked: '0.00', hold: '0.00' });
  });

  it('without a payout webhook URL the event is kept, undeliverable (DEAD)', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '10');
    const p = (await regular(t, m, card('10'))).json().data[0];
    await process();
    expect((await webhook(p.id))[0]).toMatchObject({ url: null, status: 'DEAD' });
  });

  it('a refusal by every connector on the first send is ERROR: the money returns and it is sent as FAIL', async () => {
    const m = await merchantWithHook();
    const p = (await regular(t, m, card('50'))).json().data[0];
    await serviceWith(t, async () => { throw new ConnectorRefusedError('http_503', 'bank said no'); }).processDue();
    expect(await payoutStatus(p.id)).toBe('ERROR');
    expect(await balance(t, m.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
    expect((await webhook(p.id))[0].payload.fields.Status).toBe('FAIL');
  });

  it('a thrown provider error (unknown) leaves the payout PROCESS; a refusal after it never fails it (the money may have moved)', async () => {
    const m = await merchantWithHook();
    const p = (await regular(t, m, card('50'))).json().data[0];
    expect(await serviceWith(t, async () => { throw new Error('connection reset'); }).processDue()).toBe(0);
    expect(await payoutStatus(p.id)).toBe('PROCESS');
    // Its next check is scheduled (backoff); made due at once here.
    await t.db.pool.query(`UPDATE payouts SET next_check_at = now() - interval '1 second' WHERE id = $1`, [p.id]);
    await serviceWith(t, async () => { throw new ConnectorRefusedError('http_503', 'bank said no'); }).processDue();
    expect(await payoutStatus(p.id)).toBe('PROCESS');
    expect(await balance(t, m.merchantId)).toEqual({ available: '948.00', locked: '50.00', hold: '2.00' });
    expect(await webhook(p.id)).toEqual([]);
  });

  it('a payout is not processed before its process_after', async () => {
    const m = await merchantWithHook();
    const p = (await regular(t, m, card('5'))).json().data[0];
    await t.db.pool.query(`UPDATE payouts SET process_after = now() + interval '1 hour' WHERE id = $1`, [p.id]);
    await process();
    expect(await payoutStatus(p.id)).toBe('PROCESS');
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = $1`, [p.id]);
  });

  it('concurrent workers finalise each payout once', async () => {
    const m = await merchantWithHook();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await regular(t, m, card('10'))).json().data[0].id);
    const calls: string[] = [];
    const services = Array.from({ length: 4 }, () => serviceWith(t, async (x) => { calls.push(x.payoutId); return { status: 'succeeded', ref: null }; }));
    await Promise.all(services.map((s) => s.processDue(3)));
    await Promise.all(services.map((s) => s.processDue(50)));
    const r = await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_DEBIT' AND ref_id = ANY($1)`, [ids]);
    expect(r.rows[0].n).toBe(10);
    // The provider was asked once per payout (the claim's lease keeps the other workers off).
    expect(calls.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    expect(await booksBalance(t)).toEqual([]);
  });

  it('the worker loop picks payouts up by itself and stops cleanly', async () => {
    const m = await merchantWithHook();
    const p = (await regular(t, m, card('7'))).json().data[0];
    const w = startOperationWorker({ config: t.config, db: t.db, services: t.app.services, log: t.app.log }, 'payout', { pollMs: 20 });
    await waitFor(async () => (await payoutStatus(p.id)) === 'SUCCESS', 'the payout picked up and SUCCESS', 10_000, 25).finally(() => w.stop());
    expect(await payoutStatus(p.id)).toBe('SUCCESS');
  });
});

describe('moderation by the operator', () => {
  async function moderated() {
    const m = await merchantWithHook({ moderationThreshold: '100' });
    const p = (await regular(t, m, card('200'))).json().data[0];
    expect(p.status).toBe('MODERATING');
    return { m, p };
  }

  it('a MODERATING payout is not sent to the provider', async () => {
    const { p } = await moderated();
    await process();
    expect(await payoutStatus(p.id)).toBe('MODERATING');
  });

  it('approve: MODERATING -> PROCESS, then the provider finishes it (SUCCESS debits)', async () => {
    const { m, p } = await moderated();
    const res = await t.app.inject({ method: 'POST', url: `/admin/v1/payouts/${p.id}/approve`, headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: p.id, status: 'PROCESS', merchant_id: m.merchantId });
    await process();
    expect(await payoutStatus(p.id)).toBe('SUCCESS');
    expect(await balance(t, m.merchantId)).toEqual({ available: '795.00', locked: '0.00', hold: '0.00' });
    expect(await booksBalance(t)).toEqual([]);
  });

  it('decline: MODERATING -> DECLINED, the money back to available, webhook Status DECLINED', async () => {
    const { m, p } = await moderated();
    const res = await t.app.inject({ method: 'POST', url: `/admin/v1/payouts/${p.id}/decline`, headers: admin, payload: { reason: 'suspicious' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('DECLINED');
    expect(await balance(t, m.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
    expect((await webhook(p.id))[0].payload.fields).toMatchObject({ Status: 'DECLINED', Amount: '200.00000000', Commission: '5.00000000' });
    expect(await booksBalance(t)).toEqual([]);
  });

  it('approve or decline of a payout that is not MODERATING is 409 and changes nothing; unknown id is 404', async () => {
    const { p } = await moderated();
    expect((await t.app.inject({ method: 'POST', url: `/admin/v1/payouts/${p.id}/decline`, headers: admin })).statusCode).toBe(200);
    for (const action of ['approve', 'decline']) {
      const res = await t.app.inject({ method: 'POST', url: `/admin/v1/payouts/${p.id}/${action}`, headers: admin });
      expect(res.statusCode).toBe(409);
      expect(res.json().message).toMatch(/DECLINED/);
    }
    expect(await payoutStatus(p.id)).toBe('DECLINED');
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/payouts/nope/approve', headers: admin })).statusCode).toBe(404);
  });

  it('concurrent approve and decline: exactly one wins', async () => {
    const { m, p } = await moderated();
    const res = await Promise.all(['approve', 'decline', 'approve', 'decline'].map((a) =>
      t.app.inject({ method: 'POST', url: `/admin/v1/payouts/${p.id}/${a}`, headers: admin })));
    expect(res.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(res.filter((r) => r.statusCode === 409)).toHaveLength(3);
    await process();
    const b = await balance(t, m.merchantId);
    expect(['795.00', '1000.00']).toContain(b.available);
    expect(await booksBalance(t)).toEqual([]);
  });

  it('the operator lists payouts by status; the operator API needs its token', async () => {
    await moderated();
    const res = await t.app.inject({ method: 'GET', url: '/admin/v1/payouts?status=MODERATING', headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.length).toBeGreaterThan(0);
    expect(res.json().data.every((p: { status: string }) => p.status === 'MODERATING')).toBe(true);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/payouts?status=NOPE', headers: admin })).statusCode).toBe(422);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/payouts' })).statusCode).toBe(401);
  });
});
