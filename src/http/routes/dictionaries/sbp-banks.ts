import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

/** GET /api/v1/payout/dictionaries/sbp_banks */
export function sbpBanksRoute(app: FastifyInstance): void {
  app.get('/sbp_banks', {
    schema: {
      tags: ['payout'],
      summary: 'Active SBP banks (member_id is the account_bank of SBP payouts)',
      response: {
        200: Type.Object({
          data: Type.Array(Type.Object({
            member_id: Type.Integer({ examples: [100000000111] }), name: Type.String({ examples: ['Сбербанк'] }), name_en: Type.String({ examples: ['Sberbank'] }),
            bic: Type.Integer({ examples: [44525225] }),
          })),
          success: Type.String({ description: 'The string "true"', examples: ['true'] }),
        }),
      },
    },
  }, async () => {
    const banks = await app.services.sbpBanks.listActive();
    // The spec types member_id and bic as integers (a BIC's leading zero is not kept).
    const data = banks.map((b) => ({ member_id: Number(b.member_id), name: b.name, name_en: b.name_en, bic: Number(b.bic) }));
    return { data, success: 'true' };
  });
}
