import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { CabinetClient, cabinetMerchant, PASSWORD, signedIn } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });


describe('sign-in and sessions', () => {
  test('every cabinet page needs a session: anonymous requests are sent to the sign-in page', async () => {
    const c = new CabinetClient(t);
    for (const url of ['/cabinet', '/cabinet/bills', '/cabinet/api', '/cabinet/webhooks']) {
      const r = await c.get(url);
      expect(r.statusCode, url).toBe(303);
      expect(r.headers.location).toBe(`/cabinet/login?next=${encodeURIComponent(url)}`);
    }
    const post = await c.post('/cabinet/api/refresh', { _csrf: 'x' });
    expect(post.statusCode).toBe(303);
    expect(post.headers.location).toBe('/cabinet/login');
  });

  test('the sign-in page has labelled fields and a CSRF token', async () => {
    const r = await new CabinetClient(t).get('/cabinet/login');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<label for="email">');
    expect(r.body).toContain('<label for="password">');
    expect(r.body).toMatch(/name="_csrf" value="[A-Za-z0-9_-]{20,}"/);
  });

  test('the right password opens a session: HttpOnly, SameSite=Lax cookie whose value is stored only as its SHA-256', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t);
    const r = await c.login(m.email, PASSWORD);
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/cabinet');
    const set = ([] as string[]).concat(r.headers['set-cookie'] as string[]).find((s) => s.startsWith('cab_sid='))!;
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/SameSite=Lax/i);
    expect(set).toMatch(/Path=\/cabinet/);
    expect(set).not.toMatch(/Secure/i);
    const cookie = c.cookies.get('cab_sid')!;
    const rows = await t.db.prisma.cabinetSession.findMany({ where: { merchantId: m.merchantId } });
    expect(rows.map((s) => s.id)).toEqual([sha256Hex(cookie)]);
    const page = await c.get('/cabinet');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Dashboard');
  });

  test('email is matched case-insensitively', async () => {
    const m = await cabinetMerchant(t);
    const r = await new CabinetClient(t).login(`  ${m.email.toUpperCase()} `, PASSWORD);
    expect(r.statusCode).toBe(303);
  });

  test('a wrong password and an unknown email get the same refusal and no session', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t);
    const wrong = await c.login(m.email, 'nope');
    const unknown = await c.login('nobody@example.test', 'nope');
    for (const r of [wrong, unknown]) {
      expect(r.statusCode).toBe(401);
      expect(r.body).toContain('Wrong email or password.');
    }
    expect(c.cookies.has('cab_sid')).toBe(false);
    expect(await t.db.prisma.cabinetSession.count({ where: { merchantId: m.merchantId } })).toBe(0);
  });

  test('missing fields are shown next to the field', async () => {
    const c = new CabinetClient(t);
    const page = await c.get('/cabinet/login');
    const r = await c.post('/cabinet/login', { _csrf: CabinetClient.csrfOf(page.body), email: '', password: '' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('id="err-email"');
    expect(r.body).toContain('id="err-password"');
    expect(r.body).toContain('aria-invalid="true"');
  });

  test('sign-in needs its CSRF token: a cross-site form post is refused', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t);
    const r = await c.post('/cabinet/login', { _csrf: 'forged', email: m.email, password: PASSWORD });
    expect(r.statusCode).toBe(403);
    expect(c.cookies.has('cab_sid')).toBe(false);
  });

  test('after sign-in only cabinet paths are followed (no open redirect)', async () => {
    const m = await cabinetMerchant(t);
    for (const [next, expected] of [['/cabinet/bills', '/cabinet/bills'], ['https://evil.example/', '/cabinet'], ['//evil.example', '/cabinet'], ['/cabinetx', '/cabinet']]) {
      const c = new CabinetClient(t);
      const page = await c.get('/cabinet/login');
      const r = await c.post('/cabinet/login', { _csrf: CabinetClient.csrfOf(page.body), email: m.email, password: PASSWORD, next: next! });
      expect(r.headers.location, next).toBe(expected);
    }
  });

  test('sign-out ends the session: the old cookie no longer opens pages', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const cookie = c.cookies.get('cab_sid')!;
    const r = await c.submit('/cabinet', '/cabinet/logout', {});
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/cabinet/login?bye=1');
    expect(await t.db.prisma.cabinetSession.count({ where: { id: sha256Hex(cookie) } })).toBe(0);
    const again = await t.app.inject({ method: 'GET', url: '/cabinet', headers: { cookie: `cab_sid=${cookie}` } });
    expect(again.statusCode).toBe(303);
  });

  test('an expired session is refused', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await t.db.prisma.cabinetSession.updateMany({ where: { merchantId: m.merchantId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const r = await c.get('/cabinet');
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toContain('/cabinet/login');
  });

  test('a banned merchant cannot sign in, and its open session ends at the next request', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await t.db.prisma.merchant.update({ where: { id: m.merchantId }, data: { status: 'BANNED' } });
    const r = await c.get('/cabinet');
    expect(r.statusCode).toBe(303);
    expect(await t.db.prisma.cabinetSession.count({ where: { merchantId: m.merchantId } })).toBe(0);
    const login = await new CabinetClient(t).login(m.email, PASSWORD);
    expect(login.statusCode).toBe(401);
    expect(login.body).toContain('This merchant account is blocked.');
  });
});

