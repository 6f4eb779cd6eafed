import { Decimal } from 'decimal.js';
import {
  takesCard, type CallContext, type Connector, type ConnectorOperation, type OperationOutcome, type PaymentOutcome, type ProviderData, type SavedCard,
} from '../providers/connector.js';
import type { RehearsalFindings } from '../providers/rehearsal-findings.js';
import type { Receipt } from '../receipt/receipt.js';
import type { PayerBrowser } from './payer-page.js';
import type { RehearsalProvider, RehearsedRow } from './rehearsal.providers.js';
import type { RehearsalStep } from './rehearsal.step.js';
import { checkTransport } from './transport.js';

/** What one run needs: the connector built from its row, its provider's test instruments, and the service's hooks. */
export interface RunDeps {
  connector: Connector;
  row: RehearsedRow;
  provider: RehearsalProvider;
  payer: PayerBrowser;
  /** Prefix of every id this run gives the provider ("rh-<run>-"): never a merchant's object. */
  idPrefix: string;
  returnUrl: string;
  /** Where the provider is told to notify; null: not given, the notification step is skipped. */
  publicUrl: string | null;
  /** The shop's fiscal settings as a receipt of an amount; `why` when none is sent. */
  receipt: { of: (amount: Decimal) => Receipt | null; why: string | null };
  /** One timed call of the connector (the registry's wrapper: timeout, metrics, health). */
  call<T extends { status: string }>(op: ConnectorOperation, fn: (ctx: CallContext) => Promise<T>): Promise<T | { status: 'refused'; code: string; message: string } | { status: 'unknown'; ref: string | null; reason: string }>;
  /** The notice of a provider's notification about our object `id`, within `ms`; null when none came. */
  waitNotice(id: string, ms: number): Promise<{ eventKey: string } | null>;
  /** The card a provider's notification about our payment `id` said it saved, within `ms`; null when none did. */
  waitSaved(id: string, ms: number): Promise<SavedCard | null>;
  /** Records an answer to a question the providers' documents leave open (docs/adr/0135). */
  learn(f: RehearsalFindings): Promise<void>;
  /** Polls `fn` until it answers non-null or `ms` pass. */
  until<T>(fn: () => Promise<T | null>, ms: number): Promise<T | null>;
  waits: { settleMs: number; notificationMs: number };
}

const AMOUNT = new Decimal('100.00');
const PARTIAL = new Decimal('30.00');
const CAPTURE = new Decimal('60.00');
const CHARGE = new Decimal('10.00');
const PAYOUT = new Decimal('10.00');
const describe = (o: { status: string } & Record<string, unknown>) =>
  o.status === 'refused' || o.status === 'declined' || o.status === 'failed' ? `${String(o.code)}: ${String(o.message)}` : o.status === 'unknown' ? `no answer (${String(o.reason)})` : o.status;

type Out = PaymentOutcome | { status: 'refused'; code: string; message: string } | { status: 'unknown'; ref: string | null; reason: string };

/** What an answer gives the connector to keep (docs/adr/0118): its `data` when it carries some, else what was kept. */
const dataOf = (o: Out, kept: ProviderData | null): ProviderData | null => ('data' in o && o.data ? o.data : kept);

/**
 * One rehearsal: the steps in order, each reported as soon as it ends (`report`). Every call is
 * the connector's own, against what it is configured with; the ids are the run's own, and
 * nothing here writes a payment, a refund or a ledger entry (docs/adr/0105).
 */
