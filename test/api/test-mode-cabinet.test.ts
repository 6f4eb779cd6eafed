import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { cabinetMerchant, CabinetClient, signedIn, type CabinetMerchant } from '../cabinet/helpers.js';

/**
 * Test mode in the cabinet (PROVIDERS.md "Test mode"): both tokens on the API page, and a
 * live/test switch that changes every list and the balances.
 */

let t: TestApp;
let m: CabinetMerchant;
let testToken: string;
let c: CabinetClient;
const live = { bill: '', payment: '' };
const test = { bill: '', payment: '' };

const api = (method: 'GET' | 'POST', url: string, token: string, payload?: object) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

async function paid(token: string, amount: string) {
  const r = await api('POST', '/api/v1/bill/create', token, { amount, shop_id: m.shopId });
  expect(r.statusCode, r.body).toBe(200);
  const bill = r.json().bill_id as string;
  const p = await payRequest(t, bill, cardForm());
  expect(p.json().status).toBe('SUCCESS');
  return { bill, payment: p.json().payment_id as string };
}

/** The test token as the API page shows it. */
const shownTestToken = (html: string) => /id="test-token" readonly value="([^"]+)"/.exec(html)?.[1];

beforeAll(async () => {
  t = await setupTestApp();
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRegularPayouts: true } });
  c = await signedIn(t, m);
  const page = await c.get('/cabinet/api');
  testToken = shownTestToken(page.body)!;
  Object.assign(live, await paid(m.token, '111.11'));
  Object.assign(test, await paid(testToken, '222.22'));
});
afterAll(async () => { await t.close(); });

/** The bills and payments lists show `shown`'s objects and not `hidden`'s; the dashboard one balance and not the other. */
async function listsShow(shown: typeof live, hidden: typeof live, balance: string, otherBalance: string) {
  const bills = (await c.get('/cabinet/bills')).body;
  expect(bills).toContain(shown.bill);
  expect(bills).not.toContain(hidden.bill);
  const payments = (await c.get('/cabinet/payments')).body;
  expect(payments).toContain(shown.payment);
  expect(payments).not.toContain(hidden.payment);
  const dash = (await c.get('/cabinet')).body;
  expect(dash).toContain(balance);
  expect(dash).not.toContain(otherBalance);
  return { bills, dash };
}

const switchTo = async (mode: 'live' | 'test', back = '/cabinet/bills') => c.submit('/cabinet', '/cabinet/mode', { mode, back });

describe('cabinet API page: both tokens', () => {
  it('shows the test token (it works on the API with test data) beside the live token issue time', async () => {
    const page = await c.get('/cabinet/api');
    expect(page.statusCode).toBe(200);
    expect(testToken).toMatch(/^[A-Za-z0-9._~+/=-]{20,}$/);
    expect(page.body).not.toContain(m.token);
    expect((await api('GET', `/api/v1/bill/status?id=${test.bill}`, testToken)).statusCode).toBe(200);
    expect((await api('GET', `/api/v1/bill/status?id=${test.bill}`, m.token)).statusCode).toBe(422);
  });

  it('refreshing the test token there kills the old test token at once and leaves the live token working', async () => {
    const r = await c.submit('/cabinet/api', '/cabinet/api/test-token', {});
    expect(r.statusCode).toBe(200);
    const fresh = shownTestToken(r.body)!;
    expect(fresh).not.toBe(testToken);
    expect((await api('GET', '/api/v1/merchant/balance', testToken)).statusCode).toBe(401);
    expect((await api('GET', '/api/v1/merchant/balance', fresh)).statusCode).toBe(200);
    expect((await api('GET', '/api/v1/merchant/balance', m.token)).statusCode).toBe(200);
    testToken = fresh;
  });
});

describe('cabinet live/test switch', () => {
  it('live (the default) lists only live objects and the live balance', async () => {
    const { dash } = await listsShow(live, test, '111.11', '222.22');
    expect(dash).not.toContain('data-testid="test-banner"');
  });

  it('test mode changes every list and the balances; a live object is not found there; switching back restores live', async () => {
    const r = await switchTo('test');
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/cabinet/bills');

    const { bills } = await listsShow(test, live, '222.22', '111.11');
    expect(bills).toContain('data-testid="test-banner"');
    expect((await c.get(`/cabinet/bills/${live.bill}`)).statusCode).toBe(404);
    expect((await c.get(`/cabinet/bills/${test.bill}`)).statusCode).toBe(200);
    // Payouts: the test balance is the one offered; the postback events are the test ones.
    expect((await c.get('/cabinet/payouts/new')).body).toContain('222.22');
    // Shops are shared by both modes.
    expect((await c.get('/cabinet/shops')).body).toContain(m.shopId);

    await switchTo('live');
    const back = (await c.get('/cabinet/bills')).body;
    expect(back).toContain(live.bill);
    expect(back).not.toContain(test.bill);
  });

  it('a bill created in the cabinet in test mode is a test bill (the live shop, the test token sees it)', async () => {
    await switchTo('test');
    const form = await c.get('/cabinet/bills/new');
    expect(form.body).toContain(m.shopId);
    const r = await c.post('/cabinet/bills', { _csrf: CabinetClient.csrfOf(form.body), amount: '33.00', shop_id: m.shopId, type: 'normal' });
    expect(r.statusCode, r.body).toBe(303);
    const id = /\/cabinet\/bills\/([A-Za-z0-9]+)/.exec(r.headers.location as string)![1]!;
    expect((await api('GET', `/api/v1/bill/status?id=${id}`, testToken)).statusCode).toBe(200);
    expect((await api('GET', `/api/v1/bill/status?id=${id}`, m.token)).statusCode).toBe(422);
    await switchTo('live');
  });

  it('the switch needs the CSRF token and only ever redirects inside the cabinet', async () => {
    const noCsrf = await c.post('/cabinet/mode', { mode: 'test', back: '/cabinet/bills' });
    expect(noCsrf.statusCode).toBe(403);
    for (const back of ['https://evil.example/x', '//evil.example', '/cabinet/../admin', '/other']) {
      const r = await switchTo('live', back);
      expect(r.headers.location, back).toBe('/cabinet');
    }
  });
});
