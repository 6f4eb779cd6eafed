import { Decimal } from 'decimal.js';
import type { PayerAction } from '../providers/connector.js';
import { TBANK_BASE_URL, tbankToken } from '../providers/connectors/tbank/index.js';
import { providerFetch, type ProviderNet } from '../providers/provider-http.js';
import type { RehearsalFindings } from '../providers/rehearsal-findings.js';
import { settingText } from '../providers/plugin.js';
import type { PayerBrowser } from './payer-page.js';

/** What the provider's own state says of a payment, read as its API answers (raw kept for the report). */
export interface ProviderState { status: string; amount: Decimal | null; refunded: Decimal | null; raw: unknown }

/** The connector's row as the rehearsal reads it (plain settings and decrypted secrets). */
export interface RehearsedRow { settings: Record<string, unknown>; secrets: Record<string, unknown>; net: ProviderNet }

/**
 * What a rehearsal needs to know of a provider beyond the Connector interface: its published
 * test instruments (a test card for its page, its SBP test call) and a raw read of a payment's
 * state, so the report says what the provider itself says after each step.
 */
export interface RehearsalProvider {
  /** The API's base URL the connector talks to (its setting, else the kind's default). */
  baseUrl(row: RehearsedRow): string;
  /** A card the provider publishes for its test shops/terminals that pays (through 3-D Secure when asked). */
  testCard: string;
  readState(row: RehearsedRow, ref: string, signal: AbortSignal): Promise<ProviderState>;
  /** The payer pays an SBP payment with the provider's test instrument. */
  payBySbp(row: RehearsedRow, ref: string, action: PayerAction, payer: PayerBrowser, signal: AbortSignal): Promise<unknown>;
  /** How to read GetState-like amounts after a refund, for the report. */
  stateAmountName: string;
  /** The questions its documents leave open that a run answers (RehearsalFindings' keys), in the report's order. */
  questions: readonly (keyof RehearsalFindings)[];
  /**
   * Where a test payout goes, among what the connector takes (`cardNumber`: full card numbers;
   * `sbp`: SBP by phone); null when it takes none of the provider's test destinations. Absent: the
   * provider makes no payouts.
   */
  payoutDestination?(row: RehearsedRow, takes: { cardNumber: boolean; sbp: boolean }, signal: AbortSignal): Promise<PayoutDestination | null>;
}

/** A test payout's destination: `account` as CreatePayout takes it, `label` as the report says it. */
export interface PayoutDestination { type: 'CARD' | 'SBP'; account: string; bankMemberId: string | null; label: string }

const kopecks = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? new Decimal(v).div(100) : null);

