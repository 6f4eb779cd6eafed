import { Decimal } from 'decimal.js';
import type { MerchantPatch } from './merchant.service.js';
import { ROUTES } from '../providers/connector.js';
import { CONNECTOR_NAME } from '../providers/registry.js';
import { boolField, decimalField, enumField, Errors, objectField, type DecimalRule } from '../../lib/input-fields.js';
import { MAX_ALLOWLIST, normaliseEntry } from './ip-allowlist.js';

/** Defaults the operator API documents (DESIGN.md): null on a payout maximum restores them. */
export const DEFAULT_PAYOUT_MAX_CARD = new Decimal('150000');
export const DEFAULT_PAYOUT_MAX_SBP = new Decimal('1000000');

// Column ranges: limits numeric(20,8), percents numeric(7,4), fixed fees numeric(10,2).
const LIMIT: DecimalRule = { min: 0, max: '999999999999.99999999', places: 8 };
const PAYOUT_MAX: DecimalRule = { min: 0, exclusive: true, max: '999999999999.99999999', places: 8 };
const PERCENT: DecimalRule = { min: 0, max: 100, places: 4 };
const FIXED: DecimalRule = { min: 0, max: '99999999.99', places: 2 };

const LIMITS = [
  ['payout_daily_limit', 'payoutDailyLimit'],
  ['payout_monthly_limit', 'payoutMonthlyLimit'],
  ['moderation_threshold', 'moderationThreshold'],
] as const;

const MAXES = [
  ['payout_max_card', 'payoutMaxCard', DEFAULT_PAYOUT_MAX_CARD],
  ['payout_max_sbp', 'payoutMaxSbp', DEFAULT_PAYOUT_MAX_SBP],
] as const;

const FEES = [
  ['payment_card_percent', 'paymentCardPercent', PERCENT], ['payment_card_fixed', 'paymentCardFixed', FIXED],
  ['payment_sbp_percent', 'paymentSbpPercent', PERCENT], ['payment_sbp_fixed', 'paymentSbpFixed', FIXED],
  ['payout_card_percent', 'payoutCardPercent', PERCENT], ['payout_card_fixed', 'payoutCardFixed', FIXED],
  ['payout_sbp_percent', 'payoutSbpPercent', PERCENT], ['payout_sbp_fixed', 'payoutSbpFixed', FIXED],
] as const;

const has = (o: Record<string, unknown>, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isClear = (x: unknown) => x === null || x === '';
const given = (x: unknown) => x !== undefined && !isClear(x);

/**
 * PATCH /admin/v1/merchants/{id}: only the keys present change. `null` (or "") clears a limit,
 * the moderation threshold or a fee (back to the operator default) and restores a payout
 * maximum to its default; on the other fields null means "not sent". Every bad field is
 * reported at once (nested ones as `fees.x`, `grants.x`) and nothing is written.
 */
export function parseMerchantPatch(body: Record<string, unknown>): MerchantPatch {
  const errors = new Errors();
  const patch: MerchantPatch = {};
  if (given(body.status)) {
    const s = enumField(errors, 'status', body.status, ['active', 'banned'] as const);
    if (s) patch.status = s === 'active' ? 'ACTIVE' : 'BANNED';
  }
  if (given(body.verified)) {
    const b = boolField(errors, 'verified', body.verified);
    if (b !== undefined) patch.verified = b;
  }
  if (given(body.subscription)) {
    const s = enumField(errors, 'subscription', body.subscription, ['active', 'inactive', 'none'] as const);
    if (s) patch.subscription = s.toUpperCase() as MerchantPatch['subscription'];
  }
  const grants = objectField(errors, 'grants', body.grants);
  if (grants) {
    if (given(grants.refunds)) {
      const b = boolField(errors, 'grants.refunds', grants.refunds);
      if (b !== undefined) patch.grantRefunds = b;
    }
    if (given(grants.regular_payouts)) {
      const b = boolField(errors, 'grants.regular_payouts', grants.regular_payouts);
      if (b !== undefined) patch.grantRegularPayouts = b;
    }
  }
  for (const [field, key] of LIMITS) {
    if (!has(body, field)) continue;
    if (isClear(body[field])) { patch[key] = null; continue; }
    const d = decimalField(errors, field, body[field], LIMIT);
    if (d) patch[key] = d;
  }
  for (const [field, key, dflt] of MAXES) {
    if (!has(body, field)) continue;
    if (isClear(body[field])) { patch[key] = dflt; continue; }
    const d = decimalField(errors, field, body[field], PAYOUT_MAX);
    if (d) patch[key] = d;
  }
  const fees = objectField(errors, 'fees', body.fees);
  if (fees) {
    for (const [field, key, rule] of FEES) {
      if (!has(fees, field)) continue;
      if (isClear(fees[field])) { patch[key] = null; continue; }
      const d = decimalField(errors, `fees.${field}`, fees[field], rule);
      if (d) patch[key] = d;
    }
  }
  if (has(body, 'api_ip_allowlist')) {
    const list = parseAllowlist(errors, 'api_ip_allowlist', body.api_ip_allowlist);
    if (list !== undefined) patch.apiIpAllowlist = list;
  }
  const routing = objectField(errors, 'routing', body.routing);
  if (routing) {
    const r: Record<string, string[]> = {};
    for (const [route, names] of Object.entries(routing)) {
      const field = `routing.${route}`;
      if (!(ROUTES as readonly string[]).includes(route)) { errors.add(field, `Unknown route; routes are ${ROUTES.join(', ')}.`); continue; }
      if (!Array.isArray(names) || names.length === 0 || names.length > 10 || !names.every((n) => typeof n === 'string' && CONNECTOR_NAME.test(n))) {
        errors.add(field, 'Must be a list of 1 to 10 connector names.');
        continue;
      }
      if (new Set(names).size !== names.length) { errors.add(field, 'A connector may appear once.'); continue; }
      r[route] = names as string[];
    }
    patch.routing = r;
  }
  errors.throwIfAny();
  return patch;
}

/**
 * An IP allow-list: an array of addresses or CIDRs (IPv4 or IPv6), or a string of them
 * separated by commas or new lines (the cabinet's textarea); null, "" or [] clears it.
 * Normalised and deduplicated; each bad entry reported as `<field>.<n>`.
 */
export function parseAllowlist(errors: Errors, field: string, raw: unknown): string[] | null | undefined {
  if (raw === null || raw === '') return null;
  const items: unknown[] | null = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(/[\s,]+/).filter(Boolean) : null;
  if (!items) { errors.add(field, `The ${field.replace(/_/g, ' ')} must be a list of IP addresses or CIDR ranges.`); return undefined; }
  if (items.length > MAX_ALLOWLIST) { errors.add(field, `The ${field.replace(/_/g, ' ')} may not have more than ${MAX_ALLOWLIST} entries.`); return undefined; }
  const out: string[] = [];
  items.forEach((item, i) => {
    const n = typeof item === 'string' ? normaliseEntry(item) : null;
    if (n === null) errors.add(`${field}.${i}`, `"${String(item).slice(0, 64)}" is not an IP address or a CIDR range.`);
    else if (!out.includes(n)) out.push(n);
  });
  return out.length > 0 ? out : null;
}
