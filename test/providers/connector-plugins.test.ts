import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTOR_KINDS, CONNECTORS } from '../../src/domain/providers/connectors/index.js';
import { helpText } from '../../src/admin/cli.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, payRequest } from '../factories/payment.js';
import { enrolledOperator } from '../operator/helpers.js';
import { echo } from '../fixtures/connectors/echo/index.js';

/**
 * Connectors as plugins (issue 28 item 4, docs/connectors/README.md): a kind is one folder and
 * one line in CONNECTORS; the registry, the operator API, the console, the CLI and the docs read
 * the list. The `echo` kind (test/fixtures/connectors/echo/) is a third one: this file adds it
 * with one line and pays through it end to end.
 */

const DIR = resolve('src/domain/providers/connectors');
const FILES = ['client.ts', 'mapping.ts', 'notifications.ts', 'settings.ts', 'index.ts'];

describe('the one list of connector kinds', () => {
  it('every folder under connectors/ is a kind of the list (and the reverse), each with client, mapping, notifications, settings and index', async () => {
    const folders = readdirSync(DIR).filter((n) => statSync(join(DIR, n)).isDirectory()).sort();
    expect(folders).toEqual([...CONNECTOR_KINDS].sort());
    for (const k of folders) for (const f of FILES) expect(existsSync(join(DIR, k, f)), `${k}/${f}`).toBe(true);
    // Each folder's index exports the plugin the list holds.
    for (const p of CONNECTORS) {
      const mod = await import(/* @vite-ignore */ pathToFileURL(join(DIR, p.kind, 'index.ts')).href) as Record<string, unknown>;
      expect(Object.values(mod)).toContain(p);
    }
    expect(CONNECTOR_KINDS).toEqual(CONNECTORS.map((p) => p.kind));
  });

  it('the docs list every kind, each with its own page; the CLI usage names every kind and its settings', () => {
    const readme = readFileSync('docs/connectors/README.md', 'utf8');
    for (const p of CONNECTORS) {
      expect(readme, p.kind).toContain(`| \`${p.kind}\` |`);
      expect(existsSync(`docs/connectors/${p.kind}.md`), `docs/connectors/${p.kind}.md`).toBe(true);
      expect(helpText()).toContain(`${p.kind} {`);
    }
    expect(helpText()).toContain(`--kind ${CONNECTOR_KINDS.join('|')}`);
  });
});

