import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/client.js';
import { createTestDatabase, testConfig, ADMIN_TOKEN, TEST_KEY } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

let child: ChildProcess;
let out = '';
let base = '';
let db: Db;
let drop: () => Promise<void>;

const CARD = '4012888888881881';
const BAD_CARD = '4012888888881882';

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = createDb(database.url, { max: 2 });
  void testConfig;
  child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/main.ts'], {
    env: {
      ...process.env, DATABASE_URL: database.url, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, PAYMENTS_PROFILE: 'sandbox',
      HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'trace', RUN_WORKERS: 'false', ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  base = await waitFor(() => /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(out)?.[1], 'the server to listen', 45_000, 200)
    .catch(() => { throw new Error(`server did not start: ${out.slice(0, 2000)}`); });
});

afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await db?.close();
  await drop?.();
});

async function admin(path: string, body: unknown) {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return r.json() as Promise<Record<string, string>>;
}

describe('card data never reaches the logs', () => {
  it('a paid, a declined-by-validation and a form-mode payment at LOG_LEVEL=trace leave no card number, expiry or CVC in the output', async () => {
    const merchant = await admin('/admin/v1/merchants', { name: 'Log Test', email: `log-${Date.now()}@example.test` });
    const shop = await admin(`/admin/v1/merchants/${merchant.id}/shops`, { name: 'Log Shop' });
    const bill = await fetch(`${base}/api/v1/bill/create`, {
      method: 'POST', headers: { authorization: `Bearer ${merchant.api_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '10.00', shop_id: shop.id, type: 'multi' }),
    }).then((r) => r.json() as Promise<{ bill_id: string }>);
    const form = (card: string) => new URLSearchParams({ method: 'BANK_CARD', card_number: card, card_expiry: '07/37', card_cvc: '987' }).toString();
    const ok = await fetch(`${base}/pay/${bill.bill_id}`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }, body: form(CARD) });
    expect((await ok.json() as { status: string }).status).toBe('SUCCESS');
    const bad = await fetch(`${base}/pay/${bill.bill_id}`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify({ method: 'BANK_CARD', card_number: BAD_CARD, card_expiry: '07/37', card_cvc: '987' }) });
    expect(bad.status).toBe(422);
    const html = await fetch(`${base}/pay/${bill.bill_id}`, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: form(CARD) });
    expect(html.status).toBe(403); // no CSRF token: refused, still nothing logged
    await waitFor(() => out.includes('"statusCode":403'), 'the refused request logged');
    expect(out).toContain(`/pay/${bill.bill_id}`); // the requests were logged...
    for (const secret of [CARD, BAD_CARD, '07/37', '07%2F37', merchant.api_token!]) expect(out).not.toContain(secret);
    // A CVC is 3 digits (they occur in timestamps): look for it next to its field name.
    expect(out).not.toMatch(/card_cvc\W{0,4}987/);
  });
});