async function tbankCall(row: RehearsedRow, method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
  const password = settingText(row.secrets.password) ?? '';
  const body = { TerminalKey: settingText(row.settings.terminal_key) ?? '', ...params };
  const a = await providerFetch('tbank', `${tbank.baseUrl(row)}/${method}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, Token: tbankToken(body, password) }),
  }, signal, row.net);
  return (a.body ?? { http: a.status, text: a.text.slice(0, 500) }) as Record<string, unknown>;
}

/** T-Bank internet acquiring API v2. */
export const tbank: RehearsalProvider = {
  baseUrl: (row) => (settingText(row.settings.base_url) ?? TBANK_BASE_URL).replace(/\/+$/, ''),
  // T-Bank's test card without 3-D Secure, as its SDK examples quote it (tinkoff acquiring SDK examples).
  testCard: '4300000000000777',
  // developer.tbank.ru/eacq/api/get-state: Status and Amount (kopecks) of the payment.
  async readState(row, ref, signal) {
    const b = await tbankCall(row, 'GetState', { PaymentId: ref }, signal);
    return { status: String(b.Status ?? b.ErrorCode ?? 'unknown'), amount: kopecks(b.Amount), refunded: null, raw: b };
  },
  // developer.tbank.ru/eacq/api/sbp-pay-test: a test terminal's SBP payment paid (after GetQr) without a bank app.
  async payBySbp(row, ref, _action, _payer, signal) {
    const b = await tbankCall(row, 'SbpPayTest', { PaymentId: ref }, signal);
    if (b.Success !== true) throw new Error(`SbpPayTest refused: ${String(b.ErrorCode)} ${String(b.Message ?? '')} ${String(b.Details ?? '')}`.trim());
    return b;
  },
  stateAmountName: 'GetState Amount',
  // GetState's Amount: "Сумма в копейках", nothing said of refunds (docs/adr/0091); Charge: off unless T-Bank enabled it.
  questions: ['getstate_amount_after_refund', 'charge_enabled'],
};

/** The card yoomoney/yookassa-sdk-python's payout CreditCard model gives as its example. */
const YOOKASSA_TEST_PAYOUT_CARD = '5555555555554477';
const YOOKASSA_TEST_PAYOUT_PHONE = '+79000000001';

/** YooKassa API v3. */
export const yookassa: RehearsalProvider = {
  baseUrl: (row) => (settingText(row.settings.base_url) ?? 'https://api.yookassa.ru/v3').replace(/\/+$/, ''),
  // yookassa.ru/developers/payment-acceptance/testing-and-going-live/testing: Mastercard 5555 5555 5555 4477, paid after 3-D Secure.
  testCard: '5555555555554477',
  // GET /payments/{id}: status, amount and refunded_amount.
  async readState(row, ref, signal) {
    const auth = Buffer.from(`${settingText(row.settings.shop_id) ?? ''}:${settingText(row.secrets.secret_key) ?? ''}`).toString('base64');
    const a = await providerFetch('yookassa', `${yookassa.baseUrl(row)}/payments/${encodeURIComponent(ref)}`, { method: 'GET', headers: { authorization: `Basic ${auth}` } }, signal, row.net);
    const b = (a.body ?? {}) as { status?: string; amount?: { value?: string }; refunded_amount?: { value?: string } };
    return {
      status: b.status ?? `HTTP ${a.status}`, amount: b.amount?.value ? new Decimal(b.amount.value) : null,
      refunded: b.refunded_amount?.value ? new Decimal(b.refunded_amount.value) : new Decimal(0), raw: a.body ?? a.text.slice(0, 500),
    };
  },
  // The payer confirms on YooKassa's page (the test shop's SBP page stands in for the bank app).
  async payBySbp(_row, _ref, action, payer) {
    if (action.type !== 'redirect' && action.type !== '3ds') throw new Error(`YooKassa answered a ${action.type} action for SBP, not its page`);
    return payer.confirmSbp(action.url);
  },
  stateAmountName: 'amount / refunded_amount',
  // Autopayments by a saved card are enabled by YooKassa's manager for a real shop.
  questions: ['charge_enabled'],
  // yookassa.ru/developers/payouts/testing-and-going-live/testing/bank-card: with a test gateway
  // that takes card numbers any number does (no money moves); the SDK's example card is used. A
  // gateway on the payout widget's tokens alone pays out by SBP here: the phone any test one, the
  // bank the first SBP participant YooKassa lists (GET /sbp_banks with the gateway's pair).
  async payoutDestination(row, takes, signal) {
    if (takes.cardNumber) return { type: 'CARD', account: YOOKASSA_TEST_PAYOUT_CARD, bankMemberId: null, label: `the test card ${YOOKASSA_TEST_PAYOUT_CARD.slice(0, 6)}******${YOOKASSA_TEST_PAYOUT_CARD.slice(-4)}` };
    if (!takes.sbp) return null;
    const auth = Buffer.from(`${settingText(row.settings.payout_agent_id) ?? ''}:${settingText(row.secrets.payout_secret_key) ?? ''}`).toString('base64');
    const a = await providerFetch('yookassa', `${yookassa.baseUrl(row)}/sbp_banks`, { method: 'GET', headers: { authorization: `Basic ${auth}` } }, signal, row.net);
    const bank = ((a.body ?? {}) as { items?: { bank_id?: unknown; name?: unknown }[] }).items?.find((b) => typeof b.bank_id === 'string');
    if (a.status !== 200 || !bank) throw new Error(`GET /sbp_banks answered HTTP ${a.status}${bank ? '' : ' with no SBP participant'}`);
    return { type: 'SBP', account: YOOKASSA_TEST_PAYOUT_PHONE, bankMemberId: String(bank.bank_id), label: `SBP ${YOOKASSA_TEST_PAYOUT_PHONE} at ${String(bank.name ?? bank.bank_id)}` };
  },
};

export const REHEARSAL_PROVIDERS: Readonly<Record<string, RehearsalProvider>> = { tbank, yookassa };
