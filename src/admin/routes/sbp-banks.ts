import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { NotFoundError } from '../../errors.js';
import { sbpBankView } from '../../domain/operator-views.js';
import { actorOf, writeAudit } from '../../audit/audit.js';
import { list, ok, SbpBankSchema } from './schemas.js';

const MemberParams = Type.Object({ member_id: Type.String({ examples: ['100000000111'] }) });
const SetInput = defineInput({ active: v.bool({ required: true }) });

const tags = ['admin'];

/** Operator API: the SBP bank dictionary (inactive banks are hidden from merchants). */
export default async function sbpBankAdminRoutes(app: FastifyInstance): Promise<void> {
  app.get('/sbp-banks', { schema: { tags, summary: 'Every SBP bank, active or not', response: { 200: list(SbpBankSchema, 'The banks') } } }, async () => {
    const rows = await app.services.sbpBanks.listAll();
    return { success: true, data: rows.map(sbpBankView) };
  });

  app.patch<{ Params: { member_id: string } }>('/sbp-banks/:member_id', {
    schema: { tags, summary: 'Activate or deactivate an SBP bank', params: MemberParams, body: SetInput.schema, response: { 200: ok(SbpBankSchema.properties, 'The bank as changed') } },
  }, async (req) => {
    if (!/^\d{1,15}$/.test(req.params.member_id)) throw new NotFoundError('SBP bank not found.');
    const memberId = BigInt(req.params.member_id);
    // Unknown bank before bad input, as before the service took this over.
    await app.services.sbpBanks.exists(memberId);
    const { active } = SetInput.parse(requestInput(req));
    const who = actorOf(req);
    const bank = await app.services.sbpBanks.setActive(memberId, active!, (c, { before, after }) => writeAudit(c, who, {
      action: 'sbp_bank.set', objectType: 'sbp_bank', objectId: memberId.toString(), before: { active: before.active }, after: { active: after.active },
    }));
    return { success: true, ...sbpBankView(bank) };
  });
}