describe('lock-out after repeated failures (per email and address; see test/reliability/attack-signin.test.ts)', () => {
  test('five wrong passwords from one address close that email to that address, even against the right password', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t, '10.1.0.1');
    for (let i = 0; i < 5; i++) expect((await c.login(m.email, 'wrong')).statusCode).toBe(401);
    const sixth = await c.login(m.email, 'wrong');
    expect(sixth.statusCode).toBe(429);
    expect(sixth.body).toContain('Too many sign-in attempts');
    const right = await c.login(m.email, PASSWORD);
    expect(right.statusCode).toBe(429);
    expect(c.cookies.has('cab_sid')).toBe(false);
  });

  test('a successful sign-in resets the failure count of its address', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t, '10.1.0.2');
    for (let i = 0; i < 4; i++) expect((await c.login(m.email, 'wrong')).statusCode).toBe(401);
    expect((await c.login(m.email, PASSWORD)).statusCode).toBe(303);
    const again = new CabinetClient(t, '10.1.0.2');
    for (let i = 0; i < 4; i++) expect((await again.login(m.email, 'wrong')).statusCode).toBe(401);
    expect((await new CabinetClient(t, '10.1.0.2').login(m.email, PASSWORD)).statusCode).toBe(303);
  });

  test('20 concurrent wrong guesses from one address: at most five are checked (no guess slips past the count); the right password is then refused there', async () => {
    const m = await cabinetMerchant(t);
    const clients = await Promise.all(Array.from({ length: 20 }, async () => {
      const c = new CabinetClient(t, '10.1.0.3');
      const page = await c.get('/cabinet/login');
      return { c, csrf: CabinetClient.csrfOf(page.body) };
    }));
    const results = await Promise.all(clients.map(({ c, csrf }) => c.post('/cabinet/login', { _csrf: csrf, email: m.email, password: 'guess' })));
    expect(results.every((r) => r.statusCode === 401 || r.statusCode === 429)).toBe(true);
    expect(results.filter((r) => r.statusCode === 401).length).toBe(5);
    expect((await new CabinetClient(t, '10.1.0.3').login(m.email, PASSWORD)).statusCode).toBe(429);
  });
});

describe('CSRF, headers, language', () => {
  test('a POST without the session CSRF token is refused with 403 and changes nothing', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const before = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } });
    for (const form of [{}, { _csrf: 'wrong' }] as Record<string, string>[]) {
      const r = await c.post('/cabinet/api/refresh', form);
      expect(r.statusCode).toBe(403);
      expect(r.body).toContain('The form has expired');
    }
    const after = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } });
    expect(after.apiTokenHash).toBe(before.apiTokenHash);
    // Another session's token does not work either.
    const other = await signedIn(t, m);
    const foreign = await c.post('/cabinet/api/refresh', { _csrf: await other.csrf() });
    expect(foreign.statusCode).toBe(403);
  });

  test('pages carry a strict CSP, no framing, no caching', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const r = await c.get('/cabinet');
    expect(r.headers['content-security-policy']).toContain("default-src 'none'");
    expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    expect(r.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.body).not.toMatch(/<script>(?!<\/script>)/);
    expect(r.body).not.toMatch(/ style="/);
    const css = await c.get('/cabinet/assets/app.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
  });

  test('?lang=ru switches to Russian and is remembered; Accept-Language is followed otherwise', async () => {
    const c = new CabinetClient(t);
    const ru = await c.get('/cabinet/login?lang=ru');
    expect(ru.body).toContain('<html lang="ru">');
    expect(ru.body).toContain('Пароль');
    const again = await c.get('/cabinet/login');
    expect(again.body).toContain('Пароль');
    const en = await new CabinetClient(t).get('/cabinet/login');
    expect(en.body).toContain('<html lang="en">');
    const al = await new CabinetClient(t).get('/cabinet/login', { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' });
    expect(al.body).toContain('<html lang="ru">');
  });

  test('an unknown cabinet page is an HTML 404, not JSON', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const r = await c.get('/cabinet/bills/doesnotexist');
    expect(r.statusCode).toBe(404);
    expect(r.headers['content-type']).toContain('text/html');
  });
});
