import { createHash, timingSafeEqual } from 'node:crypto';
import type { BlockList } from 'node:net';
import { Decimal } from 'decimal.js';
import type { InboundNotification, ParsedNotification } from '../../connector.js';
import { ipAllowed } from '../../provider-http.js';
import { paymentOutcome, REFUND_DONE, REFUND_RUNNING, refundOutcome, refundRef, type TbAnswer } from './mapping.js';

/**
 * The `Token` of a request or a notification (developer.tbank.ru/eacq/intro/developer/token):
 * the values of the ROOT scalar fields plus `Password`, sorted by key, concatenated, SHA-256 as
 * lower-case hex. Nested objects and arrays (DATA, Receipt, Shops) and Token itself are left out.
 */
export function tbankToken(params: Record<string, unknown>, password: string): string {
  const pairs: [string, string][] = Object.entries(params)
    .filter(([k, v]) => k !== 'Token' && v !== undefined && v !== null && typeof v !== 'object')
    .map(([k, v]) => [k, String(v)]);
  pairs.push(['Password', password]);
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(pairs.map(([, v]) => v).join(''), 'utf8').digest('hex');
}

/**
 * A notification is believed when its Token, recomputed over every root scalar field received
 * with this terminal's password, matches (constant time), and it names this terminal. Dedupe:
 * PaymentId and Status (and, for refunds, what GetState says is left, so two partial refunds
 * differ). Answered `OK`.
 */
export async function parseTBankNotification(
  n: InboundNotification, d: { allowList: BlockList | null; password: string; terminalKey: string; readState?: (paymentId: string) => Promise<TbAnswer> },
): Promise<ParsedNotification> {
  if (d.allowList && !ipAllowed(d.allowList, n.ip)) return { ok: false, reason: `source ${n.ip} is not in allowed_ips` };
  const b = n.body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object' || Array.isArray(b)) return { ok: false, reason: 'not a T-Bank notification' };
  const expected = Buffer.from(tbankToken(b, d.password));
  const got = Buffer.from(typeof b.Token === 'string' ? b.Token.toLowerCase() : '');
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return { ok: false, reason: 'wrong Token' };
  if (b.TerminalKey !== d.terminalKey) return { ok: false, reason: 'another terminal' };
  const status = typeof b.Status === 'string' ? b.Status : '';
  const id = b.PaymentId;
  if (status === 'RECEIPT') return registerReport(b);
  if (status === '' || (typeof id !== 'string' && typeof id !== 'number') || typeof b.Amount !== 'number') return { ok: false, reason: 'no PaymentId, Status or Amount' };
  const ref = String(id);
  const reply = { status: 200, body: 'OK' };
  if (REFUND_DONE.has(status) || REFUND_RUNNING.has(status)) {
    // What `Amount` means in a refund's notification is not documented (the refund, or what is
    // left): it is not used. Only PaymentId and Status are; the status and what is left come from
    // GetState, read with our credentials. The refund itself: by our id when T-Bank echoes
    // Cancel's ExternalRequestId, else by the payment and what is left of it, which is what that
    // refund's Cancel answered as NewAmount. Never by the payment alone: two partial refunds of
    // it may be in flight.
    const own = typeof b.ExternalRequestId === 'string' && b.ExternalRequestId !== '' ? b.ExternalRequestId : null;
    const st = d.readState ? await d.readState(ref) : null;
    const now = typeof st?.Status === 'string' && st.Status !== '' ? st.Status : status;
    const left = st ? st.Amount : b.Amount;
    const rref = refundRef(ref, left);
    return { ok: true, eventKey: `${ref}:${now}:${String(left)}`, object: 'refund', ref: rref, ourId: own, outcome: refundOutcome(rref, now), reply };
  }
  const paid = paymentOutcome(ref, status, b.Amount, typeof b.ErrorCode === 'string' ? b.ErrorCode : '0', typeof b.Message === 'string' ? b.Message : undefined);
  // A parent payment's card saved (developer.tbank.ru/eacq/api/charge: RebillId in its notification), with Pan and ExpDate (MMYY).
  const rebill = typeof b.RebillId === 'string' || typeof b.RebillId === 'number' ? String(b.RebillId) : '';
  const outcome = (paid.status === 'paid' || paid.status === 'pending') && rebill !== '' ? {
    ...paid, saved: {
      providerId: rebill,
      mask: typeof b.Pan === 'string' && /^\d{6}\*{2,9}\d{4}$/.test(b.Pan) ? b.Pan : null,
      expiry: typeof b.ExpDate === 'string' && /^(0[1-9]|1[0-2])\d{2}$/.test(b.ExpDate) ? `${b.ExpDate.slice(0, 2)}/${b.ExpDate.slice(2)}` : null,
    },
  } : paid;
  return { ok: true, eventKey: `${ref}:${status}`, object: 'payment', ref, ourId: typeof b.OrderId === 'string' ? b.OrderId : null, outcome, reply };
}

/**
 * A fiscalization notification (the specification's NotificationFiscalization: `Status`
 * "RECEIPT", `PaymentId`, `OrderId`, `Amount` in kopecks, `Type` "Income" for a payment's
 * receipt or "IncomeReturn" for a refund's, `ErrorCode` "0" on success, else the register's
 * `ErrorMessage`). Token-checked like any notification (the caller did); acknowledged `OK`
 * whatever it says. Dedupe: the payment, the receipt's type and amount, and the result.
 */
function registerReport(b: Record<string, unknown>): ParsedNotification {
  const id = b.PaymentId;
  if (typeof id !== 'string' && typeof id !== 'number') return { ok: false, reason: 'RECEIPT without PaymentId' };
  const ref = String(id);
  const code = typeof b.ErrorCode === 'string' || typeof b.ErrorCode === 'number' ? String(b.ErrorCode) : '0';
  const of = b.Type === 'IncomeReturn' ? 'refund' : 'payment';
  const kopecks = typeof b.Amount === 'number' && Number.isSafeInteger(b.Amount) && b.Amount > 0 ? b.Amount : null;
  const said = [b.ErrorMessage, b.Message].find((x): x is string => typeof x === 'string' && x !== '') ?? '';
  const doc = typeof b.FiscalDocumentNumber === 'number' || typeof b.FiscalDocumentNumber === 'string' ? String(b.FiscalDocumentNumber) : '';
  return {
    ok: true, eventKey: `${ref}:RECEIPT:${of}:${String(kopecks)}:${code}:${doc}`, object: 'receipt', ref,
    ourId: typeof b.OrderId === 'string' && b.OrderId !== '' ? b.OrderId : null,
    receipt: { of, amount: kopecks === null ? null : new Decimal(kopecks).div(100), failed: code !== '0', code, message: said },
    reply: { status: 200, body: 'OK' },
  };
}