export async function runRehearsal(d: RunDeps, report: (s: RehearsalStep) => Promise<void>): Promise<void> {
  const c = d.connector;
  const steps: RehearsalStep[] = [];
  const put = async (s: RehearsalStep) => { steps.push(s); await report(s); return s; };
  const skipRest = async (why: string, from: readonly string[]) => { for (const name of from) await put({ name, status: 'skipped', detail: why, raw: null }); };
  const REST = ['payment', 'notification', 'receipt', 'two_stage', 'refund', 'sbp', 'saved_card', 'payout'] as const;

  const t = await put(await checkTransport(d.provider.baseUrl(d.row), d.row.net.allowPrivate));
  if (t.status === 'failed') return skipRest(`not run: the transport step failed (${t.detail})`, ['credentials', ...REST]);

  const cred = await credentials(d);
  await put(cred);
  if (cred.status === 'failed') return skipRest(`not run: the provider refused the credentials (${cred.detail})`, REST);

  // A payment the payer completes on the provider's page.
  const payId = `${d.idPrefix}p1`;
  const receipt = d.receipt.of(AMOUNT);
  const paid = await payOnPage(d, payId, { method: 'card', amount: AMOUNT, receipt });
  const receiptNote = receipt ? 'a receipt with the shop\'s fiscal settings was sent' : `no receipt was sent (${d.receipt.why})`;
  await put({
    name: 'payment', status: paid.ok ? 'passed' : 'failed',
    detail: paid.ok ? `${AMOUNT.toFixed(2)} paid on the provider's page with its test card (${receiptNote})` : `${paid.detail}; ${receiptNote}`,
    raw: paid.raw,
  });

  if (!d.publicUrl) await put({ name: 'notification', status: 'skipped', detail: 'no public_url given: the provider cannot be told where this deployment is reachable', raw: null });
  else if (!paid.ok) await put({ name: 'notification', status: 'skipped', detail: 'not run: no payment was made (the payment step failed)', raw: null });
  else {
    const url = `${d.publicUrl}/providers/${c.name}/notifications`;
    const n = await d.waitNotice(payId, d.waits.notificationMs);
    await put(n
      ? { name: 'notification', status: 'passed', detail: `the provider's notification about the payment reached ${url} and was verified (${n.eventKey})`, raw: n }
      : { name: 'notification', status: 'failed', detail: `no verified notification about the payment reached ${url} within ${d.waits.notificationMs / 1000} s`, raw: null });
  }

  if (!receipt) await put({ name: 'receipt', status: 'skipped', detail: `no receipt sent: ${d.receipt.why}`, raw: null });
  else await put({ name: 'receipt', status: paid.ok ? 'passed' : 'failed', detail: paid.ok ? `the provider took the payment with the receipt (${receipt.lines.length} line(s), tax system ${receipt.taxSystemCode})` : `the payment carrying the receipt was refused: ${paid.detail}`, raw: null });

  await put(await twoStage(d));
  await put(paid.ok && paid.ref ? await refunds(d, payId, paid.ref) : { name: 'refund', status: 'skipped', detail: 'not run: no paid payment to refund (the payment step failed)', raw: null });
  await put(await sbp(d));
  await put(await savedCard(d));
  await put(await payout(d));
}

async function credentials(d: RunDeps): Promise<RehearsalStep> {
  const c = d.connector;
  if (!c.checkConnection) return { name: 'credentials', status: 'skipped', detail: `connectors of kind ${c.kind} have no harmless read`, raw: null };
  const check = c.checkConnection.bind(c);
  const r = await d.call('get_payment', async (ctx) => ({ status: 'ok', check: await check(ctx) }));
  if (r.status !== 'ok') return { name: 'credentials', status: 'failed', detail: describe(r as never), raw: r };
  const { check: k } = r as { check: { ok: boolean; message: string } };
  return { name: 'credentials', status: k.ok ? 'passed' : 'failed', detail: k.message, raw: k };
}

/**
 * Creates a payment, has the payer complete it on the provider's page, and reads it until it
 * settles; `data`, what the connector's answers kept (docs/adr/0118), handed back to each read
 * as the lifecycle hands it back, and answered for the calls after.
 */
async function payOnPage(
  d: RunDeps, paymentId: string, req: { method: 'card' | 'sbp'; amount: Decimal; receipt?: Receipt | null; capture?: boolean; save?: boolean },
): Promise<{ ok: boolean; detail: string; ref: string | null; outcome: Out | null; raw: unknown; data: ProviderData | null }> {
  const c = d.connector;
  const created = await d.call('create_payment', (ctx) => c.createPayment({
    paymentId, method: req.method, amount: req.amount, description: `Rehearsal ${paymentId}`, returnUrl: d.returnUrl,
    ...(req.receipt ? { receipt: req.receipt } : {}), ...(req.capture === false ? { capture: false } : {}), ...(req.save ? { savePaymentMethod: true } : {}),
  }, ctx));
  const raw: Record<string, unknown> = { created };
  let data = dataOf(created, null);
  if (created.status !== 'action' && created.status !== 'pending') {
    return { ok: created.status === 'paid', detail: `created: ${describe(created as never)}`, ref: 'ref' in created ? created.ref : null, outcome: created, raw, data };
  }
  const ref = created.ref;
  if (created.status === 'action') {
    try {
      raw.payer = req.method === 'sbp'
        ? await d.provider.payBySbp(d.row, ref, created.action, d.payer, AbortSignal.timeout(30_000))
        : created.action.type === 'sbp_qr' ? null : await d.payer.payByCard(created.action.url, d.provider.testCard);
    } catch (e) {
      return { ok: false, detail: `the payer could not complete the provider's page: ${(e as Error).message}`, ref, outcome: created, raw, data };
    }
  }
  const want = req.capture === false ? 'authorized' : 'paid';
  let last: Out = created;
  const settled = await d.until(async () => {
    last = await d.call('get_payment', (ctx) => c.getPayment({ paymentId, ref, data }, ctx));
    data = dataOf(last, data);
    return last.status === want || last.status === 'declined' ? last : null;
  }, d.waits.settleMs);
  raw.read = last;
  if (!settled) return { ok: false, detail: `the payment did not settle within ${d.waits.settleMs / 1000} s (last read: ${describe(last as never)})`, ref, outcome: last, raw, data };
  return { ok: settled.status === want, detail: describe(settled as never), ref, outcome: settled, raw, data };
}

