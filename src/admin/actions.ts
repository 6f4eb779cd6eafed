import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../errors.js';
import { isIdLike } from './input.js';
import { parseMerchantPatch } from './merchant-patch.js';
import type { Routing } from '../domain/providers/registry.js';
import { writeAudit, type Actor } from '../audit/audit.js';
import { merchantAudit } from '../audit/steps.js';
import { newPassword } from '../domain/operator/operator.service.js';

/**
 * The operator's changes, each with its audit entry, shared by the operator API
 * (src/admin/routes/*) and the operator console (src/operator/*): one implementation of each
 * rule, whichever face the operator uses. `who` is the request's actor (`actorOf(req)`).
 */
export function operatorActions(app: FastifyInstance) {
  const { merchants, payouts, outbox } = app.services;
  const audited = (who: Actor, action: string) => merchantAudit(app.config, who, action);

  const loadMerchant = async (id: string) => {
    if (!isIdLike(id)) throw new NotFoundError('Merchant not found.');
    return merchants.get(id);
  };

  return {
    loadMerchant,

    async createMerchant(who: Actor, input: { name: string; email: string; password?: string | undefined }) {
      const passwordHash = input.password ? await merchants.hashPassword(input.password) : null;
      const { merchant, apiToken, testApiToken } = await merchants.create({ name: input.name, email: input.email, passwordHash }, audited(who, 'merchant.create'));
      return { merchant: await merchants.get(merchant.id), apiToken, testApiToken };
    },

    /** PATCH /merchants/{id}: `body` in the API's JSON shape (parseMerchantPatch). */
    async updateMerchant(who: Actor, id: string, body: Record<string, unknown>) {
      const cur = await loadMerchant(id);
      const patch = parseMerchantPatch(body);
      if (patch.routing) {
        // Unknown names, or a kind without a connector class yet: 422 on the route, nothing stored.
        await app.services.connectors.assertRoutable(patch.routing);
        // Only the routes set are stored: an unset route follows the profile (the sandbox's default, or none).
        patch.routing = { ...(cur.routing as Partial<Routing> | null ?? {}), ...patch.routing };
      }
      return merchants.update(id, patch, audited(who, 'merchant.update'));
    },

    async refreshMerchantToken(who: Actor, id: string): Promise<string> {
      await loadMerchant(id);
      return merchants.refreshToken(id, audited(who, 'merchant.token.refresh'));
    },

    async resetMerchantPassword(who: Actor, id: string): Promise<string> {
      await loadMerchant(id);
      const password = newPassword();
      await merchants.setPassword(id, password, audited(who, 'merchant.password.reset'));
      return password;
    },

    /**
     * An operator's reset of a cabinet account's TOTP (a merchant locked out: a lost phone and
     * lost recovery codes): `memberId` null is the merchant's own login (the owner), else a team
     * member of this merchant (404 otherwise). Clears the secret and the recovery codes and ends
     * that person's sessions; audited without secrets in the same transaction.
     */
    async resetMerchantTwoFactor(who: Actor, id: string, memberId: string | null): Promise<void> {
      await loadMerchant(id);
      if (memberId !== null && !isIdLike(memberId)) throw new NotFoundError('Team member not found.');
      const factor = app.services.cabinetTwoFactor[memberId === null ? 'merchants' : 'merchant_users'];
      const found = await factor.reset(id, memberId ?? id, (c, r) => writeAudit(c, who, {
        action: 'merchant.two_factor.reset',
        ...(memberId === null ? { objectType: 'merchant', objectId: id } : { objectType: 'merchant_user', objectId: memberId }),
        before: { totp_enabled: r.wasEnabled },
        after: { totp_enabled: false, sessions_ended: r.sessionsEnded, ...(memberId === null ? {} : { merchant_id: id }) },
      }));
      if (!found) throw new NotFoundError(memberId === null ? 'Merchant not found.' : 'Team member not found.');
    },

    approvePayout(who: Actor, id: string) {
      return payouts.approve(id, (c, r) => writeAudit(c, who, {
        action: 'payout.approve', objectType: 'payout', objectId: id, before: { status: r.from }, after: { status: r.to },
      }));
    },

    declinePayout(who: Actor, id: string, reason: string | undefined) {
      return payouts.decline(id, reason, (c, r) => writeAudit(c, who, {
        action: 'payout.decline', objectType: 'payout', objectId: id, before: { status: r.from }, after: { status: r.to, reason: reason ?? null },
      }));
    },

    /** The operator's decision on an attention item (the object's state table and ledger, audited). */
    resolveAttention(who: Actor, id: string, body: Record<string, unknown>) {
      return app.services.attention.resolve(id, body, who.actor, (c, before, after) => writeAudit(c, who, {
        action: 'attention.resolve', objectType: 'attention_item', objectId: after.id,
        before: { resolved_at: null, object_type: before.objectType, object_id: before.objectId },
        after: { resolution: after.resolution, note: after.note, resolved_at: after.resolvedAt },
      }));
    },

    redeliverEvent(who: Actor, id: string) {
      return outbox.redeliver(id, undefined, (c, e) => writeAudit(c, who, {
        action: 'event.redeliver', objectType: 'event', objectId: e.id, before: { status: e.status }, after: null,
      }));
    },

    redeliverDead(who: Actor, merchantId: string) {
      return outbox.redeliverDead(merchantId, (c, r) => writeAudit(c, who, {
        action: 'event.redeliver_dead', objectType: 'merchant', objectId: merchantId, before: null, after: r,
      }));
    },
  };
}

export type OperatorActions = ReturnType<typeof operatorActions>;
