// The audit steps of the actions that faces take, one per action so it reads the same whoever
// took it. They name domain objects and views, so they sit in the domain, above the trail's
// writer (src/audit/audit.ts), which knows no domain (docs/adr/0123-layers-all-the-way-down.md).
import type { Config } from '../config.js';
import type { RefundRecord } from './refund/refund.repository.js';
import type { PayoutView } from './payout/payout.view.js';
import type { InTx } from '../db/client.js';
import type { ApiKeyView } from './api-key/api-key.service.js';
import type { ConnectorChange, ConnectorRegistry, ConnectorShape } from './providers/registry.js';
import type { RehearsalStart } from './rehearsal/rehearsal.service.js';
import type { ChargebackRecord } from './chargeback/chargeback.repository.js';
import type { HoldRequest } from './payment/payment.service.js';
import type { SavedMethodRevoked } from './payment/saved-methods.js';
import type { Merchant, PayoutAccount, Shop } from '../generated/prisma/client.js';
import { merchantView, payoutAccountView, shopView } from './operator-views.js';
import { changed, writeAudit, type Actor } from '../audit/audit.js';
import type { AuditService } from '../audit/audit.service.js';
import type { OutboxService } from '../outbox/outbox.service.js';

type Change<T> = { before: T | null; after: T };

/**
 * The audit step of a change to an object shown through an operator view: the view's changed
 * fields (`updated_at` moves on every change and says nothing). The views never hold a secret
 * (token or password hash, card number: masked), and writeAudit drops secret-named keys anyway.
 */
function viewStep<T extends { id: string }>(show: (x: T) => Record<string, unknown>, objectType: string) {
  const shown = (x: T) => { const { updated_at: _, ...rest } = show(x); return rest; };
  return (who: Actor, action: string): InTx<Change<T>> => (c, r) => writeAudit(c, who, {
    action, objectType, objectId: r.after.id,
    ...(r.before ? changed(shown(r.before), shown(r.after)) : { before: null, after: shown(r.after) }),
  });
}

export const merchantAudit = (config: Config, who: Actor, action: string) =>
  viewStep<Merchant>((m) => merchantView(config, m), 'merchant')(who, action);
export const shopAudit = (config: Config, who: Actor, action: string) =>
  viewStep<Shop>((s) => shopView(config, s), 'shop')(who, action);
export const payoutAccountAudit = (config: Config, who: Actor, action: string) =>
  viewStep<PayoutAccount>((a) => payoutAccountView(config, a), 'payout_account')(who, action);

/** `first` (the Idempotency-Key answer, say; may be absent), then `audit`, in the same transaction. */
export const withAudit = <T>(first: InTx<T> | undefined, audit: InTx<T>): InTx<T> => async (c, r) => {
  if (first) await first(c, r);
  await audit(c, r);
};

// The steps of money and event actions, shared by the cabinet and the operator API, so one
// action reads the same whoever took it.

/** A refund created (full or partial), with its amount and first status. */
export const refundAudit = (who: Actor): InTx<RefundRecord> => (c, r) => writeAudit(c, who, {
  action: 'refund.create', objectType: 'refund', objectId: r.id, before: null,
  after: { payment_id: r.paymentId, amount: r.amount.toFixed(2), currency: r.currency, status: r.status },
});

/** The payouts of one request (a split makes several), one entry each. */
export const payoutCreateAudit = (who: Actor): InTx<PayoutView[]> => async (c, rows) => {
  for (const p of rows) {
    await writeAudit(c, who, {
      action: 'payout.create', objectType: 'payout', objectId: p.id, before: null,
      after: { amount: p.amount, commission: p.commission, currency: p.currency, status: p.status, account: p.account_identifier },
    });
  }
};

/** One event sent again. */
export const redeliverAudit = (who: Actor): InTx<{ id: string; status: string }> => (c, e) => writeAudit(c, who, {
  action: 'event.redeliver', objectType: 'event', objectId: e.id, before: { status: e.status }, after: null,
});

/** A bill switched on or off. */
export const billToggleAudit = (who: Actor): InTx<{ before: { id: string; active: boolean }; after: { id: string; active: boolean } }> => (c, r) =>
  writeAudit(c, who, { action: 'bill.toggle', objectType: 'bill', objectId: r.after.id, before: { active: r.before.active }, after: { active: r.after.active } });

/**
 * A test postback: one attempt now, outside any transaction (it changes no stored object), so
 * its entry is written after the attempt, with what the receiver answered.
 */
