import { generate } from 'otplib';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.js';
import { CabinetClient } from '../cabinet/helpers.js';
import type { Role } from '../../src/domain/operator/roles.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';

export const OP_PASSWORD = 'operator password 0123';

/** A browser over app.inject for /operator (the cabinet test client's cookie jar). */
export class ConsoleClient extends CabinetClient {
  /** The hidden inputs of the first form on a page (CSRF and the single-use form token). */
  static formOf(html: string): Record<string, string> {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html);
    const form = /name="_form" value="([^"]+)"/.exec(html);
    if (!csrf) throw new Error('no form on the page');
    return { _csrf: csrf[1]!, ...(form ? { _form: form[1]! } : {}) };
  }

  /** Opens `from`, then posts `form` with that page's tokens to `url`. */
  async act(from: string, url: string, form: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const page = await this.get(from);
    if (page.statusCode !== 200) throw new Error(`${from}: ${page.statusCode}`);
    return this.post(url, { ...ConsoleClient.formOf(page.body), ...form });
  }
}

/** A TOTP code for `secret` at `offsetSteps` steps from now (a step is accepted once). */
export const totpCode = (secret: string, offsetSteps = 0): Promise<string> =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });

export interface OperatorFixture { id: string; email: string; role: Role; secret: string; client: ConsoleClient; /** The code the enrolment used (its time step is spent). */ enrolCode: string }

let n = 0;
/** An operator with a password, through the service the CLI and the API use. */
export async function createOperator(t: TestApp, role: Role, email = `op${++n}-${Date.now()}@ops.test`): Promise<{ id: string; email: string }> {
  const o = await t.app.services.operators.create({ email, role, password: OP_PASSWORD });
  return { id: o.id, email: o.email };
}

/** Password, then the TOTP enrolment of a first sign-in; returns the client signed in and the secret. */
export async function enrolledOperator(t: TestApp, role: Role, ip?: string): Promise<OperatorFixture> {
  const op = await createOperator(t, role);
  const client = new ConsoleClient(t, ip);
  const login = await client.get('/operator/login');
  const r = await client.post('/operator/login', { ...ConsoleClient.formOf(login.body), email: op.email, password: OP_PASSWORD });
  if (r.statusCode !== 303) throw new Error(`password step: ${r.statusCode}`);
  const enrol = await client.get('/operator/2fa');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)?.[1];
  if (!secret) throw new Error('no TOTP secret on the enrolment page');
  const enrolCode = await totpCode(secret);
  const done = await client.post('/operator/2fa/enrol', { ...ConsoleClient.formOf(enrol.body), code: enrolCode });
  if (done.statusCode !== 200) throw new Error(`enrolment: ${done.statusCode}`);
  return { ...op, role, secret, client, enrolCode };
}


const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Through the operator API with ADMIN_API_TOKEN (set-up, not what is tested). */
export async function adminApi(t: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>) {
  const res = await t.app.inject({ method, url: `/admin/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

let seq = 0;
/** A merchant (verified, moderation from 500 RUB, 1000 RUB available) and a payout of 600 RUB waiting in MODERATING. */
export async function moderatedPayout(t: TestApp): Promise<{ merchantId: string; payoutId: string }> {
  const m = await adminApi(t, 'POST', '/merchants', { name: `Moderated ${++seq}`, email: `mod-${seq}-${Date.now()}@shop.test` });
  await adminApi(t, 'PATCH', `/merchants/${m.id}`, { verified: true, moderation_threshold: '500' });
  const acc = await adminApi(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242 4242 4242 4242', card_holder: 'IVAN IVANOV' });
  await adminApi(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '1000', reason: 'test' });
  const res = await t.app.inject({
    method: 'POST', url: '/api/v1/payout/personal/create',
    headers: { authorization: `Bearer ${m.api_token}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `amount=600&payout_account_id=${acc.id}&order_id=mod-${seq}`,
  });
  const p = res.json().data[0];
  if (p.status !== 'MODERATING') throw new Error(`payout not moderated: ${res.body}`);
  return { merchantId: m.id, payoutId: p.id };
}

/** A dead payment postback of a merchant; its event id. */
export async function deadEvent(t: TestApp, merchantId: string): Promise<string> {
  const trs = `dead-${++seq}-${Date.now()}`;
  return withPgTx(t.db.pool, async (c) => {
    await enqueueEvent(c, {
      merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: trs, url: null,
      fields: { InvId: 'o', OutSum: '10.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trs, Status: 'SUCCESS', custom: '' },
    });
    const id = (await c.query('SELECT id::text AS id FROM outbox_events WHERE aggregate_id = $1', [trs])).rows[0].id as string;
    await c.query(`UPDATE outbox_events SET status = 'DEAD' WHERE id = $1`, [id]);
    return id;
  });
}

/**
 * A card payment left in PROCESS (the sandbox's 3-D Secure card, never completed) and the
 * attention item reconciliation would raise for it; returns both ids.
 */
export async function stuckPayment(t: TestApp, merchantId?: string): Promise<{ itemId: string; paymentId: string; merchantId: string }> {
  const { createMerchant } = await import('../factories/merchant.js');
  const { cardForm, createBill, payRequest } = await import('../factories/payment.js');
  const m = await createMerchant(t, { shop: { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/s', failUrl: 'http://127.0.0.1:9/f' } });
  const r = await payRequest(t, await createBill(t, m, { amount: '88.00' }), cardForm('4000002760003184'));
  const paymentId = r.json().payment_id as string;
  const owner = merchantId ?? m.merchantId;
  await t.app.services.attention.raise({
    objectType: 'payment', objectId: paymentId, merchantId: owner, connector: 'sandbox', providerRef: `ref-${paymentId}`,
    reason: 'reconciliation gave up', lastHeard: { status: 'unknown', reason: 'no answer' },
  });
  const item = await t.db.pool.query<{ id: string }>(`SELECT id FROM attention_items WHERE object_id = $1`, [paymentId]);
  return { itemId: item.rows[0]!.id, paymentId, merchantId: owner };
}
