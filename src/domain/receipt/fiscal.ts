import { ValidationError } from '../../errors.js';
import { fiscalWord } from './fiscal-words.js';

/**
 * A shop's 54-FZ settings, in YooKassa's vocabulary (numbers for the tax system and the VAT rate,
 * names for the payment subject and mode); the T-Bank connector maps them to its own names.
 * Every value is accepted only when BOTH providers document it, so a shop's receipts go through
 * whichever connector its merchant's routing picks (the table with sources and dates:
 * docs/connectors/fiscal.md, checked 2026-11-28):
 * - tax_system_code 1, 2, 3, 5, 6: yookassa.ru/developers/payment-acceptance/receipts/54fz/parameters-values
 *   ("Tax systems codes"); T-Bank `Taxation` osn, usn_income, usn_income_outcome, esn, patent
 *   (kravetsone/t-kassa-api modern-openapi.json, Receipt_FFD_105/Receipt_FFD_12.Taxation). 4 (ENVD)
 *   is refused: the tax was abolished in 2021 and T-Bank's specification no longer lists `envd`.
 * - vat_code 1..12: YooKassa's list (7..10 the 5 % and 7 % rates of 2025, 11 and 12 the 22 % and
 *   22/122 of 1 January 2026); T-Bank's `Tax` has a word for each (tbank/mapping.ts).
 * - payment_subject: YooKassa's `payment_subject` values for FFD 1.05 that T-Bank's
 *   Items_FFD_105.PaymentObject also lists (YooKassa's property_right, non_operating_gain,
 *   insurance_premium, sales_tax, resort_fee have no T-Bank 1.05 name and are refused).
 * - payment_mode: YooKassa's `payment_mode` values; T-Bank's PaymentMethod has the same seven,
 *   with `prepayment` for YooKassa's `partial_prepayment`.
 * - ffd_version "1.05" | "1.2": the format of the shop's cash register (T-Bank `FfdVersion`;
 *   with 1.2 every line carries its unit: T-Bank `MeasurementUnit`, YooKassa `measure`).
 */
export const TAX_SYSTEM_CODES = [1, 2, 3, 5, 6] as const;
/** ENVD: abolished in 2021, gone from T-Bank's `Taxation`; named in its own refusal. */
export const ENVD_TAX_SYSTEM_CODE = 4;
export const VAT_CODES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] as const;
export const FFD_VERSIONS = ['1.05', '1.2'] as const;
export type FfdVersion = (typeof FFD_VERSIONS)[number];
export const PAYMENT_SUBJECTS = [
  'commodity', 'excise', 'job', 'service', 'gambling_bet', 'gambling_prize', 'lottery', 'lottery_prize',
  'intellectual_activity', 'payment', 'agent_commission', 'composite', 'another',
] as const;
export const PAYMENT_MODES = ['full_prepayment', 'partial_prepayment', 'advance', 'full_payment', 'partial_payment', 'credit', 'credit_payment'] as const;

export type PaymentSubject = (typeof PAYMENT_SUBJECTS)[number];
export type PaymentMode = (typeof PAYMENT_MODES)[number];

export interface FiscalSettings {
  enabled: boolean;
  /** Null only while disabled (a provider needs it: T-Bank's `Taxation` is required). */
  taxSystemCode: number | null;
  /** Null only while disabled. */
  vatCode: number | null;
  paymentSubject: PaymentSubject;
  paymentMode: PaymentMode;
  ffdVersion: FfdVersion;
}

/** Settings a receipt can be built from. */
export type ActiveFiscal = FiscalSettings & { enabled: true; taxSystemCode: number; vatCode: number };

/**
 * Both providers' defaults when a line names none (T-Bank Items_FFD_105: PaymentMethod
 * full_payment, PaymentObject commodity); YooKassa requires both, so they are always sent.
 */
const DEFAULTS: FiscalSettings = { enabled: false, taxSystemCode: null, vatCode: null, paymentSubject: 'commodity', paymentMode: 'full_payment', ffdVersion: '1.05' };

const MESSAGES = {
  enabled: 'The enabled field must be true or false.',
  tax_system_code: `The tax system code must be one of ${TAX_SYSTEM_CODES.join(', ')}.`,
  envd: 'The tax system code 4 (ENVD, imputed income tax) was abolished in 2021 and the providers no longer accept it; choose one of '
    + `${TAX_SYSTEM_CODES.join(', ')}.`,
  ffd_version: `The ffd version must be one of ${FFD_VERSIONS.join(', ')}.`,
  vat_code: `The vat code must be one of ${VAT_CODES.join(', ')}.`,
  payment_subject: `The payment subject must be one of ${PAYMENT_SUBJECTS.join(', ')}.`,
  payment_mode: `The payment mode must be one of ${PAYMENT_MODES.join(', ')}.`,
  requiredWhenEnabled: (f: string) => `The ${f.replace(/_/g, ' ')} field is required when fiscalization is enabled.`,
};

const TRUE = new Set<unknown>([true, 1, '1', 'true', 'on']);
const FALSE = new Set<unknown>([false, 0, '0', 'false', 'off', '']);

function code(raw: unknown, allowed: readonly number[]): number | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === null || raw === '') return null;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,2}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  return allowed.includes(n) ? n : NaN;
}