describe('a third kind is one folder and one line', () => {
  let t: TestApp;
  let plain: TestApp;
  // The one line: what connectors/index.ts would say with the kind added.
  const LIST = [...CONNECTORS, echo] as const;
  beforeAll(async () => {
    t = await setupTestApp({}, { connectors: LIST });
    plain = await setupTestApp();
  });
  afterAll(async () => { await t.close(); await plain.close(); });

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const inject = (a: TestApp, method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: object) =>
    a.app.inject({ method, url, headers: admin, ...(payload ? { payload } : {}) });

  it('nothing outside its folder names it: no source file, migration or doc page of the service', () => {
    const files = (d: string): string[] => readdirSync(d).flatMap((n) => {
      const p = join(d, n);
      return statSync(p).isDirectory() ? files(p) : [p];
    });
    // Code without its comments names it as a string; a doc names it as a row of a kinds table.
    const code = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
    const sql = (s: string) => s.replace(/--.*$/gm, '');
    const names = (f: string) => {
      const text = readFileSync(f, 'utf8');
      return f.endsWith('.md') ? /\| `echo` \|/.test(text) : /['"`]echo['"`]/.test(f.endsWith('.sql') ? sql(text) : code(text));
    };
    // The scan sees the kind where it is named (guards the test itself).
    expect(names(resolve('test/fixtures/connectors/echo/index.ts'))).toBe(true);
    const named = ['src', 'prisma', 'docs'].flatMap((d) => files(resolve(d)))
      .filter((f) => !f.includes(join('src', 'generated')) && /\.(ts|sql|md|eta|prisma)$/.test(f))
      .filter(names)
      .map((f) => relative(resolve('.'), f));
    expect(named).toEqual([]);
  });

  it('the operator API takes it (validated by its settings schema, its secret masked), and OpenAPI lists it; an app without the line refuses it', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/admin/docs/json' })).json() as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: { kind: { enum: string[] } } } }> } }>> };
    const put = doc.paths['/admin/v1/connectors/{name}']!.put!.requestBody!.content['application/json']!.schema.properties.kind.enum;
    expect(put).toEqual([...CONNECTOR_KINDS, 'echo']);
    const missing = await inject(t, 'PUT', '/admin/v1/connectors/echo-1', { kind: 'echo', mode: 'test', settings: {} });
    expect(missing.statusCode).toBe(422);
    expect(Object.keys(missing.json().errors)).toEqual(['settings.token']);
    const r = await inject(t, 'PUT', '/admin/v1/connectors/echo-1', { kind: 'echo', mode: 'test', settings: { token: 'tok-0123' } });
    expect(r.statusCode).toBe(201);
    expect(r.json()).toMatchObject({ name: 'echo-1', kind: 'echo', settings: { token: '********' } });
    expect(JSON.stringify((await t.db.pool.query(`SELECT settings FROM connectors WHERE name = 'echo-1'`)).rows[0])).not.toContain('tok-0123');
    const refused = await inject(plain, 'PUT', '/admin/v1/connectors/echo-1', { kind: 'echo', mode: 'test', settings: { token: 'tok-0123' } });
    expect(refused.statusCode).toBe(422);
  });

  it('the console lists it among the kinds, with its settings', async () => {
    const op = await enrolledOperator(t, 'admin');
    const page = await op.client.get('/operator/connectors');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<code>echo</code>');
    expect(page.body).toContain('<code>token</code> (required) (secret)');
  });

  it('routing sends payments through it: a card paid at once, an SBP payment paid by its verified notification', async () => {
    await inject(t, 'PUT', '/admin/v1/connectors/echo-2', { kind: 'echo', mode: 'test', settings: { token: 'tok-4567' } });
    const m = await createMerchant(t);
    expect((await inject(t, 'PATCH', `/admin/v1/merchants/${m.merchantId}`, { routing: { payment_card: ['echo-2'], payment_sbp: ['echo-2'] } })).statusCode).toBe(200);

    const cardBill = await createBill(t, m, { amount: '100.00' });
    // The echo hosts its card form: the page posts no card fields.
    const card = await payRequest(t, cardBill, { method: 'BANK_CARD' });
    expect(card.statusCode).toBe(200);
    expect(card.json().status).toBe('SUCCESS');
    const paid = (await t.db.pool.query(`SELECT id, status::text, connector, provider_ref FROM payments WHERE bill_id = $1`, [cardBill])).rows[0];
    expect(paid).toMatchObject({ status: 'SUCCESS', connector: 'echo-2', provider_ref: `echo_${paid.id}` });
    const clearing = await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE debit_account = 'RUB:acquirer_clearing:echo-2'`);
    expect(clearing.rows[0].n).toBeGreaterThan(0);

    const sbpBill = await createBill(t, m, { amount: '50.00' });
    const sbp = await payRequest(t, sbpBill, { method: 'SBP' });
    expect(sbp.json().status).toBe('PROCESS');
    const id = sbp.json().payment_id as string;
    const notify = (body: object) => t.app.inject({ method: 'POST', url: '/providers/echo-2/notifications', payload: body });
    const forged = await notify({ token: 'wrong-000', payment_id: id, ref: `echo_${id}`, status: 'paid:50.00' });
    expect(forged.statusCode).toBe(400);
    expect((await t.db.pool.query(`SELECT status::text FROM payments WHERE id = $1`, [id])).rows[0].status).toBe('PROCESS');
    const ok = await notify({ token: 'tok-4567', payment_id: id, ref: `echo_${id}`, status: 'paid:50.00' });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('OK');
    expect((await t.db.pool.query(`SELECT status::text, amount_received::text FROM payments WHERE id = $1`, [id])).rows[0]).toEqual({ status: 'SUCCESS', amount_received: '50.00' });
  });
});
