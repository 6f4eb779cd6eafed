import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Capabilities, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { CONNECTORS, PAYOUT_TOKEN_ISSUERS } from '../../src/domain/providers/connectors/index.js';
import { SANDBOX_CAPABILITIES, SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import type { ConnectorPlugin, SettingSpec } from '../../src/domain/providers/plugin.js';
import { decrypt } from '../../src/lib/crypto.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { ECHO_CAPABILITIES, EchoConnector } from '../fixtures/connectors/echo/client.js';
import { echo } from '../fixtures/connectors/echo/index.js';

/**
 * Provider quirks are declared by the connector's plugin (docs/adr/0133): two-stage payments,
 * saved cards, a decline whose reason follows, and whose payout card tokens a kind issues. The
 * shared code asks the declaration, never a provider's name.
 */

const ISSUER = 'echo-issuer';
const ISSUING_CAPABILITIES: Capabilities = { ...ECHO_CAPABILITIES, payout: { card: true, sbp: false }, payoutCardBy: { number: false, tokens: [ISSUER] } };

/** Echo with a payout widget of its own: a kind that issues payout card tokens, declared by its plugin only. */
class IssuingEcho extends EchoConnector {
  override readonly capabilities = ISSUING_CAPABILITIES;
  readonly payoutWidget = { provider: ISSUER, accountId: 'agent-1', scriptUrl: 'https://widget.example/payouts.js' };
}
const issuing: ConnectorPlugin<'echo-tokens'> = {
  ...echo,
  kind: 'echo-tokens',
  capabilities: ISSUING_CAPABILITIES,
  payoutTokens: { issuer: ISSUER },
  build: (row) => new IssuingEcho(row.name, row.mode, String(row.secrets.token ?? '')),
};

/** Every setting of a kind set (so a connector shows the most it can do), each a value its type takes. */
function everySetting(p: ConnectorPlugin): Record<string, unknown> {
  const value = (s: SettingSpec) => (s.type === 'url' ? 'https://provider.example' : s.type === 'ip-list' ? '127.0.0.1' : s.type === 'boolean' ? true : 'set-1');
  return Object.fromEntries(Object.entries(p.settings).map(([f, s]) => [f, value(s)]));
}

describe('a connector claims nothing its plugin does not declare', () => {
  it('two-stage, saved cards, a decline reason that follows, hosted card form, methods and payout tokens: each a connector has, its plugin declares', () => {
    for (const p of [...CONNECTORS, issuing] as ConnectorPlugin[]) {
      const settings = everySetting(p);
      const secret = Object.fromEntries(Object.entries(settings).filter(([f]) => p.settings[f]!.secret));
      const c = p.build(
        { name: `${p.kind}-1`, mode: 'test', settings, secrets: secret },
        { db: { query: () => Promise.reject(new Error('no database here')) } as never, publicBaseUrl: 'http://pay.test', profile: 'sandbox', net: { allowPrivate: true } },
      );
      const d = p.capabilities;
      for (const f of ['twoStage', 'savedCards', 'declineReasonFollows', 'hostsCardForm', 'refunds', 'partialRefunds'] as const) {
        if (c.capabilities[f]) expect(d[f], `${p.kind}: ${f}`).toBe(true);
      }
      for (const m of ['card', 'sbp'] as const) {
        if (c.capabilities.payment[m]) expect(d.payment[m], `${p.kind}: payment ${m}`).toBe(true);
        if (c.capabilities.payout[m]) expect(d.payout[m], `${p.kind}: payout ${m}`).toBe(true);
      }
      const tokens = c.capabilities.payoutCardBy?.tokens ?? [];
      const declared = d.payoutCardBy?.tokens ?? [];
      if (tokens === 'any') expect(declared, `${p.kind}: any token`).toBe('any');
      else if (declared !== 'any') for (const i of tokens) expect(declared, `${p.kind}: tokens of ${i}`).toContain(i);
      if (c.payoutWidget) expect(c.payoutWidget.provider, `${p.kind}: its widget's tokens`).toBe(p.payoutTokens?.issuer);
    }
    // The build's one issuer today is declared by its plugin, not named by the shared code.
    expect(PAYOUT_TOKEN_ISSUERS).toEqual(CONNECTORS.flatMap((p) => (p.payoutTokens ? [p.payoutTokens.issuer] : [])));
    expect(PAYOUT_TOKEN_ISSUERS.length).toBeGreaterThan(0);
  });
});

describe('the service asks the declaration', () => {
  let t: TestApp;
  beforeAll(async () => { t = await setupTestApp({}, { connectors: [...CONNECTORS, issuing] }); });
  afterAll(async () => { await t.close(); });

  const admin = (method: 'PUT' | 'PATCH' | 'POST', url: string, payload: object) =>
    t.app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload });
  const tokenAccount = (merchantId: string, token: string) =>
    admin('POST', `/merchants/${merchantId}/payout-accounts`, { type: 'card', payout_token: token, first6: '424242', last4: '4242' });

  it('a payout token is kept as the token of the issuer whose widget the merchant\'s card payout route offers', async () => {
    expect((await admin('PUT', '/connectors/issuer-1', { kind: 'echo-tokens', mode: 'test', settings: { token: 'tok-0123' } })).statusCode).toBe(201);
    const m = await createMerchant(t);
    expect((await admin('PATCH', `/merchants/${m.merchantId}`, { routing: { payout_card: ['issuer-1'] } })).statusCode).toBe(200);
    const r = await tokenAccount(m.merchantId, 'syn-0001');
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ type: 'card', token_provider: ISSUER, identifier_masked: '424242******4242' });
    const row = (await t.db.pool.query(`SELECT identifier_enc, token_provider FROM payout_accounts WHERE id = $1`, [r.json().id])).rows[0];
    expect(row.token_provider).toBe(ISSUER);
    expect(decrypt(t.config.tokenEncryptionKey, row.identifier_enc)).toBe(`token:${ISSUER}:syn-0001`);
  });

  it('with two issuers among the kinds and no widget on the route, whose token it is cannot be told: 422 payout_token, nothing kept', async () => {
    const m = await createMerchant(t);
    const r = await tokenAccount(m.merchantId, 'syn-0002');
    expect(r.statusCode, r.body).toBe(422);
    expect(Object.keys(r.json().errors)).toEqual(['payout_token']);
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM payout_accounts WHERE merchant_id = $1`, [m.merchantId])).rows[0].n).toBe(0);
  });

  it('a decline waits for its reason only from a connector whose capabilities declare declineReasonFollows', async () => {
    const declined = async (): Promise<PaymentOutcome> => ({ status: 'declined', code: 'rejected', message: 'declined', ref: 'r-1', reasonFollows: true });
    const silent = new SandboxConnector('undeclared-1');
    const declaring = new class extends SandboxConnector { override readonly capabilities = { ...SANDBOX_CAPABILITIES, declineReasonFollows: true }; }('declaring-1');
    const a = await t.app.services.connectors.call(silent, 'get_payment', declined);
    expect(a).toEqual({ status: 'declined', code: 'rejected', message: 'declined', ref: 'r-1' });
    const b = await t.app.services.connectors.call(declaring, 'get_payment', declined);
    expect(b).toEqual({ status: 'declined', code: 'rejected', message: 'declined', ref: 'r-1', reasonFollows: true });
  });
});
