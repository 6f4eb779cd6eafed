import { Decimal } from 'decimal.js';
import type { Config } from '../config.js';
import { money2, money8 } from '../lib/money.js';
import { formatDateTime } from '../lib/time.js';
import { feeRate, type FeeKind } from './merchant/fees.js';
import { effectiveRouting, type ConnectorHealth, type ConnectorRecord, type Routing } from './providers/registry.js';
import type { Merchant, PayoutAccount, Shop, SbpBank, FxRate } from '../generated/prisma/client.js';
import type { ApiKeyView } from './api-key/api-key.service.js';
import { fiscalJson, fiscalOf } from './receipt/fiscal.js';

type Dec = { toString(): string } | null | undefined;
const d8 = (x: Dec): string | null => (x === null || x === undefined ? null : money8(x.toString()));
const norm = (x: { toString(): string }): string => new Decimal(x.toString()).toFixed();

const FEE_KINDS: FeeKind[] = ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp'];

/*
 * The operator's views of the domain's objects: the operator API's JSON, the console's pages and
 * the audit trail's before/after (src/domain/audit-steps.ts) show the same fields.
 */

/** Operator view of a merchant; never the token hash, ciphertext or password hash. */
export function merchantView(config: Config, m: Merchant) {
  const fees: Record<string, string> = {};
  for (const kind of FEE_KINDS) {
    // Effective values: the merchant's own setting, else the operator's default.
    const { percent, fixed } = feeRate(config, m as never, kind);
    fees[`${kind}_percent`] = percent.toFixed();
    fees[`${kind}_fixed`] = money2(fixed);
  }
  return {
    id: m.id,
    name: m.name,
    email: m.email,
    status: m.status.toLowerCase(),
    verified: m.verified,
    subscription: m.subscription.toLowerCase(),
    grants: { refunds: m.grantRefunds, regular_payouts: m.grantRegularPayouts },
    payout_daily_limit: d8(m.payoutDailyLimit),
    payout_monthly_limit: d8(m.payoutMonthlyLimit),
    moderation_threshold: d8(m.moderationThreshold),
    payout_max_card: d8(m.payoutMaxCard),
    payout_max_sbp: d8(m.payoutMaxSbp),
    fees,
    payout_webhook_url: m.payoutWebhookUrl,
    api_ip_allowlist: (m.apiIpAllowlist as string[] | null) ?? [],
    routing: effectiveRouting((m.routing ?? {}) as Partial<Routing>, m.liveMerchantId === null, config.profile),
    has_password: m.passwordHash !== null,
    api_token_issued_at: formatDateTime(m.apiTokenIssuedAt, config.tz),
    created_at: formatDateTime(m.createdAt, config.tz),
    updated_at: formatDateTime(m.updatedAt, config.tz),
  };
}

export function balanceView(b: { currency: string; available: Dec; locked: Dec; hold: Dec }) {
  return { currency: b.currency, balance_available: d8(b.available), balance_locked: d8(b.locked), balance_hold: d8(b.hold) };
}

export function shopView(config: Config, s: Shop) {
  return {
    id: s.id,
    merchant_id: s.merchantId,
    name: s.name,
    enabled: s.enabled,
    default_currency: s.defaultCurrency,
    result_url: s.resultUrl,
    success_url: s.successUrl,
    fail_url: s.failUrl,
    fiscalization: fiscalJson(fiscalOf(s.fiscalization)) ?? { enabled: false, tax_system_code: null, vat_code: null, payment_subject: 'commodity', payment_mode: 'full_payment', ffd_version: '1.05' },
    created_at: formatDateTime(s.createdAt, config.tz),
    updated_at: formatDateTime(s.updatedAt, config.tz),
  };
}

/** Never the ciphertext: only the masked identifier. */
export function payoutAccountView(config: Config, a: PayoutAccount) {
  return {
    id: a.id,
    merchant_id: a.merchantId,
    type: a.type.toLowerCase(),
    status: a.status.toLowerCase(),
    identifier_masked: a.identifierMasked,
    // A card known by a provider's token: no card number is held for it (docs/adr/0070).
    token_provider: a.tokenProvider,
    card_type: a.cardType,
    card_issuer: a.cardIssuer,
    card_holder: a.cardHolder,
    bank_member_id: a.bankMemberId === null ? null : Number(a.bankMemberId),
    created_at: formatDateTime(a.createdAt, config.tz),
    updated_at: formatDateTime(a.updatedAt, config.tz),
  };
}

export function sbpBankView(b: SbpBank) {
  return { member_id: Number(b.memberId), name: b.name, name_en: b.nameEn, bic: b.bic, active: b.active };
}

export function rateView(config: Config, r: FxRate) {
  return { currency: r.currency, rub_per_unit: norm(r.rubPerUnit), updated_at: formatDateTime(r.updatedAt, config.tz) };
}

/** Operator view of a connector: settings masked, with its health when asked for. */
export function connectorView(config: Config, c: ConnectorRecord, h?: ConnectorHealth) {
  return {
    name: c.name,
    kind: c.kind,
    mode: c.mode,
    enabled: c.enabled,
    settings: c.settings,
    ...(h ? {
      health: {
        last_success_at: h.lastSuccessAt ? formatDateTime(h.lastSuccessAt, config.tz) : null,
        recent_calls: h.recentCalls,
        recent_error_rate: h.recentErrorRate,
        last_error: h.lastError,
      },
      unknown_outcomes: h.unknownOutcomes,
    } : {}),
    created_at: formatDateTime(c.createdAt, config.tz),
    updated_at: formatDateTime(c.updatedAt, config.tz),
  };
}

/** Operator view of a restricted API key: never its token (only the last four characters). */
export function apiKeyView(config: Config, k: ApiKeyView) {
  const at = (d: Date | null) => (d ? formatDateTime(d, config.tz) : null);
  return {
    id: k.id, merchant_id: k.merchant_id, name: k.name, scopes: k.scopes, token_last4: k.token_last4,
    created_by: k.created_by, created_at: at(k.created_at), last_used_at: at(k.last_used_at), revoked_at: at(k.revoked_at),
  };
}
