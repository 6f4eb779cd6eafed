import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, DECLINED_CARD, payRequest, REFUND_FAIL_CARD, savedCardOf } from '../factories/payment.js';
import { admin } from '../admin/helpers.js';
import { createBill } from '../api/support.js';
import { fund, seedBanks, card, regular } from '../payout/helpers.js';
import { OutboxEventKind } from '../../src/generated/prisma/enums.js';
import { deliverUntil } from './deliver-until.js';
import { startReceiver, type Receiver, type Received } from './receiver.js';

/**
 * /docs/json is what a merchant builds its receiver from: every kind of event the service posts
 * is documented there as an OpenAPI 3.1 webhook, and what is really posted to a receiver on
 * 127.0.0.1 has exactly the documented fields (every posted one documented, every required one
 * posted, values in their enums) and a SignatureValue that the documented recipe reproduces.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let t: TestApp;
let rx: Receiver;
let m: MerchantFixture;
let doc: Json;
beforeAll(async () => {
  t = await setupTestApp();
  rx = await startReceiver();
  await seedBanks(t);
  m = await createMerchant(t, {
    merchant: { grantRefunds: true, verified: true, grantRegularPayouts: true, payoutWebhookUrl: `${rx.url}/payouts` },
    shop: { resultUrl: `${rx.url}/result` },
  });
  doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
});
afterAll(async () => { await rx.close(); await t.close(); });

/** The documented webhook of each event kind, as a receiver would read it from /docs/json. */
function documented(kind: string): { schema: Json; recipe: { fields: string[] }; description: string; example: Json } {
  const hooks = Object.values(doc.webhooks ?? {}).map((h: any) => h.post).filter((op: Json) => op['x-event-kind'] === kind); // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(hooks, `one webhook documents ${kind}`).toHaveLength(1);
  const media = hooks[0].requestBody.content['application/x-www-form-urlencoded'];
  return { schema: media.schema, recipe: hooks[0]['x-signature'], description: hooks[0].description, example: media.example };
}

/** The documented recipe, applied as a merchant would: the fields' posted strings joined by ':', the token last, MD5, uppercase hex. */
const signByRecipe = (recipe: { fields: string[] }, posted: Record<string, string>, token: string) =>
  createHash('md5').update([...recipe.fields.map((f) => posted[f] ?? ''), token].join(':'), 'utf8').digest('hex').toUpperCase();

function matchesDocument(kind: string, got: Received): void {
  const { schema, recipe } = documented(kind);
  const name = `${kind} ${got.body}`;
  expect(got.headers['content-type'], name).toBe('application/x-www-form-urlencoded');
  expect(Object.keys(got.fields).filter((f) => !(f in schema.properties)), `${name}: posted but not documented`).toEqual([]);
  expect(schema.required.filter((f: string) => !(f in got.fields)), `${name}: documented as required but not posted`).toEqual([]);
  for (const [f, v] of Object.entries(got.fields)) {
    const enumOf = schema.properties[f].enum as string[] | undefined;
    if (enumOf) expect(enumOf, `${name}: ${f}=${v}`).toContain(v);
  }
  expect(got.fields.SignatureValue, `${name}: the documented signature recipe`).toBe(signByRecipe(recipe, got.fields, m.token));
}

const bill = (fields: Record<string, unknown>): Promise<string> => createBill(t, m, { amount: '250.00', ...fields });

