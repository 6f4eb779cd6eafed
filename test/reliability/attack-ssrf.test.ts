import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../admin/helpers.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from '../cabinet/helpers.js';
import { isPrivateAddress } from '../../src/outbox/url-guard.js';
import { sendForm } from '../../src/outbox/http-sender.js';

/**
 * Attack (issue 19.2): with private URLs forbidden, a Result URL written as an IPv4-mapped
 * IPv6 literal (`http://[::ffff:127.0.0.1]:P/`) was saved, and "Send test postback" showed the
 * internal service's reply to the merchant. Every special-purpose IPv4 and IPv6 form, mapped
 * and embedded ones included, must be refused when saved and when connected to.
 */
const SECRET = 'INTERNAL-SERVICE-SECRET-5f1c';
let t: TestApp;
let cm: CabinetMerchant;
let cab: CabinetClient;
let internal: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  internal = createServer((req, res) => { hits += 1; req.resume(); res.end(SECRET); });
  await new Promise<void>((r) => internal.listen(0, '127.0.0.1', () => r()));
  port = (internal.address() as { port: number }).port;
  t = await setupTestApp({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
  cm = await cabinetMerchant(t);
  cab = await signedIn(t, cm);
});
afterAll(async () => {
  await t.close();
  await new Promise<void>((r) => internal.close(() => r()));
});

// The internal receiver listens on 127.0.0.1; every form below reaches it or another
// non-public address.
const urls = (): string[] => [
  `http://[::ffff:127.0.0.1]:${port}/`, `http://[0:0:0:0:0:ffff:7f00:1]:${port}/`, `http://[::127.0.0.1]:${port}/`,
  `http://[::ffff:0:7f00:1]:${port}/`, `http://[64:ff9b::7f00:1]:${port}/`, `http://[64:ff9b:1::7f00:1]:${port}/`,
  `http://[2002:7f00:1::]:${port}/`, `http://[fec0::1]:${port}/`, `http://[fd00::1]:${port}/`, `http://[fe80::1]:${port}/`,
  `http://[ff02::1]:${port}/`, `http://[::]:${port}/`, `http://[::1]:${port}/`, `http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:${port}/`,
  'http://[::ffff:169.254.169.254]/latest/meta-data/', 'http://[::ffff:10.0.0.1]/', 'http://[::ffff:192.168.1.1]/', 'http://[::ffff:a9fe:a9fe]/',
  `http://2130706433:${port}/`, `http://0x7f.1:${port}/`, `http://127.1:${port}/`, `http://0.0.0.0:${port}/`,
];

describe('SSRF through postback URLs', () => {
  test('every special-purpose address is classified as not public; global unicast is', () => {
    for (const ip of ['::ffff:7f00:1', '::7f00:1', '::ffff:0:7f00:1', '64:ff9b::7f00:1', '64:ff9b:1::a00:1', '2002:7f00:1::', '2002:808:808::1',
      'fec0::1', 'fc00::1', 'fe80::1%eth0', 'ff0e::1', '::', '::1', '2001::1', '2001:db8::1', '100::1', '::ffff:a9fe:a9fe', '::ffff:a00:1',
      '::ffff:c0a8:101', '192.0.0.8', '198.18.0.1', '203.0.113.1', '240.0.0.1', '255.255.255.255', '100.64.0.1', 'not-an-ip']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '2606:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8']) expect(isPrivateAddress(ip), ip).toBe(false);
  });

  test('saving such a URL is refused on every face (cabinet Result URL, operator shop and payout webhook); nothing saved', async () => {
    const csrf = await cab.csrf(`/cabinet/shops/${cm.shopId}`);
    for (const url of urls()) {
      const c = await cab.post(`/cabinet/shops/${cm.shopId}`, { _csrf: csrf, default_currency: 'RUB', result_url: url });
      expect(c.statusCode, url).toBe(422);
      const a = await admin(t, 'PATCH', `/shops/${cm.shopId}`, { result_url: url });
      expect(a.status, url).toBe(422);
      expect(a.body.errors.result_url, url).toBeDefined();
      const w = await admin(t, 'PUT', `/merchants/${cm.merchantId}/payout-webhook`, { url });
      expect(w.status, url).toBe(422);
    }
    const row = await t.db.pool.query('SELECT s.result_url, m.payout_webhook_url FROM shops s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = $1', [cm.shopId]);
    expect(row.rows[0]).toEqual({ result_url: null, payout_webhook_url: null });
    expect(hits).toBe(0);
  });

  test('a URL already stored (saved before the fix) is refused at connect time: the test postback shows no reply, nothing reaches the service', async () => {
    for (const url of urls().slice(0, 8)) {
      await t.db.pool.query('UPDATE shops SET result_url = $2 WHERE id = $1', [cm.shopId, url]);
      const sentForm = await cab.submit(`/cabinet/shops/${cm.shopId}`, `/cabinet/shops/${cm.shopId}/test-postback`, {});
      // The answer is shown by the page the form redirects to (issue 16: post/redirect/get).
      const r = sentForm.statusCode === 303 ? await cab.get(sentForm.headers.location as string) : sentForm;
      expect(r.body, url).not.toContain(SECRET);
      const sent = await sendForm(url, 'x=1', { timeoutMs: 2000, allowPrivate: false });
      expect(sent.outcome.kind, url).toBe('refused');
      expect(sent.responseHead, url).toBeNull();
    }
    expect(hits).toBe(0);
    // The receiver is reachable: the refusals above are the guard, not a dead port.
    const open = await sendForm(`http://127.0.0.1:${port}/`, 'x=1', { timeoutMs: 2000, allowPrivate: true });
    expect(open.responseHead).toBe(SECRET);
    hits = 0;
  });
});
