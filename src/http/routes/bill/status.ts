import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../../errors.js';
import { deferredRead, ensureMerchant } from '../../merchant-auth.js';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { BillSchema, billView } from '../../views/bill.js';

const input = defineInput({ id: v.string({ required: true, max: 64, description: 'Bill ID' }) });

/** GET /api/v1/bill/status */
export function billStatusRoute(app: FastifyInstance): void {
  app.get('/status', {
    schema: {
      tags: ['bill'],
      summary: 'Bill info and status',
      querystring: input.schema,
      response: { 200: Type.Composite([BillSchema, Type.Object({ success: Type.Boolean() })]) },
    },
    // Authenticated inside the read: one round trip instead of two (a hot read: payers' shops
    // poll it). A bad query authenticates first, as the hook would.
    config: { deferAuth: true },
  }, async (req) => {
    let p;
    try {
      p = input.parse(requestInput(req));
    } catch (e) {
      await ensureMerchant(app, req);
      throw e;
    }
    const bill = await deferredRead(req,
      async (hash) => { const r = await app.services.bills.statusByToken(hash, p.id); return r && { merchant: r.merchant, value: r.bill }; },
      (m) => app.services.bills.find(m, p.id));
    if (!bill) throw new DomainError('bill_not_found');
    return { ...billView(bill, app.config.tz), success: true };
  });
}
