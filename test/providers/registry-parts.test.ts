import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';

/**
 * The connector registry's parts (docs/adr/0132): the runtime builds a connector object from its
 * row and keeps it only while the row says the same; routing takes its connectors from that
 * runtime, so what a test puts there is what an operation is routed to.
 */

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const put = (name: string, body: object) =>
  t.app.inject({ method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: body });

describe('the connector registry in parts', () => {
  it('the runtime keeps one object per row content and builds it again when the row changes; a disabled row gives none', async () => {
    const { runtime } = t.app.services.connectors;
    expect((await put('sbx-kept', { kind: 'sandbox', mode: 'test', settings: {} })).statusCode).toBe(201);
    const first = await runtime.get('sbx-kept');
    expect(first).not.toBeNull();
    expect(await runtime.get('sbx-kept')).toBe(first);
    expect((await put('sbx-kept', { kind: 'sandbox', mode: 'test', settings: { refuse: true } })).statusCode).toBe(200);
    const changed = await runtime.get('sbx-kept');
    expect(changed).not.toBe(first);
    // The new object is the new row's: it refuses every creation.
    expect(await runtime.testConnection('sbx-kept')).toEqual({ ok: true, message: 'The sandbox answers (it is set to refuse every creation).' });
    expect((await put('sbx-kept', { kind: 'sandbox', mode: 'test', settings: { refuse: true }, enabled: false })).statusCode).toBe(200);
    expect(await runtime.get('sbx-kept')).toBeNull();
  });

  it('routing takes its connectors from the runtime: one put in place there is the candidate a route yields', async () => {
    const registry = t.app.services.connectors;
    expect((await put('sbx-swapped', { kind: 'sandbox', mode: 'test', settings: {} })).statusCode).toBe(201);
    const swapped = new SandboxConnector('sbx-swapped');
    registry.runtime.override(swapped);
    const list = await registry.routing.candidates(['sbx-swapped', 'sandbox'], 'payout_card', { live: false });
    expect(list[0]).toBe(swapped);
    expect(list.map((c) => c.name)).toEqual(['sbx-swapped', 'sandbox']);
    expect(await registry.get('sbx-swapped')).toBe(swapped);
  });
});