/** The stored settings (the column's JSON), or null when the shop never had any. */
export function fiscalOf(stored: unknown): FiscalSettings | null {
  if (!stored || typeof stored !== 'object' || Array.isArray(stored)) return null;
  const o = stored as Record<string, unknown>;
  return {
    enabled: o.enabled === true,
    taxSystemCode: typeof o.tax_system_code === 'number' ? o.tax_system_code : null,
    vatCode: typeof o.vat_code === 'number' ? o.vat_code : null,
    paymentSubject: (PAYMENT_SUBJECTS as readonly string[]).includes(o.payment_subject as string) ? o.payment_subject as PaymentSubject : DEFAULTS.paymentSubject,
    paymentMode: (PAYMENT_MODES as readonly string[]).includes(o.payment_mode as string) ? o.payment_mode as PaymentMode : DEFAULTS.paymentMode,
    ffdVersion: (FFD_VERSIONS as readonly string[]).includes(o.ffd_version as string) ? o.ffd_version as FfdVersion : DEFAULTS.ffdVersion,
  };
}

/** Settings that make receipts: enabled, with a tax system and a VAT rate. */
export function activeFiscal(f: FiscalSettings | null): ActiveFiscal | null {
  return f && f.enabled && f.taxSystemCode !== null && f.vatCode !== null ? f as ActiveFiscal : null;
}

/** The stored column's shape, as the operator API and the audit trail show it. */
export type FiscalJson = {
  enabled: boolean; tax_system_code: number | null; vat_code: number | null; payment_subject: string; payment_mode: string; ffd_version: FfdVersion;
};

/** As stored and shown (operator API, audit): snake_case, the stored column's shape. */
export function fiscalJson(f: FiscalSettings | null): FiscalJson | null {
  return f && {
    enabled: f.enabled, tax_system_code: f.taxSystemCode, vat_code: f.vatCode, payment_subject: f.paymentSubject, payment_mode: f.paymentMode,
    ffd_version: f.ffdVersion,
  };
}

/**
 * A change of the settings (operator API `fiscalization` object, the cabinet's form) applied on
 * what is stored: fields not sent keep their value, so `{"enabled": false}` switches receipts off
 * and keeps the rest. Enabled settings need a tax system and a VAT rate. Every bad field is
 * reported at once, as `<prefix><field>` (422).
 */
export function parseFiscalization(raw: unknown, current: FiscalSettings | null, prefix = 'fiscalization.'): FiscalSettings {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError({ [prefix.replace(/\.$/, '') || 'fiscalization']: ['The fiscalization must be an object.'] });
  }
  const o = raw as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const out: FiscalSettings = { ...(current ?? DEFAULTS) };
  if (o.enabled !== undefined && o.enabled !== null) {
    if (TRUE.has(o.enabled)) out.enabled = true;
    else if (FALSE.has(o.enabled)) out.enabled = false;
    else errors[`${prefix}enabled`] = [MESSAGES.enabled];
  }
  const tax = code(o.tax_system_code, TAX_SYSTEM_CODES);
  if (Number.isNaN(tax)) {
    errors[`${prefix}tax_system_code`] = [code(o.tax_system_code, [ENVD_TAX_SYSTEM_CODE]) === ENVD_TAX_SYSTEM_CODE ? MESSAGES.envd : MESSAGES.tax_system_code];
  }
  else if (tax !== undefined) out.taxSystemCode = tax;
  const vat = code(o.vat_code, VAT_CODES);
  if (Number.isNaN(vat)) errors[`${prefix}vat_code`] = [MESSAGES.vat_code];
  else if (vat !== undefined) out.vatCode = vat;
  const ffd = o.ffd_version;
  if (ffd !== undefined && ffd !== null && ffd !== '') {
    const v = typeof ffd === 'number' || typeof ffd === 'string' ? String(ffd).trim() : '';
    if ((FFD_VERSIONS as readonly string[]).includes(v)) out.ffdVersion = v as FfdVersion;
    else errors[`${prefix}ffd_version`] = [MESSAGES.ffd_version];
  }
  for (const [field, list, key] of [['payment_subject', PAYMENT_SUBJECTS, 'paymentSubject'], ['payment_mode', PAYMENT_MODES, 'paymentMode']] as const) {
    const v = o[field];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v === 'string' && (list as readonly string[]).includes(v.trim().toLowerCase())) (out as unknown as Record<string, string>)[key] = v.trim().toLowerCase();
    else errors[`${prefix}${field}`] = [MESSAGES[field]];
  }
  // FFD 1.2's list of payment subjects has no `composite` (T-Bank Items_FFD_12.PaymentObject).
  if (out.ffdVersion === '1.2' && out.paymentSubject === 'composite' && !errors[`${prefix}payment_subject`]) {
    errors[`${prefix}payment_subject`] = ['The payment subject composite does not exist in FFD 1.2; choose another one.'];
  }
  // A stored ENVD (accepted before it was refused) is never enabled again: the shop chooses its system now.
  if (out.enabled && out.taxSystemCode === ENVD_TAX_SYSTEM_CODE && !errors[`${prefix}tax_system_code`]) errors[`${prefix}tax_system_code`] = [MESSAGES.envd];
  if (out.enabled && Object.keys(errors).length === 0) {
    if (out.taxSystemCode === null) errors[`${prefix}tax_system_code`] = [MESSAGES.requiredWhenEnabled('tax_system_code')];
    if (out.vatCode === null) errors[`${prefix}vat_code`] = [MESSAGES.requiredWhenEnabled('vat_code')];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return out;
}

/** A shop's receipts in a line of words: "off", or "on: General (OSN), VAT 22%, FFD 1.05" (fiscal-words.ts). */
export function fiscalSummary(stored: unknown): string {
  const f = fiscalOf(stored);
  if (!f || !f.enabled) return 'off';
  const tax = f.taxSystemCode === null ? 'no tax system' : fiscalWord('en', 'tax', f.taxSystemCode);
  const vat = f.vatCode === null ? 'no VAT rate' : fiscalWord('en', 'vat', f.vatCode);
  return `on: ${tax}, ${vat}, FFD ${f.ffdVersion}`;
}
