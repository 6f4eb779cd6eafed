import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cabinetMerchant, PASSWORD, signedIn } from '../cabinet/helpers.js';
import { luhnValid } from '../../src/lib/card.js';

/**
 * Attack (issue 19.7): at LOG_LEVEL=trace every multipart request logged the bearer token
 * (`busboyOptions.headers`). A real app at the most verbose level handles real requests of
 * every kind; its whole log stream must hold no secret: API tokens, the admin token, the
 * encryption key, passwords, session cookies, card numbers.
 */
const lines: string[] = [];
let t: TestApp;
let m: MerchantFixture;
const CARD = '4242424242424242';
const CARD_SPACED = '5555 5555 5555 4444';

beforeAll(async () => {
  t = await setupTestApp({ LOG_LEVEL: 'trace', RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_IP: '0' }, { logStream: { write: (l: string) => { lines.push(l); } } });
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

function multipart(fields: Record<string, string>): { body: string; type: string } {
  const b = '----secretsTest';
  let body = '';
  for (const [k, v] of Object.entries(fields)) body += `--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  return { body: `${body}--${b}--\r\n`, type: `multipart/form-data; boundary=${b}` };
}

describe('no secret reaches the logs, even at trace level', () => {
  test('multipart, urlencoded and JSON API calls, cabinet sign-in, pay page with a card, operator creating a merchant', async () => {
    const secrets: string[] = [m.token, ADMIN_TOKEN, TEST_KEY, PASSWORD, CARD, CARD_SPACED, CARD_SPACED.replace(/ /g, '')];
    const mp = multipart({ amount: '10', shop_id: m.shopId });
    const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': mp.type }, payload: mp.body });
    expect(bill.statusCode).toBe(200);
    const billId = bill.json().bill_id as string;
    await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: `amount=10&shop_id=${m.shopId}&api_token=${m.token}` });
    await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'idempotency-key': 'logs-1' }, payload: { amount: '10', shop_id: m.shopId, token: m.token } });
    await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${billId}&api_token=${m.token}`, headers: m.auth });
    await t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: { amount: '10', currency: 'RUB', account_type: 'credit_card', account_identifier: CARD_SPACED, card_holder: 'IVAN' } });
    // Errors are logged with their details: a bad multipart body carrying the token.
    await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'multipart/form-data; boundary=XX' }, payload: `--XX\r\nContent-Disposition: form-data; name="api_token"\r\n\r\n${m.token}` });

    const cm = await cabinetMerchant(t);
    const cab = await signedIn(t, cm);
    const sid = cab.cookies.get('cab_sid')!;
    secrets.push(sid);
    await cab.get('/cabinet');
    const cabMp = multipart({ _csrf: await cab.csrf('/cabinet/bills/new'), amount: '5', shop_id: cm.shopId });
    await t.app.inject({ method: 'POST', url: '/cabinet/bills', headers: { cookie: `cab_sid=${sid}`, 'content-type': cabMp.type }, payload: cabMp.body });
    await t.app.inject({ method: 'POST', url: '/cabinet/login', headers: { 'content-type': 'application/json', cookie: 'cab_pre=x' }, payload: { _csrf: 'x', email: cm.email, password: PASSWORD } });

    for (const [headers, payload] of [
      [{ accept: 'application/json' }, { method: 'BANK_CARD', card_number: CARD, card_expiry: '12/39', card_cvc: '123' }],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, `method=BANK_CARD&card_number=${encodeURIComponent(CARD_SPACED)}&card_expiry=12%2F39&card_cvc=123`],
      [{ 'content-type': multipart({}).type }, multipart({ method: 'BANK_CARD', card_number: CARD, card_expiry: '12/39', card_cvc: '123' }).body],
    ] as const) {
      await t.app.inject({ method: 'POST', url: `/pay/${billId}`, headers: headers as Record<string, string>, payload: payload as never });
    }

    const created = await t.app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Logs', email: `logs-${Date.now()}@example.test`, password: 'operator-set-password-77' } });
    expect(created.statusCode).toBe(201);
    secrets.push(created.json().api_token, 'operator-set-password-77');
    const mpAdmin = multipart({ name: 'Logs2', email: `logs2-${Date.now()}@example.test` });
    await t.app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': mpAdmin.type }, payload: mpAdmin.body });

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(20);
    // The multipart trace line is there (the level is really trace), its headers redacted.
    expect(log).toMatch(/busboy|multipart/i);
    for (const s of secrets) expect(log.includes(s), `log contains ${s.slice(0, 6)}...`).toBe(false);
    // Card-like digit runs, pino's timestamps and response times aside.
    const cards = (log.replace(/"(time|responseTime)":[\d.]+/g, '').match(/\b(?:\d[ -]?){12,18}\d\b/g) ?? []).filter((x) => luhnValid(x.replace(/[ -]/g, '')));
    expect(cards).toEqual([]);
  });
});