async function twoStage(d: RunDeps): Promise<RehearsalStep> {
  const c = d.connector;
  if (!c.capabilities.twoStage || !c.capturePayment || !c.cancelPayment) return { name: 'two_stage', status: 'skipped', detail: `the connector's kind (${c.kind}) takes no two-stage payments`, raw: null };
  const capture = c.capturePayment.bind(c);
  const cancel = c.cancelPayment.bind(c);
  const h1 = `${d.idPrefix}h1`;
  const held = await payOnPage(d, h1, { method: 'card', amount: AMOUNT, capture: false });
  if (!held.ok) return { name: 'two_stage', status: 'failed', detail: `hold: ${held.detail}`, raw: held.raw };
  const receipt = d.receipt.of(CAPTURE) ?? undefined;
  const cap = await d.call('capture_payment', (ctx) => capture({ paymentId: h1, ref: held.ref, amount: CAPTURE, held: AMOUNT, receipt, data: held.data }, ctx));
  const capState = await d.provider.readState(d.row, held.ref!, AbortSignal.timeout(15_000)).catch((e: Error) => ({ error: e.message }));
  if (cap.status !== 'paid' || !cap.amountReceived.eq(CAPTURE)) return { name: 'two_stage', status: 'failed', detail: `partial capture of ${CAPTURE.toFixed(2)}: ${describe(cap as never)}`, raw: { hold: held.raw, capture: cap, state: capState } };
  const h2 = `${d.idPrefix}h2`;
  const held2 = await payOnPage(d, h2, { method: 'card', amount: AMOUNT, capture: false });
  if (!held2.ok) return { name: 'two_stage', status: 'failed', detail: `second hold: ${held2.detail}`, raw: held2.raw };
  const can = await d.call('cancel_payment', (ctx) => cancel({ paymentId: h2, ref: held2.ref, amount: AMOUNT, data: held2.data }, ctx));
  const raw = { hold: held.raw, capture: cap, captured_state: capState, second_hold: held2.raw, cancel: can };
  if (can.status !== 'declined') return { name: 'two_stage', status: 'failed', detail: `cancel of a hold: ${describe(can as never)}`, raw };
  return { name: 'two_stage', status: 'passed', detail: `held ${AMOUNT.toFixed(2)}, captured ${CAPTURE.toFixed(2)} of it; a second hold of ${AMOUNT.toFixed(2)} cancelled (${can.code})`, raw };
}

