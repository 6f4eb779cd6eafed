import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { formatDateTime } from '../../../lib/time.js';
import { apiActor } from '../../../audit/audit.js';
import { savedMethodRevokeAudit } from '../../../domain/audit-steps.js';

const MethodSchema = Type.Object({
  id: Type.String({ examples: ['Zq3LmN8pR2sT5vW7'] }),
  card_mask: Type.Union([Type.String(), Type.Null()], { description: 'First 6 and last 4 digits', examples: ['424242******4242'] }),
  card_expiry: Type.Union([Type.String(), Type.Null()], { description: 'MM/YY when the provider gives it', examples: ['12/29'] }),
  connector: Type.String({ description: 'The connector that saved it (and charges it)', examples: ['yookassa'] }),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone', examples: ['2026-11-23 18:42:11'] }),
});

const revokeInput = defineInput({ payment_method_id: v.string({ required: true, max: 64, description: 'The saved card to revoke' }) });

/** GET /api/v1/payment/methods and POST /api/v1/payment/methods/revoke (docs/adr/0074-saved-cards-and-recurring-charges.md). */
export function paymentMethodsRoutes(app: FastifyInstance): void {
  app.get('/methods', {
    schema: {
      tags: ['payment'],
      summary: "The merchant's saved cards that may be charged (ACTIVE), newest first",
      response: { 200: Type.Object({ data: Type.Array(MethodSchema), success: Type.Boolean() }) },
    },
  }, async (req) => {
    const list = await app.services.savedMethods.list(req.merchant.id);
    return { data: list.map((x) => ({ ...x, created_at: formatDateTime(x.created_at, app.config.tz) })), success: true };
  });

  app.post('/methods/revoke', {
    schema: {
      tags: ['payment'],
      summary: 'Revoke a saved card: it can never be charged again (revoking twice is fine)',
      body: revokeInput.schema,
      response: { 200: Type.Object({ id: Type.String(), status: Type.String({ enum: ['REVOKED'] }), success: Type.Boolean() }) },
    },
  }, async (req) => {
    const p = revokeInput.parse(requestInput(req));
    return { ...(await app.services.savedMethods.revoke(req.merchant.id, p.payment_method_id, savedMethodRevokeAudit(apiActor(req)))), success: true };
  });
}
