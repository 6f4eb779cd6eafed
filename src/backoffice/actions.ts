import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../errors.js';
import { isIdLike } from '../lib/input-fields.js';
import { parseMerchantPatch } from '../domain/merchant/merchant-patch.js';
import type { Routing } from '../domain/providers/registry.js';
import { writeAudit, type Actor } from '../audit/audit.js';
import { merchantAudit } from '../domain/audit-steps.js';
import { maskEmail } from '../lib/email.js';
import { mailReachesReader } from '../mail/mail-outbox.js';
import { mailTexts } from '../mail/templates.js';
import { RESET_LINK_MINUTES } from '../domain/merchant/password-reset.service.js';
import { OPERATOR_INVITE_MINUTES, OPERATOR_RESET_MINUTES } from '../domain/operator/password-reset.js';
import { changed } from '../audit/audit.js';
import type { OperatorStatusName, OperatorView } from '../domain/operator/operator.service.js';
import type { Role } from '../domain/operator/roles.js';

/** What the audit trail keeps of an operator (never a secret). */
export const operatorAuditView = (o: OperatorView) => ({ email: o.email, role: o.role, status: o.status, has_password: o.has_password });

/**
 * Production without SMTP_URL: a reset link would wait unsent while the operator is told it
 * went out. Refused instead (503 on the API, said on the console page).
 */