export async function testPostback(s: { outbox: OutboxService; audit: AuditService }, who: Actor, merchantId: string | null, shopId: string) {
  const r = await s.outbox.sendTestPostback(merchantId, shopId);
  await s.audit.record(who, {
    action: 'shop.test_postback', objectType: 'shop', objectId: shopId, before: null, after: { event_id: r.event.id, delivered: r.delivered },
  });
  return r;
}

/**
 * A restricted API key created or revoked: its merchant, name and scopes, never its
 * token. `reason` says why a revocation happened when it was not asked for (a member removed).
 */
export const apiKeyAudit = (who: Actor, action: 'api_key.create' | 'api_key.revoke', reason?: string): InTx<ApiKeyView> => (c, k) => writeAudit(c, who, {
  action, objectType: 'api_key', objectId: k.id,
  before: action === 'api_key.create' ? null : { revoked_at: null },
  after: {
    merchant_id: k.merchant_id, name: k.name, scopes: k.scopes,
    ...(action === 'api_key.revoke' ? { revoked_at: k.revoked_at } : {}), ...(reason ? { reason } : {}),
  },
});

// Connectors and chargebacks: both change where money goes, so both are audited.

/** A connector's audited fields, settings flattened (`settings.base_url`): secret values never, only their names. */
const connectorFields = (x: ConnectorShape): Record<string, unknown> => {
  const out: Record<string, unknown> = { kind: x.kind, mode: x.mode, enabled: x.enabled, credentials_set: x.credentials };
  for (const [k, v] of Object.entries(x.settings)) out[`settings.${k}`] = v;
  return out;
};

/**
 * A connector created, changed, switched on or off: the fields that changed, and which
 * credentials (secret settings) got a new value, by name ("password changed"), never the value.
 */
export const connectorAudit = (who: Actor): InTx<ConnectorChange> => (c, r) => {
  const flipped = r.before !== null && r.before.enabled !== r.after.enabled;
  const action = r.before === null ? 'connector.create' : flipped ? (r.after.enabled ? 'connector.enable' : 'connector.disable') : 'connector.update';
  const diff = r.before ? changed(connectorFields(r.before), connectorFields(r.after)) : { before: null, after: connectorFields(r.after) };
  return writeAudit(c, who, {
    action, objectType: 'connector', objectId: r.name,
    before: diff.before, after: { ...diff.after, credentials_changed: r.credentialsChanged },
  });
};

/** A held payment's capture or cancellation asked for (docs/adr/0073-two-stage-payments.md). */
export const holdAudit = (who: Actor): InTx<HoldRequest> => (c, h) => writeAudit(c, who, {
  action: `payment.${h.kind}`, objectType: 'payment', objectId: h.paymentId, before: { status: 'PROCESS', held: h.held.toFixed(2) },
  after: { merchant_id: h.merchantId, [h.kind === 'capture' ? 'captured' : 'released']: h.amount.toFixed(2) },
});

/** A saved card revoked (docs/adr/0074-saved-cards-and-recurring-charges.md): written only when this request revoked it. */
export const savedMethodRevokeAudit = (who: Actor): InTx<SavedMethodRevoked> => async (c, r) => {
  if (r.changed) {
    await writeAudit(c, who, {
      action: 'payment_method.revoke', objectType: 'payment_method', objectId: r.id, before: { status: 'ACTIVE' }, after: { merchant_id: r.merchantId, status: 'REVOKED' },
    });
  }
};

/** A chargeback recorded: the money that left the merchant's balance, and why. */
export const chargebackAudit = (who: Actor): InTx<ChargebackRecord> => (c, cb) => writeAudit(c, who, {
  action: 'chargeback.create', objectType: 'chargeback', objectId: cb.id, before: null,
  after: { payment_id: cb.paymentId, merchant_id: cb.merchantId, amount: cb.amount.toFixed(2), currency: cb.currency, reason: cb.reason },
});

/**
 * A connector's "test connection" (the provider's harmless read): it changes no stored object,
 * so its entry is written after the call, with what was learnt (never a credential).
 */
export async function testConnection(s: { connectors: Pick<ConnectorRegistry, 'testConnection'>; audit: AuditService }, who: Actor, name: string) {
  const r = await s.connectors.testConnection(name);
  await s.audit.record(who, { action: 'connector.test', objectType: 'connector', objectId: name, before: null, after: { ok: r.ok, message: r.message } });
  return r;
}

/** A go-live rehearsal of a connector started (docs/adr/0104-connector-rehearsals.md). */
export const rehearsalAudit = (who: Actor): InTx<RehearsalStart> => (c, r) => writeAudit(c, who, {
  action: 'connector.rehearse', objectType: 'connector', objectId: r.connector, before: null,
  after: { rehearsal_id: r.id, shop_id: r.shopId, public_url: r.publicUrl },
});
