import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { enrolledOperator, type OperatorFixture } from '../operator/helpers.js';
import { encrypt } from '../../src/lib/crypto.js';
import { profileWarnings } from '../../src/domain/deployment/profile-warnings.js';
import { publicHttpsRequest } from '../../src/domain/providers/provider-http.js';

/**
 * Provider addresses are the deployment's, not a form's: in production (ALLOW_PRIVATE_PROVIDER_URLS
 * off) a connector's base_url must be a public https address, when it is saved (operator API and
 * console) and again at every call (test connection too), the host resolved; a redirect is never
 * followed; "test connection" never repeats what a server answered beyond its status and code.
 */

/** A plain HTTP server that records every request and answers what `reply` says. */
async function trap(reply: (req: http.IncomingMessage) => { status: number; body: unknown; headers?: Record<string, string> }) {
  const seen: string[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const r = reply(req);
    res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
    res.end(JSON.stringify(r.body));
  });
  server.on('connection', () => { connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port, seen, get connections() { return connections; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

let prod: TestApp;
let sbx: TestApp;
let op: OperatorFixture;
let target: Awaited<ReturnType<typeof trap>>;
beforeAll(async () => {
  prod = await setupTestApp({ PAYMENTS_PROFILE: 'production' });
  sbx = await setupTestApp();
  op = await enrolledOperator(prod, 'admin');
  target = await trap(() => ({ status: 200, body: { account_id: 'internal-account-7', test: true } }));
});
afterAll(async () => { await target?.close(); await prod?.close(); await sbx?.close(); });

const put = (app: TestApp, name: string, settings: Record<string, unknown>, kind = 'yookassa') => app.app.inject({
  method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  payload: { kind, mode: 'live', settings: kind === 'yookassa' ? { shop_id: '1', secret_key: 'live_k', ...settings } : { terminal_key: 'T', password: 'p', ...settings } },
});

/** A connector row as one stored before the rule (or while the setting was on): straight into the table. */
async function storedConnector(app: TestApp, name: string, kind: 'yookassa' | 'tbank', baseUrl: string) {
  const [settings, secrets] = kind === 'yookassa'
    ? [{ shop_id: '1', base_url: baseUrl }, { secret_key: 'live_secret_value' }]
    : [{ terminal_key: 'T', base_url: baseUrl }, { password: 'tbank_secret_value' }];
  await app.db.pool.query(
    `INSERT INTO connectors (name, kind, mode, settings, secrets_enc, enabled) VALUES ($1, $2, 'live', $3::jsonb, $4, true)`,
    [name, kind, JSON.stringify(settings), encrypt(app.config.tokenEncryptionKey, JSON.stringify(secrets))],
  );
}

const PRIVATE_BASE_URLS = [
  'https://127.0.0.1/v3', 'https://localhost/v3', 'https://api.localhost/v3', 'https://[::ffff:127.0.0.1]/v3', 'https://[::1]/v3',
  'https://169.254.169.254/latest', 'https://10.0.0.8/v3', 'https://192.168.1.10/v3', 'https://172.16.0.1/v3', 'https://[fd00::1]/v3',
  'https://[::ffff:a9fe:a9fe]/v3',
];

describe('production: a connector\'s base_url is a public https address', () => {
  it.each(PRIVATE_BASE_URLS)('the operator API refuses base_url %s with 422 on settings.base_url, and stores nothing', async (url) => {
    const name = `yk-${Math.random().toString(36).slice(2, 10)}`;
    const r = await put(prod, name, { base_url: url });
    expect(r.statusCode, r.body).toBe(422);
    expect(Object.keys(r.json().errors)).toEqual(['settings.base_url']);
    expect(await prod.app.services.connectors.find(name)).toBeNull();
  });

  it('a name that resolves to a private address is refused too (the host is resolved when saved)', async () => {
    // The machine's own name resolves to loopback or the host's private address.
    const r = await put(prod, 'yk-own-name', { base_url: `https://${hostname()}/v3` });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().errors['settings.base_url'][0]).toMatch(/public https address/);
  });

  it('plain http is refused even to a public address; a public https address is accepted; T-Bank the same', async () => {
    const http1 = await put(prod, 'yk-http', { base_url: 'http://185.71.76.10/v3' });
    expect(http1.statusCode).toBe(422);
    expect(http1.json().errors['settings.base_url'][0]).toMatch(/https/);
    // An IP literal: nothing to resolve, nothing called.
    expect((await put(prod, 'yk-public', { base_url: 'https://185.71.76.10/v3' })).statusCode).toBe(201);
    const tb = await put(prod, 'tb-loop', { base_url: `http://127.0.0.1:${target.port}/v2` }, 'tbank');
    expect(tb.statusCode).toBe(422);
    expect(Object.keys(tb.json().errors)).toEqual(['settings.base_url']);
    expect(target.seen).toEqual([]);
  });

  it('the console\'s connector form refuses a loopback base_url with 422 naming the field, and creates nothing', async () => {
    const name = 'yk-console-loop';
    const r = await op.client.act('/operator/connectors/new?kind=yookassa', '/operator/connectors/new', {
      kind: 'yookassa', name, mode: 'live', enabled: 'true', 'settings.shop_id': '1', 'settings.secret_key': 'live_k', 'settings.base_url': `http://127.0.0.1:${target.port}/v3`,
    });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('Must be an https URL (ALLOW_PRIVATE_PROVIDER_URLS is off).');
    expect(await prod.app.services.connectors.find(name)).toBeNull();
    const r2 = await op.client.act('/operator/connectors/new?kind=yookassa', '/operator/connectors/new', {
      kind: 'yookassa', name, mode: 'live', enabled: 'true', 'settings.shop_id': '1', 'settings.secret_key': 'live_k', 'settings.base_url': 'https://169.254.169.254/v3',
    });
    expect(r2.statusCode).toBe(422);
    expect(r2.body).toContain('must not point to a private or loopback address');
    expect(await prod.app.services.connectors.find(name)).toBeNull();
  });
});

describe('production: a stored private address is never reached', () => {
  it('test connection of a connector stored with a loopback base_url fails without a connection to it (YooKassa and T-Bank)', async () => {
    await storedConnector(prod, 'yk-stored-loop', 'yookassa', `http://127.0.0.1:${target.port}/v3`);
    await storedConnector(prod, 'tb-stored-loop', 'tbank', `https://127.0.0.1:${target.port}/v2`);
    for (const name of ['yk-stored-loop', 'tb-stored-loop']) {
      const r = await op.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/test`);
      expect(r.statusCode).toBe(200);
      expect(r.body).toContain('Connection failed.');
      expect(r.body).toMatch(/not an https address|private or loopback address/);
    }
    expect(target.connections).toBe(0);
    expect(target.seen).toEqual([]);
  });

  it('a name that resolves to loopback is refused at call time, when it is resolved (no connection is made)', async () => {
    await storedConnector(prod, 'yk-stored-name', 'yookassa', `https://${hostname()}:${target.port}/v3`);
    const check = await prod.app.services.connectors.testConnection('yk-stored-name');
    expect(check).toEqual({ ok: false, message: expect.stringContaining('resolves to a private or loopback address') });
    expect(target.connections).toBe(0);
  });

  it('a start in production names the setting and each connector whose calls are refused', async () => {
    const off = await profileWarnings(prod.db.pool, { ...prod.config });
    expect(off).toContain(`connector yk-stored-loop calls http://127.0.0.1:${target.port}/v3, a private or loopback address: its calls are refused (ALLOW_PRIVATE_PROVIDER_URLS=false)`);
    expect(off.join('\n')).not.toContain('ALLOW_PRIVATE_PROVIDER_URLS=true');
    const on = await profileWarnings(prod.db.pool, { ...prod.config, allowPrivateProviderUrls: true });
    expect(on).toContain('ALLOW_PRIVATE_PROVIDER_URLS=true in production: connectors may call providers on private, loopback and link-local addresses and over plain http');
    expect(on).toContain(`connector yk-stored-loop calls http://127.0.0.1:${target.port}/v3, a private or loopback address (a staging provider?)`);
  });
});

describe('with ALLOW_PRIVATE_PROVIDER_URLS (the sandbox profile\'s default): emulators on loopback', () => {
  it('a loopback base_url is accepted and test connection reaches it; what it answered is not repeated beyond status and code', async () => {
    expect((await put(sbx, 'yk-loop', { base_url: `http://127.0.0.1:${target.port}/v3` })).statusCode).toBe(201);
    const ok = await sbx.app.services.connectors.testConnection('yk-loop');
    expect(ok.ok).toBe(true);
    // The shop id the operator typed, never the account the server named.
    expect(ok.message).toContain('account 1');
    expect(ok.message).not.toContain('internal-account-7');
    expect(target.seen).toContain('GET /v3/me');

    const leaky = await trap((req) => req.url?.endsWith('/me')
      ? { status: 403, body: { type: 'error', code: 'forbidden', description: 'internal: db01.corp password=hunter2' } }
      : { status: 200, body: { Success: false, ErrorCode: '9', Message: 'internal: redis at 10.0.0.5', Details: 'stack trace here' } });
    try {
      expect((await put(sbx, 'yk-leaky', { base_url: `http://127.0.0.1:${leaky.port}/v3` })).statusCode).toBe(201);
      expect(await sbx.app.services.connectors.testConnection('yk-leaky')).toEqual({ ok: false, message: 'YooKassa answered HTTP 403 forbidden' });
      expect((await put(sbx, 'tb-leaky', { base_url: `http://127.0.0.1:${leaky.port}/v2` }, 'tbank')).statusCode).toBe(201);
      expect(await sbx.app.services.connectors.testConnection('tb-leaky')).toEqual({ ok: false, message: 'T-Bank refused: error 9.' });
    } finally { await leaky.close(); }
  });

  it('a redirect is an answer, never followed: test connection says HTTP 302 and the address it names is not asked', async () => {
    const redirecting = await trap(() => ({ status: 302, body: {}, headers: { location: `http://127.0.0.1:${target.port}/elsewhere` } }));
    try {
      expect((await put(sbx, 'yk-redirect', { base_url: `http://127.0.0.1:${redirecting.port}/v3` })).statusCode).toBe(201);
      expect(await sbx.app.services.connectors.testConnection('yk-redirect')).toEqual({ ok: false, message: 'YooKassa answered HTTP 302' });
      expect(redirecting.seen).toEqual(['GET /v3/me']);
      expect(target.seen).not.toContain('GET /elsewhere');
    } finally { await redirecting.close(); }
  });
});

describe('the https request a production connector makes (publicHttpsRequest)', () => {
  /** A TLS server on loopback with a throwaway certificate for `localhost`; the test trusts it and lets the lookup pass. */
  async function tlsServer(handler: http.RequestListener) {
    const dir = mkdtempSync(join(tmpdir(), 'provider-tls-'));
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(made.stderr);
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, handler);
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { cert, port: (server.address() as AddressInfo).port, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
  }
  /** A lookup without the guard, answering the server's address whatever the system's order of localhost's addresses. */
  const anyAddress: LookupFunction = (_host, options, cb) => {
    const done = cb as (e: null, a: string | { address: string; family: number }[], f?: number) => void;
    if (options.all) done(null, [{ address: '127.0.0.1', family: 4 }]); else done(null, '127.0.0.1', 4);
  };
  const signal = () => AbortSignal.timeout(5000);

  it('answers the status, the text and Retry-After; a redirect is an answer, not followed; the guarded lookup refuses loopback before connecting', async () => {
    const seen: string[] = [];
    const s = await tlsServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      if (req.url === '/v3/moved') { res.writeHead(302, { location: '/v3/me' }); res.end(); return; }
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
      res.end(JSON.stringify({ type: 'error', code: 'too_many_requests' }));
    });
    try {
      const init = { method: 'GET' as const, headers: { authorization: 'Basic x' } };
      const a = await publicHttpsRequest(new URL(`https://localhost:${s.port}/v3/me`), init, signal(), { lookup: anyAddress, ca: s.cert });
      expect(a).toEqual({ status: 429, text: '{"type":"error","code":"too_many_requests"}', retryAfter: '2' });
      const moved = await publicHttpsRequest(new URL(`https://localhost:${s.port}/v3/moved`), init, signal(), { lookup: anyAddress, ca: s.cert });
      expect(moved.status).toBe(302);
      expect(seen).toEqual(['GET /v3/me Basic x', 'GET /v3/moved Basic x']);
      // The lookup a production connector uses: localhost resolves to loopback, so nothing is sent.
      const refused = await publicHttpsRequest(new URL(`https://localhost:${s.port}/v3/me`), init, signal(), { ca: s.cert }).catch((e: unknown) => e);
      expect((refused as { cause?: { code?: string } }).cause?.code).toBe('EUNSAFEADDR');
      expect(seen).toHaveLength(2);
    } finally { await s.close(); }
  });

  it('a connection refused is an error whose cause says so (classified as never sent)', async () => {
    const s = await tlsServer((_req, res) => res.end());
    await s.close();
    const e = await publicHttpsRequest(new URL(`https://localhost:${s.port}/v3/me`), { method: 'GET', headers: {} }, signal(), { lookup: anyAddress, ca: s.cert }).catch((x: unknown) => x);
    expect((e as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });
});