export class MailNotConfiguredError extends Error {
  constructor() { super('Outgoing mail is not configured (SMTP_URL): no reset link can be sent.'); }
}

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

    /** A payment for the console's payment page, with its shop's and merchant's names and the bill's order id. */
    async loadPayment(id: string) {
      if (!isIdLike(id)) throw new NotFoundError('Payment not found.');
      const p = await app.db.prisma.payment.findFirst({ where: { id }, include: { shop: { select: { name: true } }, bill: { select: { orderId: true } }, merchant: { select: { name: true } } } });
      if (!p) throw new NotFoundError('Payment not found.');
      return p;
    },

    /** The payments a merchant's held total is made of, oldest first (the partial index payments_held_idx). */
    heldPayments(merchantId: string) {
      return app.db.prisma.payment.findMany({ where: { merchantId, status: 'PROCESS', authorizedAmount: { not: null } }, orderBy: { createdAt: 'asc' }, take: 50 });
    },

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

    /** An admin's change of an operator's role or status (disabling revokes the tokens and ends the sessions: OperatorService.update). */
    async updateOperator(who: Actor, id: string, patch: { role?: Role | undefined; status?: OperatorStatusName | undefined }): Promise<OperatorView> {
      if (!isIdLike(id)) throw new NotFoundError('Operator not found.');
      return app.services.operators.update(id, patch, (c, r) => writeAudit(c, who, {
        action: 'operator.update', objectType: 'operator', objectId: r.after.id,
        ...((d) => (r.tokensRevoked > 0 ? { before: d.before, after: { ...d.after, tokens_revoked: r.tokensRevoked } } : d))(changed(operatorAuditView(r.before), operatorAuditView(r.after))),
      }));
    },

    /** An admin's reset of an operator's TOTP (a lost phone): false when there is no such operator. */
    async resetOperatorTwoFactor(who: Actor, id: string): Promise<boolean> {
      if (!isIdLike(id)) return false;
      return app.services.operatorTwoFactor.reset(id, (c, r) => writeAudit(c, who, {
        action: 'operator.totp.reset', objectType: 'operator', objectId: id, before: { totp_enabled: r.wasEnabled }, after: { totp_enabled: false },
      }));
    },

    /**
     * An admin invites an operator by email: the account is made without a password and the
     * invitee is mailed a one-time link (valid OPERATOR_INVITE_MINUTES) to choose one, in the
     * same transaction as the audit entries; nobody else ever sees a password.
     */
    async inviteOperator(who: Actor, email: string, role: Role): Promise<{ operator: OperatorView; sentTo: string }> {
      if (!mailReachesReader(app.config)) throw new MailNotConfiguredError();
      const o = await app.services.operators.create({ email, role, password: null }, (c, o) => writeAudit(c, who, {
        action: 'operator.create', objectType: 'operator', objectId: o.id, before: null, after: { ...operatorAuditView(o), invited: true },
      }));
      const r = await app.services.operatorPasswordResets.request(o.id, 'invite', (c, x) => writeAudit(c, who, {
        action: 'operator.invite', objectType: 'operator', objectId: x.operatorId, before: null,
        after: { link_sent_to: maskEmail(x.email), valid_minutes: OPERATOR_INVITE_MINUTES },
      }));
      return { operator: o, sentTo: maskEmail(r!.email) };
    },

    /**
     * An admin's password reset of an operator: a one-time link mailed to the operator (valid an
     * hour), and every console session of theirs ended at once, in the same transaction as the
     * audit entry (an admin resets because the password may be known to someone else). The
     * admin learns only where it went. 404 for no such active operator.
     */
    async sendOperatorPasswordReset(who: Actor, operatorId: string): Promise<{ sentTo: string }> {
      if (!isIdLike(operatorId)) throw new NotFoundError('Operator not found.');
      if (!mailReachesReader(app.config)) throw new MailNotConfiguredError();
      const r = await app.services.operatorPasswordResets.request(operatorId, 'admin', async (c, x) => {
        const ended = await c.query('DELETE FROM operator_sessions WHERE operator_id = $1', [x.operatorId]);
        await writeAudit(c, who, {
          action: 'operator.password.reset', objectType: 'operator', objectId: x.operatorId, before: null,
          after: { link_sent_to: maskEmail(x.email), valid_minutes: OPERATOR_RESET_MINUTES, sessions_ended: ended.rowCount ?? 0 },
        });
      });
      if (!r) throw new NotFoundError('Operator not found (or disabled: enable it first).');
      return { sentTo: maskEmail(r.email) };
    },

    /**
     * An operator's password reset: a one-time link mailed to the account (`memberId` null: the
     * merchant's own login, else its team member), valid an hour, and the account's open
     * sessions ended at once; the operator learns only where it went (`o***@example.com`).
     * Audited in the same transaction.
     */
    async sendPasswordResetLink(who: Actor, id: string, memberId: string | null): Promise<{ sentTo: string }> {
      await loadMerchant(id);
      if (memberId !== null && !isIdLike(memberId)) throw new NotFoundError('Team member not found.');
      if (!mailReachesReader(app.config)) throw new MailNotConfiguredError();
      const r = await app.services.passwordResets.request({ merchantId: id, userId: memberId }, (c, x) => writeAudit(c, who, {
        action: 'merchant.password.reset',
        ...(memberId === null ? { objectType: 'merchant', objectId: id } : { objectType: 'merchant_user', objectId: memberId }),
        before: null,
        after: { link_sent_to: maskEmail(x.email), valid_minutes: RESET_LINK_MINUTES, sessions_ended: x.sessionsEnded, ...(memberId === null ? {} : { merchant_id: id }) },
      }));
      return { sentTo: maskEmail(r.email) };
    },

    /**
     * An operator's reset of a cabinet account's TOTP (a merchant locked out: a lost phone and
     * lost recovery codes), admin operators only (src/backoffice/permissions.ts), with the reason the
     * operator checked: `memberId` null is the merchant's own login (the owner), else a team
     * member of this merchant (404 otherwise). Clears the secret and the recovery codes, ends
     * that person's sessions and mails them; audited with the reason, without secrets, in the
     * same transaction.
     */
    async resetMerchantTwoFactor(who: Actor, id: string, memberId: string | null, reason: string): Promise<void> {
      await loadMerchant(id);
      if (memberId !== null && !isIdLike(memberId)) throw new NotFoundError('Team member not found.');
      const factor = app.services.cabinetTwoFactor[memberId === null ? 'merchants' : 'merchant_users'];
      const found = await factor.reset(id, memberId ?? id, async (c, r) => {
        await writeAudit(c, who, {
          action: 'merchant.two_factor.reset',
          ...(memberId === null ? { objectType: 'merchant', objectId: id } : { objectType: 'merchant_user', objectId: memberId }),
          before: { totp_enabled: r.wasEnabled },
          after: { totp_enabled: false, sessions_ended: r.sessionsEnded, reason, ...(memberId === null ? {} : { merchant_id: id }) },
        });
        await app.services.mail.enqueueToAccount(c, { merchantId: id, userId: memberId }, 'two_factor_reset', mailTexts.twoFactorReset());
      });
      if (!found) throw new NotFoundError(memberId === null ? 'Merchant not found.' : 'Team member not found.');
    },

    /** Moderation: audited, and the merchant's owner is mailed the decision (same transaction). */
    approvePayout(who: Actor, id: string) {
      return payouts.approve(id, async (c, r) => {
        await writeAudit(c, who, { action: 'payout.approve', objectType: 'payout', objectId: id, before: { status: r.from }, after: { status: r.to } });
        await app.services.mail.enqueueToAccount(c, { merchantId: r.payout.merchant_id, userId: null }, 'payout_approved', mailTexts.payoutApproved(r.payout));
      });
    },

    declinePayout(who: Actor, id: string, reason: string | undefined) {
      return payouts.decline(id, reason, async (c, r) => {
        await writeAudit(c, who, {
          action: 'payout.decline', objectType: 'payout', objectId: id, before: { status: r.from }, after: { status: r.to, reason: reason ?? null },
        });
        await app.services.mail.enqueueToAccount(c, { merchantId: r.payout.merchant_id, userId: null }, 'payout_declined',
          mailTexts.payoutDeclined({ ...r.payout, reason: reason ?? 'declined by the operator' }));
      });
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