/** A partial and then a full refund of the paid payment, with what the provider's state says after each. */
async function refunds(d: RunDeps, paymentId: string, ref: string): Promise<RehearsalStep> {
  const c = d.connector;
  if (!c.capabilities.refunds) return { name: 'refund', status: 'skipped', detail: `the connector's kind (${c.kind}) makes no refunds`, raw: null };
  const parts = c.capabilities.partialRefunds ? [PARTIAL, AMOUNT.sub(PARTIAL)] : [AMOUNT];
  const raw: unknown[] = [];
  const said: string[] = [];
  const readings: string[] = [];
  let refunded = new Decimal(0);
  for (const [i, amount] of parts.entries()) {
    const refundId = `${d.idPrefix}r${i + 1}`;
    let o: OperationOutcome = await d.call('refund', (ctx) => c.refund({
      refundId, paymentId, paymentRef: ref, amount, currency: 'RUB', amountRub: amount, fromCard: null, receipt: d.receipt.of(amount) ?? undefined,
    }, ctx));
    if (o.status === 'pending') {
      const pendingRef = o.ref;
      o = (await d.until(async () => {
        const r = await d.call('get_refund', (ctx) => c.getRefund({ refundId, ref: pendingRef }, ctx));
        return r.status === 'succeeded' || r.status === 'failed' ? r : null;
      }, d.waits.settleMs)) ?? o;
    }
    const state = await d.provider.readState(d.row, ref, AbortSignal.timeout(15_000)).catch((e: Error) => ({ status: 'unread', amount: null, refunded: null, raw: e.message }));
    raw.push({ refund: amount.toFixed(2), outcome: o, state: state.raw });
    if (o.status !== 'succeeded') return { name: 'refund', status: 'failed', detail: `${said.join('; ')}${said.length ? '; ' : ''}refund of ${amount.toFixed(2)}: ${describe(o as never)}`, raw };
    refunded = refunded.add(amount);
    readings.push(reading(state, AMOUNT, refunded));
    said.push(`${i === parts.length - 1 ? 'full' : 'partial'} refund of ${amount.toFixed(2)} succeeded; provider says ${state.status}, ${d.provider.stateAmountName} ${meaning(state, AMOUNT, refunded)}`);
  }
  // Every read after a refund agreeing on one meaning answers the question; mixed readings leave it open.
  const agreed = readings.every((x) => x === readings[0]) ? readings[0] : undefined;
  if (agreed === 'left' || agreed === 'paid') await d.learn({ getstate_amount_after_refund: agreed });
  return { name: 'refund', status: 'passed', detail: said.join('; '), raw };
}

/** What an amount-only state (T-Bank GetState) says after refunds: `left`, `paid`, or nothing decidable. */
function reading(s: { amount: Decimal | null; refunded: Decimal | null }, original: Decimal, refunded: Decimal): string {
  if (s.refunded !== null || s.amount === null) return 'none';
  if (s.amount.eq(original)) return 'paid';
  return s.amount.eq(original.sub(refunded)) ? 'left' : 'neither';
}

/** What a provider's amount after refunds means, as read (T-Bank's documents leave GetState's Amount open). */
function meaning(s: { amount: Decimal | null; refunded: Decimal | null }, original: Decimal, refunded: Decimal): string {
  if (s.refunded !== null && s.amount !== null) return `${s.amount.toFixed(2)} / refunded ${s.refunded.toFixed(2)}`;
  if (s.amount === null) return 'absent';
  const a = s.amount.toFixed(2);
  if (s.amount.eq(original)) return `${a} (the payment's original amount)`;
  if (s.amount.eq(original.sub(refunded))) return `${a} (what is left after refunds)`;
  return `${a} (neither the original amount nor what is left)`;
}

async function sbp(d: RunDeps): Promise<RehearsalStep> {
  const c = d.connector;
  if (!c.capabilities.payment.sbp) return { name: 'sbp', status: 'skipped', detail: `the connector's kind (${c.kind}) takes no SBP payments`, raw: null };
  const r = await payOnPage(d, `${d.idPrefix}s1`, { method: 'sbp', amount: AMOUNT, receipt: d.receipt.of(AMOUNT) });
  return { name: 'sbp', status: r.ok ? 'passed' : 'failed', detail: r.ok ? `${AMOUNT.toFixed(2)} paid by SBP with the provider's test instrument` : r.detail, raw: r.raw };
}

/**
 * A card saved while paying on the provider's page, then charged with no payer (docs/adr/0074):
 * the connector's own createPayment both times. The saved card's id is what the connector read
 * (YooKassa: the payment's payment_method) or what the provider's notification said (T-Bank's
 * RebillId comes only there). Whether the terminal takes the charge is recorded (charge_enabled).
 */