describe('every event kind /docs/json documents is what a receiver gets', () => {
  it('payment (SUCCESS with the payer\'s fields, FAIL, SBP, a saved card), refund (SUCCESS, FAIL), chargeback, payout and test postbacks match their documented fields and signature', async () => {
    // Payments: a card payment with every payer field, a declined card, SBP, a payment that saved the card.
    const ok = (await payRequest(t, await bill({ order_id: 'doc-1', custom: 'cart=1', request_fields: ['email', 'phone', 'name', 'comment'] }),
      { ...cardForm(), payer_email: 'a@example.test', payer_phone: '89001234567', payer_name: 'Anna', payer_comment: 'gift' })).json();
    const failed = (await payRequest(t, await bill({}), cardForm(DECLINED_CARD))).json();
    const sbp = (await payRequest(t, await bill({ request_fields: ['phone'] }), { method: 'SBP', amount: '250.00', payer_phone: '+7 900 000-11-22' })).json();
    await savedCardOf(t, m);
    // Refunds: one that succeeds, one the sandbox fails; a chargeback the operator records.
    const refundFails = (await payRequest(t, await bill({ order_id: 'doc-2' }), cardForm(REFUND_FAIL_CARD))).json();
    const r1 = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: ok.payment_id, amount: '50.5' } });
    const r2 = await t.app.inject({ method: 'POST', url: '/api/v1/refund/full/create', headers: m.auth, payload: { payment_id: refundFails.payment_id } });
    expect([r1.statusCode, r2.statusCode], r1.body + r2.body).toEqual([200, 200]);
    const cb = await admin(t, 'POST', `/payments/${ok.payment_id}/chargebacks`, { amount: '100.00', reason: 'fraud: card not present' });
    expect(cb.status, JSON.stringify(cb.body)).toBe(201);
    // A payout to a card, and the test postback of the shop.
    await fund(t, m.merchantId, '1000');
    const payout = await regular(t, m, card('100'));
    expect(payout.statusCode, payout.body).toBe(200);
    const test = await admin(t, 'POST', `/shops/${m.shopId}/test-postback`);
    expect(test.body.delivered, JSON.stringify(test.body)).toBe(true);

    // Until every event written has reached the receiver (the workers run between passes).
    const events = async () => (await t.db.pool.query<{ kind: string; aggregate_id: string }>(
      'SELECT kind::text, aggregate_id FROM outbox_events WHERE merchant_id = $1', [m.merchantId])).rows;
    const idOf = (r: Received) => r.fields.Id ?? r.fields.TrsId;
    const expected = [ok.payment_id, failed.payment_id, sbp.payment_id, r1.json().id, r2.json().id, cb.body.id, payout.json().data[0].id];
    await deliverUntil(t, async () => {
      const all = await events();
      return expected.every((id) => all.some((e) => e.aggregate_id === id)) && all.every((e) => rx.received.some((r) => idOf(r) === e.aggregate_id));
    }, {
      before: async () => {
        await t.db.pool.query(`UPDATE refunds SET process_after = now(), next_check_at = NULL WHERE status IN ('NEW', 'PROCESS')`);
        await t.app.services.refunds.processDue();
        await t.app.services.payouts.processDue();
      },
    });

    const kinds = new Set<string>();
    for (const e of await events()) {
      const got = rx.received.filter((r) => idOf(r) === e.aggregate_id);
      expect(got.length, `${e.kind} ${e.aggregate_id}`).toBeGreaterThan(0);
      for (const g of got) matchesDocument(e.kind, g);
      kinds.add(e.kind);
    }
    // Each kind the service can post was posted here and checked.
    expect([...kinds].sort()).toEqual(Object.values(OutboxEventKind).sort());
    // The optional fields were posted too, and are documented.
    const posted = new Set(rx.received.flatMap((r) => Object.keys(r.fields)));
    for (const f of ['AccountType', 'AccountNumber', 'BalanceAmount', 'PayerPhone', 'PayerEmail', 'PayerName', 'PayerComment', 'ErrorCode', 'ErrorMessage', 'PaymentMethodId', 'Reason']) expect(posted, f).toContain(f);
  });

  it('documents a webhook for each kind of event, its recipe in words as in x-signature, and an example signed with it', () => {
    for (const kind of Object.values(OutboxEventKind)) {
      const { recipe, description, example } = documented(kind);
      expect(description).toContain(`upper(md5(${[...recipe.fields, 'token'].join(' + ":" + ')}))`);
      const token = /signed with the token `([^`]+)`/.exec(description)![1]!;
      expect(example.SignatureValue, kind).toBe(signByRecipe(recipe, example, token));
    }
    // Refunds and chargebacks are signed otherwise than payments (api-in-the-wild.md).
    expect(documented('REFUND_POSTBACK').recipe.fields).toEqual(['Amount', 'Currency', 'BillId', 'PaymentId', 'Id']);
    expect(documented('CHARGEBACK_POSTBACK').recipe.fields).toEqual(['BillId', 'PaymentId', 'Id']);
    expect(documented('PAYMENT_POSTBACK').recipe.fields).toEqual(['OutSum', 'InvId']);
    expect(documented('PAYOUT_WEBHOOK').recipe.fields).toEqual(['Amount', 'TrsId']);
  });
});
