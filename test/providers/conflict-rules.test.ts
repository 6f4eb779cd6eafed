import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONFLICT_REASON, contradicts, contradictsStatus, endHold, holdsMoney, isProviderRead, moneyMoved, recordConflict, recordUnconfirmed, silentConflictLog, type ConflictLog,
} from '../../src/domain/providers/conflict.js';
import type { OperationType } from '../../src/domain/operation-type.js';
import { adjustment } from '../../src/domain/ledger/postings.js';
import { withPgTx } from '../../src/db/client.js';
import { isNotFound, lastHeard, lockOpenAttention, parseResolution, pastDeadline } from '../../src/domain/operations/reconcile.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createServices } from '../../src/services.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { card, FAIL_CARD, fund, payoutMerchant, regular } from '../payout/helpers.js';
import { grantedMerchant, refundPartial } from '../refund/helpers.js';

/**
 * The rules of a provider's word against a final state, per object (docs/adr/0021-provider-answer-after-final-state.md):
 * which statuses moved money, which are final for a conflict, which ways of hearing are reads,
 * and the unconfirmed conflict (a notification no read could confirm) of a payment, a refund and
 * a payout, with reconciliation's small rules (not found, last heard, the operator's outcome, the
 * provider's deadline). The conflicts test drives whole flows, mostly through payouts; this one pins each
 * table's row (found missing by mutation testing, docs/testing.md).
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ SANDBOX_PROCESSING_DELAY_MS: '0' }); });
afterAll(async () => { await t?.close(); });

const notified = (status: 'succeeded' | 'failed') => ({ status, ref: null, via: 'notification' });
const item = async (objectId: string) =>
  (await t.db.pool.query(`SELECT object_type, merchant_id, connector, kind, reason, last_heard FROM attention_items WHERE object_id = $1 AND kind = 'conflict'`, [objectId])).rows;

describe('what a conflict compares', () => {
  it('only a read of the provider tells its current state; a notification alone does not', () => {
    for (const via of ['reconciliation', 'read', 'resolve', 'notification+read']) expect(isProviderRead(via), via).toBe(true);
    for (const via of ['notification', '', 'Read']) expect(isProviderRead(via), via).toBe(false);
  });

  it('money moved: a payment SUCCESS, UNDERPAID or OVERPAID; a payout or refund SUCCESS only', () => {
    const moved = (o: OperationType, statuses: string[]) => statuses.filter((s) => moneyMoved(o, s));
    expect(moved('payment', ['NEW', 'PROCESS', 'SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'])).toEqual(['SUCCESS', 'UNDERPAID', 'OVERPAID']);
    expect(moved('payout', ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'])).toEqual(['SUCCESS']);
    expect(moved('refund', ['NEW', 'PROCESS', 'SUCCESS', 'FAIL'])).toEqual(['SUCCESS']);
  });

  it('a final answer contradicts a final status the other way only; a non-final, unknown or missing status is never contradicted', () => {
    expect(contradicts(true, 'failed')).toBe(true);
    expect(contradicts(false, 'succeeded')).toBe(true);
    expect(contradicts(true, 'succeeded')).toBe(false);
    expect(contradicts(false, 'failed')).toBe(false);
    const against = (o: OperationType, p: 'succeeded' | 'failed', statuses: string[]) => statuses.filter((s) => contradictsStatus(o, s, p));
    expect(against('payment', 'failed', ['NEW', 'PROCESS', 'SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'])).toEqual(['SUCCESS', 'UNDERPAID', 'OVERPAID']);
    expect(against('payment', 'succeeded', ['NEW', 'PROCESS', 'SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'])).toEqual(['FAIL']);
    // A DECLINED payout never reached the provider: nothing of the provider's contradicts it.
    expect(against('payout', 'succeeded', ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'])).toEqual(['FAIL', 'ERROR']);
    expect(against('payout', 'failed', ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'])).toEqual(['SUCCESS']);
    expect(against('refund', 'succeeded', ['NEW', 'PROCESS', 'SUCCESS', 'FAIL'])).toEqual(['FAIL']);
    expect(against('refund', 'failed', ['NEW', 'PROCESS', 'SUCCESS', 'FAIL'])).toEqual(['SUCCESS']);
    expect(contradictsStatus('payment', null, 'succeeded')).toBe(false);
    expect(contradictsStatus('payment', null, 'failed')).toBe(false);
  });
});

describe("the provider's deadline (RECONCILE_GIVE_UP_MS)", () => {
  it('is past from the very millisecond it is reached; never for an operation not sent yet', () => {
    const sent = new Date(1_000_000);
    expect(pastDeadline(sent, 60_000, 1_059_999)).toBe(false);
    expect(pastDeadline(sent, 60_000, 1_060_000)).toBe(true);
    expect(pastDeadline(sent, 60_000, 1_060_001)).toBe(true);
    expect(pastDeadline(null, 60_000, 1_060_000)).toBe(false);
    expect(pastDeadline(null, 0, 0)).toBe(false);
  });
});

describe('what reconciliation keeps and accepts', () => {
  it("not found: the sandbox's failed not_found, or a connector's refused <kind>:no_ref; nothing else", () => {
    expect(isNotFound({ status: 'failed', code: 'not_found', message: 'm', ref: null } as never)).toBe(true);
    expect(isNotFound({ status: 'refused', code: 'payout:no_ref', message: 'm' } as never)).toBe(true);
    expect(isNotFound({ status: 'failed', code: 'declined', message: 'm', ref: null } as never)).toBe(false);
    expect(isNotFound({ status: 'refused', code: 'not_found', message: 'm' } as never)).toBe(false);
    expect(isNotFound({ status: 'refused', code: 'bad_request', message: 'm' } as never)).toBe(false);
    expect(isNotFound({ status: 'succeeded', ref: 'r' } as never)).toBe(false);
    expect(isNotFound({ status: 'unknown', ref: null, reason: 'timeout' } as never)).toBe(false);
  });

  it('last heard keeps only the fields the answer has (no empty keys), and a reference only when there is one', () => {
    expect(Object.keys(lastHeard({ status: 'pending' })).sort()).toEqual(['at', 'status']);
    expect(Object.keys(lastHeard({ status: 'unknown', ref: null, reason: 'timeout' } as never)).sort()).toEqual(['at', 'reason', 'status']);
    const h = lastHeard({ status: 'failed', code: 'c', message: 'm', ref: 'r1' } as never);
    expect(Object.keys(h).sort()).toEqual(['at', 'code', 'message', 'ref', 'status']);
    expect(h).toMatchObject({ status: 'failed', code: 'c', message: 'm', ref: 'r1' });
  });

  it("an operator's outcome is SUCCESS or FAIL, else 422 on outcome with the reason", () => {
    expect(parseResolution('SUCCESS')).toBe('SUCCESS');
    expect(parseResolution('FAIL')).toBe('FAIL');
    let err: unknown;
    try { parseResolution('success'); } catch (e) { err = e; }
    expect((err as { errors?: unknown }).errors).toEqual({ outcome: ['The outcome must be SUCCESS or FAIL.'] });
  });

  it('an attention item to resolve: 404 when there is none of that type, 409 naming its resolution when resolved already', async () => {
    const m = await grantedMerchant(t);
    await t.db.pool.query(
      `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, reason, resolved_at, resolution)
       VALUES ('att_rules_1', 'payout', 'po_rules_1', $1, 'sandbox', 'r', now(), 'FAIL')`, [m.merchantId]);
    await expect(withPgTx(t.db.pool, (c) => lockOpenAttention(c, 'att_rules_1', 'refund'))).rejects.toThrow('Attention item not found.');
    await expect(withPgTx(t.db.pool, (c) => lockOpenAttention(c, 'att_rules_1', 'payout'))).rejects.toThrow('Attention item is resolved already (FAIL).');
  });
});

describe('an unconfirmed conflict (a notification no read could confirm)', () => {
  const unconfirmed = (objectType: OperationType, objectId: string, p: 'succeeded' | 'failed') =>
    recordUnconfirmed(t.db.pool, { objectType, objectId, connector: 'sandbox', provider: notified(p) });
  const expectItem = async (objectType: OperationType, objectId: string, merchantId: string, ours: string, provider: 'succeeded' | 'failed') => {
    const rows = await item(objectId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ object_type: objectType, merchant_id: merchantId, connector: 'sandbox', kind: 'conflict', reason: CONFLICT_REASON });
    expect(rows[0].last_heard).toMatchObject({
      ours: { status: ours, set_by: 'service', set_at: null },
      provider: { status: provider, ref: null, via: 'notification' },
      // Money the provider says left (a payout or refund it says it made) is held meanwhile; nothing else moves.
      money: provider === 'succeeded' && objectType !== 'payment'
        ? { transfer: null, held: { transfer: `${objectType.toUpperCase()}_CONFLICT_HOLD:${objectId}` } }
        : { transfer: null, note: 'not moved: a read of the provider could not confirm its notification; the operator decides' },
    });
  };

  it('of a payment: recorded against UNDERPAID, OVERPAID and FAIL once each, never against PROCESS or a payment that does not exist', async () => {
    const m = await grantedMerchant(t);
    const under = await createPaidPayment(t, m, { status: 'UNDERPAID', accountAmount: '50.00' });
    expect(await unconfirmed('payment', under.paymentId, 'failed')).toBe(true);
    await expectItem('payment', under.paymentId, m.merchantId, 'UNDERPAID', 'failed');
    expect(await unconfirmed('payment', under.paymentId, 'failed')).toBe(false);
    expect(await item(under.paymentId)).toHaveLength(1);

    const over = await createPaidPayment(t, m, { status: 'OVERPAID', accountAmount: '120.00' });
    expect(await unconfirmed('payment', over.paymentId, 'succeeded')).toBe(false);
    expect(await unconfirmed('payment', over.paymentId, 'failed')).toBe(true);
    await expectItem('payment', over.paymentId, m.merchantId, 'OVERPAID', 'failed');

    const failed = await createPaidPayment(t, m, { status: 'FAIL' });
    expect(await unconfirmed('payment', failed.paymentId, 'succeeded')).toBe(true);
    await expectItem('payment', failed.paymentId, m.merchantId, 'FAIL', 'succeeded');

    const pending = await createPaidPayment(t, m, { status: 'PROCESS' });
    expect(await unconfirmed('payment', pending.paymentId, 'succeeded')).toBe(false);
    expect(await unconfirmed('payment', 'no-such-payment', 'succeeded')).toBe(false);
    expect(await item(pending.paymentId)).toEqual([]);
  });

  it('of a refund: recorded against its SUCCESS and its FAIL, read from the refunds table', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const ok = (await refundPartial(t, m, p.paymentId, '10.00')).json().id as string;
    const p2 = await createPaidPayment(t, m, { amount: '100.00', fromCard: '555555******4444' });
    const bad = (await refundPartial(t, m, p2.paymentId, '10.00')).json().id as string;
    await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE id = ANY($1)`, [[ok, bad]]);
    while ((await t.app.services.refunds.processDue()) > 0);
    const st = (await t.db.pool.query(`SELECT id, status::text FROM refunds WHERE id = ANY($1)`, [[ok, bad]])).rows;
    expect(Object.fromEntries(st.map((r) => [r.id, r.status]))).toEqual({ [ok]: 'SUCCESS', [bad]: 'FAIL' });

    expect(await unconfirmed('refund', ok, 'succeeded')).toBe(false);
    expect(await unconfirmed('refund', ok, 'failed')).toBe(true);
    await expectItem('refund', ok, m.merchantId, 'SUCCESS', 'failed');
    expect(await unconfirmed('refund', bad, 'succeeded')).toBe(true);
    await expectItem('refund', bad, m.merchantId, 'FAIL', 'succeeded');
  });

  it('of a payout: recorded against its FAIL, read from the payouts table', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '1000');
    const res = await regular(t, m, card('100', { account_identifier: FAIL_CARD }));
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().data[0].id as string;
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = $1`, [id]);
    while ((await t.app.services.payouts.processDue()) > 0);
    expect((await t.db.pool.query(`SELECT status::text FROM payouts WHERE id = $1`, [id])).rows[0].status).toBe('FAIL');
    expect(await unconfirmed('payout', id, 'failed')).toBe(false);
    expect(await unconfirmed('payout', id, 'succeeded')).toBe(true);
    await expectItem('payout', id, m.merchantId, 'FAIL', 'succeeded');
    expect((await t.db.pool.query(`SELECT kind::text FROM ledger_transfers WHERE ref_id = $1 ORDER BY created_at, kind`, [id])).rows.map((r) => r.kind))
      .toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD']);
    expect(await unconfirmed('payout', id, 'succeeded')).toBe(false);
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).rows[0].n).toBe(3);
    // The item says the money is held and why, and counts as holding it.
    const heard = (await item(id))[0].last_heard;
    expect(heard.money).toMatchObject({ transfer: null, held: { transfer: `PAYOUT_CONFLICT_HOLD:${id}` } });
    expect(heard.money.note).toBe('held from available: a read of the provider could not confirm its notification yet; a confirming read or the operator (SUCCESS: it was made, FAIL: it was not) ends the hold');
    expect(holdsMoney(heard)).toBe(true);

    // The hold ends once: its legs back the way they came; a second end finds it ended.
    const ended = await withPgTx(t.db.pool, (c) => endHold(c, 'payout', id));
    expect(ended).toMatchObject({ kind: 'PAYOUT_CONFLICT_RELEASE', refType: 'payout', refId: id, merchantId: m.merchantId });
    expect(await withPgTx(t.db.pool, (c) => endHold(c, 'payout', id))).toBeNull();
    expect((await t.db.pool.query(`SELECT kind::text FROM ledger_transfers WHERE ref_id = $1 ORDER BY created_at, kind`, [id])).rows.map((r) => r.kind))
      .toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD', 'PAYOUT_CONFLICT_RELEASE']);
    // Nothing to end for an object that holds nothing, nor for a payment (money in is never held).
    expect(await withPgTx(t.db.pool, (c) => endHold(c, 'refund', 'rf_without_hold'))).toBeNull();
    expect(await withPgTx(t.db.pool, (c) => endHold(c, 'payment', id))).toBeNull();
  });
});

describe('whether a conflict item holds money', () => {
  it('only while its money is held, no transfer moved it and no release ended it', () => {
    const held = { transfer: 'PAYOUT_CONFLICT_HOLD:po_1', legs: [] };
    expect(holdsMoney({ money: { transfer: null, held } })).toBe(true);
    expect(holdsMoney({})).toBe(false);
    expect(holdsMoney({ money: { transfer: null, note: 'not moved' } })).toBe(false);
    expect(holdsMoney({ money: { transfer: 'PAYOUT_CONFLICT_DEBIT:po_1', held } })).toBe(false);
    expect(holdsMoney({ money: { transfer: null, held, released: 'PAYOUT_CONFLICT_RELEASE:po_1' } })).toBe(false);
  });
});

describe('a conflict recorded, then confirmed', () => {
  it("keeps the provider's reference when the row has none, moves the money once when a read confirms, and says so in its error lines", async () => {
    const logged: string[] = [];
    const log: ConflictLog = { error: ((_o: unknown, msg: string) => { logged.push(msg); }) as never };
    const m = await grantedMerchant(t);
    const base = { objectType: 'payout' as const, objectId: 'po_rules_2', merchantId: m.merchantId, connector: 'sandbox', ours: 'FAIL' };
    const word = (via: string) => ({ status: 'succeeded' as const, ref: 'prov-7', via });
    const money = adjustment({ adjustmentId: 'rules-conflict-1', merchantId: m.merchantId, currency: 'RUB', amount: new Decimal('3') });

    expect(await withPgTx(t.db.pool, (c) => recordConflict(c, { ...base, providerRef: null, provider: word('notification'), transfer: null }, log))).toBe(true);
    expect((await t.db.pool.query(`SELECT provider_ref FROM attention_items WHERE object_id = 'po_rules_2'`)).rows).toEqual([{ provider_ref: 'prov-7' }]);
    expect(logged).toEqual([`provider sandbox contradicts the final payout po_rules_2: ours FAIL (set by service), provider succeeded; unconfirmed by a read, no money moved`]);

    expect(await withPgTx(t.db.pool, (c) => recordConflict(c, { ...base, providerRef: 'ours-1', provider: word('read'), transfer: money }, log))).toBe(true);
    expect(logged[1]).toBe('provider sandbox confirmed what it said of the final payout po_rules_2: money moved by ADJUSTMENT');
    expect(await withPgTx(t.db.pool, (c) => recordConflict(c, { ...base, providerRef: 'ours-1', provider: word('read'), transfer: money }, log))).toBe(false);
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE id = 'ADJUSTMENT:rules-conflict-1'`)).rows[0].n).toBe(1);
    expect(logged).toHaveLength(2);

    await withPgTx(t.db.pool, (c) => recordConflict(c, { ...base, objectId: 'po_rules_3', providerRef: 'ours-2', provider: word('read'), transfer: null }, log));
    expect((await t.db.pool.query(`SELECT provider_ref FROM attention_items WHERE object_id = 'po_rules_3'`)).rows).toEqual([{ provider_ref: 'ours-2' }]);

    // Confirmed at once (a read): the money moves with the first line.
    const money4 = adjustment({ adjustmentId: 'rules-conflict-4', merchantId: m.merchantId, currency: 'RUB', amount: new Decimal('2') });
    expect(await withPgTx(t.db.pool, (c) => recordConflict(c, { ...base, objectId: 'po_rules_4', providerRef: 'ours-4', provider: word('read'), transfer: money4 }, log))).toBe(true);
    expect(logged.at(-1)).toBe('provider sandbox contradicts the final payout po_rules_4: ours FAIL (set by service), provider succeeded; money moved by ADJUSTMENT');
  });
});

describe("an operator's decision on an operation the lifecycle gave up on", () => {
  const item = async (merchantId: string, objectId: string) => {
    const id = `att_dec_${objectId}`;
    await t.db.pool.query(
      `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, reason) VALUES ($1, 'payout', $2, $3, 'sandbox', 'r')`,
      [id, objectId, merchantId]);
    return id;
  };

  it('404 for an item whose payout is gone; a payout already final the decided way is left as it is; the other way, 409', async () => {
    const lc = t.app.services.payouts.lifecycle;
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '1000');
    await expect(lc.resolveAttention(await item(m.merchantId, 'po_gone'), 'FAIL', null, 'op')).rejects.toThrow('No such payout.');

    const ids: Record<string, string> = {};
    for (const [name, number] of [['ok', undefined], ['bad', FAIL_CARD]] as const) {
      const res = await regular(t, m, card('10', number ? { account_identifier: number } : {}));
      ids[name] = res.json().data[0].id as string;
    }
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = ANY($1)`, [Object.values(ids)]);
    while ((await t.app.services.payouts.processDue()) > 0);
    const status = async (id: string) => (await t.db.pool.query(`SELECT status::text FROM payouts WHERE id = $1`, [id])).rows[0].status;
    expect([await status(ids.ok!), await status(ids.bad!)]).toEqual(['SUCCESS', 'FAIL']);

    expect((await lc.resolveAttention(await item(m.merchantId, ids.ok!), 'SUCCESS', null, 'op')).resolution).toBe('SUCCESS');
    expect((await lc.resolveAttention(await item(m.merchantId, ids.bad!), 'FAIL', null, 'op')).resolution).toBe('FAIL');
    await t.db.pool.query(`DELETE FROM attention_items WHERE object_id = ANY($1)`, [Object.values(ids)]);
    await expect(lc.resolveAttention(await item(m.merchantId, ids.ok!), 'FAIL', null, 'op')).rejects.toThrow('Payout is SUCCESS; it cannot become FAIL.');
    await expect(lc.resolveAttention(await item(m.merchantId, ids.bad!), 'SUCCESS', null, 'op')).rejects.toThrow('Payout is FAIL; it cannot become SUCCESS.');
    expect([await status(ids.ok!), await status(ids.bad!)]).toEqual(['SUCCESS', 'FAIL']);
  });
});

describe('where conflict lines go', () => {
  it("each kind's lifecycle records conflicts with the logger its services were built with, and silently without one (no logger kept by a module)", () => {
    const mine: ConflictLog = { error: () => undefined };
    const other: ConflictLog = { error: () => undefined };
    const a = createServices(t.config, t.db, { log: mine });
    const b = createServices(t.config, t.db, { log: other });
    const none = createServices(t.config, t.db);
    for (const [s, log] of [[a, mine], [b, other], [none, silentConflictLog]] as const) {
      expect(s.payments.lifecycle.log).toBe(log);
      expect(s.refunds.lifecycle.log).toBe(log);
      expect(s.payouts.lifecycle.log).toBe(log);
    }
  });
});