async function savedCard(d: RunDeps): Promise<RehearsalStep> {
  const c = d.connector;
  const skip = (detail: string, raw: unknown = null): RehearsalStep => ({ name: 'saved_card', status: 'skipped', detail, raw });
  const fail = (detail: string, raw: unknown): RehearsalStep => ({ name: 'saved_card', status: 'failed', detail, raw });
  if (!c.capabilities.savedCards) return skip(`the connector's kind (${c.kind}) saves no cards`);
  const saveId = `${d.idPrefix}c1`;
  const paid = await payOnPage(d, saveId, { method: 'card', amount: AMOUNT, receipt: d.receipt.of(AMOUNT), save: true });
  if (!paid.ok) return fail(`the payment saving the card: ${paid.detail}`, paid.raw);
  let saved = paid.outcome?.status === 'paid' ? paid.outcome.saved ?? null : null;
  if (!saved) {
    if (!d.publicUrl) return skip('the connector\'s read of the paid payment names no saved card, and its provider\'s notification (where it says which card it saved) cannot reach this deployment: no public_url given', paid.raw);
    saved = await d.waitSaved(saveId, d.waits.notificationMs);
    if (!saved) return fail(`the card was not saved: neither the connector's read of the paid payment nor a notification within ${d.waits.notificationMs / 1000} s named it`, paid.raw);
  }
  const chargeId = `${d.idPrefix}c2`;
  const providerId = saved.providerId;
  const receipt = d.receipt.of(CHARGE) ?? undefined;
  let o: Out = await d.call('create_payment', (ctx) => c.createPayment({
    paymentId: chargeId, method: 'card', amount: CHARGE, description: `Rehearsal ${chargeId}`, savedMethod: { providerId }, ...(receipt ? { receipt } : {}),
  }, ctx));
  if (o.status === 'pending' && o.ref) {
    const ref = o.ref;
    o = (await d.until(async () => {
      const r = await d.call('get_payment', (ctx) => c.getPayment({ paymentId: chargeId, ref }, ctx));
      return r.status === 'paid' || r.status === 'declined' ? r : null;
    }, d.waits.settleMs)) ?? o;
  }
  const raw = { saving: paid.raw, saved: { mask: saved.mask, expiry: saved.expiry }, charge: o };
  const card = saved.mask ? ` (${saved.mask})` : '';
  if (o.status === 'paid') {
    await d.learn({ charge_enabled: true });
    return { name: 'saved_card', status: 'passed', detail: `${AMOUNT.toFixed(2)} paid with the card saved${card}; a charge of ${CHARGE.toFixed(2)} by the saved card with no payer: paid`, raw };
  }
  if (o.status === 'declined' && o.code === 'charge_disabled') {
    await d.learn({ charge_enabled: false });
    return fail(`the card was saved${card}, but Charge is not enabled on this terminal: ${o.message}`, raw);
  }
  return fail(`the card was saved${card}; its charge of ${CHARGE.toFixed(2)}: ${describe(o as never)}`, raw);
}

/**
 * A test payout of a small amount to the provider's published test destination, read back until
 * it is final: the connector's own createPayout and getPayout, ids the run's own, nothing written
 * into payouts or the ledger (docs/adr/0105).
 */
async function payout(d: RunDeps): Promise<RehearsalStep> {
  const c = d.connector;
  const caps = c.capabilities;
  if (!caps.payout.card && !caps.payout.sbp) return { name: 'payout', status: 'skipped', detail: `the connector makes no payouts (${c.kind})`, raw: null };
  const to = d.provider.payoutDestination
    ? await d.provider.payoutDestination(d.row, { cardNumber: takesCard(caps, 'number'), sbp: caps.payout.sbp }, AbortSignal.timeout(15_000)).catch((e: Error) => e)
    : null;
  if (to instanceof Error) return { name: 'payout', status: 'failed', detail: `the provider's test destination could not be read: ${to.message}`, raw: null };
  if (!to) return { name: 'payout', status: 'skipped', detail: `no test destination this connector takes: it pays out to cards only by the provider's widget token, which the rehearsal does not collect`, raw: null };
  const payoutId = `${d.idPrefix}o1`;
  let o: OperationOutcome = await d.call('create_payout', (ctx) => c.createPayout({
    payoutId, accountType: to.type, account: to.account, cardHolder: null, bankMemberId: to.bankMemberId, amount: PAYOUT, currency: 'RUB',
  }, ctx));
  const created = o;
  if (o.status === 'pending' || (o.status === 'unknown' && o.ref)) {
    const ref = o.ref;
    o = (await d.until(async () => {
      const r = await d.call('get_payout', (ctx) => c.getPayout({ payoutId, ref }, ctx));
      return r.status === 'succeeded' || r.status === 'failed' ? r : null;
    }, d.waits.settleMs)) ?? o;
  }
  const raw = { destination: to.label, created, final: o };
  if (o.status === 'succeeded') return { name: 'payout', status: 'passed', detail: `a payout of ${PAYOUT.toFixed(2)} to ${to.label} succeeded (read back: ${o.ref ?? 'no reference'})`, raw };
  if (o.status === 'pending') return { name: 'payout', status: 'failed', detail: `a payout of ${PAYOUT.toFixed(2)} to ${to.label} was not final within ${d.waits.settleMs / 1000} s`, raw };
  return { name: 'payout', status: 'failed', detail: `a payout of ${PAYOUT.toFixed(2)} to ${to.label}: ${describe(o as never)}`, raw };
}
