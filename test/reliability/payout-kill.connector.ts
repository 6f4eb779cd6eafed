import {
  ConnectorRefusedError, type CallContext, type Capabilities, type Connector, type CreatePayout, type OperationOutcome,
} from '../../src/domain/providers/connector.js';

/**
 * A minimal payouts-only connector speaking YooKassa's payouts API (POST /v3/payouts with
 * Idempotence-Key = our payout id, GET /v3/payouts/{id}; HTTP Basic with the gateway's agentId
 * and its key), enough to run a real worker process against the emulator (test/emulators/
 * yookassa.ts). YooKassa looks payouts up by its own id only: without one, getPayout answers
 * not_found, and reconciliation repeats the creation under the same key.
 */
export class YooKassaPayoutTestConnector implements Connector {
  readonly kind = 'yookassa' as const;
  readonly mode = 'test' as const;
  readonly capabilities: Capabilities = {
    payment: { card: false, sbp: false }, refunds: false, partialRefunds: false, payout: { card: true, sbp: false }, hostsCardForm: true,
  };

  constructor(readonly name: string, private readonly apiUrl: string, private readonly agentId: string, private readonly key: string) {}

  async createPayout(p: CreatePayout, ctx: CallContext): Promise<OperationOutcome> {
    const body = JSON.stringify({
      amount: { value: p.amount.toFixed(2), currency: p.currency },
      payout_destination_data: { type: 'bank_card', card: { number: p.account } },
      description: `payout ${p.payoutId}`,
      metadata: { payout_id: p.payoutId },
    });
    return this.answer(await this.http('POST', '/payouts', ctx, body, p.payoutId));
  }

  async getPayout(q: { payoutId: string; ref: string | null }, ctx: CallContext): Promise<OperationOutcome> {
    if (q.ref === null) return { status: 'failed', code: 'not_found', message: 'no YooKassa payout id to look up', ref: null };
    return this.answer(await this.http('GET', `/payouts/${encodeURIComponent(q.ref)}`, ctx));
  }

  private async http(method: string, path: string, ctx: CallContext, body?: string, key?: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${this.agentId}:${this.key}`).toString('base64')}` };
    if (body !== undefined) { headers['content-type'] = 'application/json'; headers['idempotence-key'] = key!; }
    try {
      return await fetch(`${this.apiUrl}${path}`, { method, headers, body, signal: ctx.signal });
    } catch (e) {
      const code = (e as { cause?: { code?: string } }).cause?.code;
      if (code === 'ECONNREFUSED') throw new ConnectorRefusedError('connection_refused', 'yookassa: connection refused');
      throw e;
    }
  }

  private async answer(r: Response): Promise<OperationOutcome> {
    const j = await r.json() as { id?: string; status?: string; code?: string; description?: string; cancellation_details?: { reason?: string } };
    if (r.status === 404) return { status: 'failed', code: 'not_found', message: j.description ?? 'not found', ref: null };
    if (r.status >= 500) return { status: 'unknown', ref: null, reason: `yookassa: HTTP ${r.status}` };
    if (r.status >= 400) return { status: 'refused', code: j.code ?? 'invalid_request', message: j.description ?? `HTTP ${r.status}` };
    if (j.status === 'succeeded') return { status: 'succeeded', ref: j.id! };
    if (j.status === 'canceled') return { status: 'failed', code: j.cancellation_details?.reason ?? 'canceled', message: 'yookassa: payout canceled', ref: j.id! };
    return { status: 'pending', ref: j.id! };
  }

  createPayment(): never { throw new Error('payouts only'); }
  getPayment(): never { throw new Error('payouts only'); }
  refund(): never { throw new Error('payouts only'); }
  getRefund(): never { throw new Error('payouts only'); }
  parseNotification(): never { throw new Error('payouts only'); }
}
