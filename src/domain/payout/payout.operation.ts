import { Decimal } from 'decimal.js';
import type pg from 'pg';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { decrypt } from '../../lib/crypto.js';
import { enqueueEvent } from '../../outbox/events.js';
import type { PayoutStatus } from '../../generated/prisma/enums.js';
import { post } from '../ledger/ledger.js';
import { payoutNotPaidAfterAll, payoutPaidAfterAll, payoutReturned, payoutSucceeded } from '../ledger/postings.js';
import type { Deferred, OperationKind, Target } from '../operations/lifecycle.js';
import { isFinal, isNotFound, reconcileDelayMs } from '../operations/reconcile.js';
import { recordConflict, type ConflictLog, type ProviderWord } from '../providers/conflict.js';
import type { OperationOutcome, ProviderData } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import {
  claimDuePayouts, deferPayout, keepPayoutHeard, lockPayout, markPayoutSent, payoutWebhookUrl, readPayout, releasePayoutClaims, releaseUsage,
  transitionPayout, type WorkRow,
} from './payout.repository.js';
import { assertTransition, IllegalPayoutTransition } from './payout.states.js';
import { payoutWebhookFields, type PayoutRow } from './payout.view.js';

/** A payout's answer: the connector's, or `error` when it could not be sent at all (final: ERROR, the money back). */
export type PayoutOutcome = OperationOutcome | { status: 'error'; reason: string };

/**
 * The payout as an operation kind of the lifecycle (src/domain/operations/lifecycle.ts): its
 * rows (payout.repository.ts), its connector calls (through the merchant's routing), its state
 * table and its ledger transfers. The lifecycle drives the phases; a `_` method runs in the
 * transaction it is given, a `...FromProvider_` one talks to the provider outside any.
 */
export class PayoutOperation implements OperationKind<PayoutStatus, PayoutRow, PayoutOutcome, WorkRow> {
  readonly type = 'payout' as const;

  constructor(
    private readonly config: Config,
    /** For what runs outside any transaction: the claim, the record before a call, a read. */
    private readonly pool: pg.Pool,
    private readonly connectors: ConnectorRegistry,
  ) {}

  /** Claims up to `batch` due PROCESS payouts under the worker's lease (WORKER_LEASE_MS). */
  claim(batch: number): Promise<WorkRow[]> {
    return claimDuePayouts(this.pool, batch, this.config.workerLeaseMs);
  }

  /** Gives back the leases of payouts claimed but never worked on (a worker stopping). */
  release(ids: string[]): Promise<void> {
    return releasePayoutClaims(this.pool, ids);
  }

  lock_(c: Queryable, target: Target): Promise<PayoutRow | null> {
    return lockPayout(c, target);
  }

  finalOf(o: PayoutOutcome): PayoutStatus | null {
    return o.status === 'error' ? 'ERROR' : !isFinal(o) ? null : o.status === 'succeeded' ? 'SUCCESS' : 'FAIL';
  }

  wordOf(o: PayoutOutcome): Omit<ProviderWord, 'via'> | null {
    return o.status === 'succeeded' ? { status: 'succeeded', ref: o.ref }
      : o.status === 'failed' ? { status: 'failed', ref: o.ref, code: o.code, message: o.message } : null;
  }

  decided(_row: PayoutRow, to: 'SUCCESS' | 'FAIL', note: string | null): PayoutOutcome {
    return to === 'SUCCESS'
      ? { status: 'succeeded', ref: null }
      : { status: 'failed', code: 'operator', message: `operator: ${note ?? 'resolved as FAIL'}`, ref: null };
  }

  illegal(from: PayoutStatus, to: PayoutStatus): Error {
    return new IllegalPayoutTransition(from, to);
  }

  async finish_(c: Queryable, row: PayoutRow, o: PayoutOutcome): Promise<PayoutStatus> {
    const to = o.status === 'succeeded' ? 'SUCCESS' : o.status === 'error' ? 'ERROR' : 'FAIL';
    const reason = o.status === 'error' ? o.reason : o.status === 'failed' ? o.message : null;
    await this.finalize_(c, row, to, reason, 'ref' in o ? o.ref : null, 'data' in o ? o.data ?? null : null);
    return to;
  }

  /**
   * A final status, in the caller's transaction with the payout row locked (the provider's
   * answer, or the operator's decline): SUCCESS debits the locked amount and the held
   * commission; FAIL, ERROR, DECLINED return both to available. The payout webhook is enqueued
   * in the same transaction. `ref`: the provider's reference, kept, and `data` its state of the payout (docs/adr/0118).
   */
  async finalize_(
    c: Queryable, row: PayoutRow, to: 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED', reason: string | null, ref: string | null = null, data: ProviderData | null = null,
  ): Promise<void> {
    assertTransition(row.status, to);
    await transitionPayout(c, row.id, row.status, to, { failureReason: reason, providerRef: ref, data });
    const amount = new Decimal(row.amount);
    const money = { payoutId: row.id, merchantId: row.merchant_id, currency: row.currency as 'RUB', amount, commission: new Decimal(row.commission) };
    if (to === 'SUCCESS') {
      await post(c, payoutSucceeded({ ...money, connector: row.connector ?? 'sandbox' }));
    } else {
      await post(c, payoutReturned(money));
      await releaseUsage(c, row.id, amount.toFixed(), this.config.tz);
    }
    await this.webhook_(c, row, to, row.id);
  }

  /**
   * A provider's final answer about a payout final already that contradicts it (a payout we
   * returned that the provider paid, one we made SUCCESS that it failed), in the lifecycle's
   * transaction with the row locked: the money follows the provider (PAYOUT_CONFLICT_DEBIT,
   * which may take available below zero, or PAYOUT_CONFLICT_CREDIT) and the merchant gets a
   * second payout webhook with the provider's status. Once per payout; true when recorded now.
   */
  async conflict_(c: Queryable, row: PayoutRow, _o: PayoutOutcome, word: ProviderWord, log: ConflictLog): Promise<boolean> {
    if (!row.connector) return false;
    const money = {
      payoutId: row.id, merchantId: row.merchant_id, currency: row.currency as 'RUB', amount: new Decimal(row.amount),
      commission: new Decimal(row.commission), connector: row.connector,
    };
    const paid = word.status === 'succeeded';
    const recorded = await recordConflict(c, {
      objectType: 'payout', objectId: row.id, merchantId: row.merchant_id, connector: row.connector, providerRef: row.provider_ref ?? word.ref,
      ours: row.status, provider: word, transfer: paid ? payoutPaidAfterAll(money) : payoutNotPaidAfterAll(money),
    }, log);
    // The merchant learns what the provider did: a webhook of its own (the first one's
    // (kind, aggregate) is taken), TrsId the payout, Status the provider's.
    if (recorded) await this.webhook_(c, row, paid ? 'SUCCESS' : 'FAIL', `${row.id}:conflict`);
    return recorded;
  }

  /** A non-final answer heard outside the worker's question: its reference and provider state kept. */
  hold_(c: Queryable, row: PayoutRow, o: PayoutOutcome): Promise<void> {
    return keepPayoutHeard(c, row.id, 'ref' in o ? o.ref ?? null : null, 'data' in o ? o.data ?? null : null);
  }

  defer_(c: Queryable, row: WorkRow, o: PayoutOutcome): Promise<Deferred | null> {
    return deferPayout(c, row.id, 'ref' in o ? o.ref : null, reconcileDelayMs(row.checkAttempts), 'data' in o ? o.data ?? null : null);
  }

  /**
   * First send through the merchant's routing, outside any transaction; each connector is on
   * record before it is called. A destination that cannot be read, or every connector refusing
   * before money could move, is final: ERROR, the money goes back.
   */
  async sendFromProvider_(row: WorkRow): Promise<PayoutOutcome> {
    const account = this.accountOf(row);
    if (account === null) return { status: 'error', reason: 'account identifier unreadable' };
    const route = row.account_type === 'CARD' ? 'payout_card' : 'payout_sbp';
    const { routing, live } = await this.connectors.routingOf(row.merchant_id);
    const routed = await this.connectors.route<OperationOutcome>(routing[route], route, { live }, 'create_payout', (c, ctx) => c.createPayout(this.request(row, account), ctx),
      async (c) => { await markPayoutSent(this.pool, row.id, c.name); });
    return routed.outcome.status === 'refused' ? { status: 'error', reason: routed.outcome.message } : routed.outcome;
  }

  /**
   * Asks the connector that has the payout for its status. Where the provider shows nothing
   * under what we know (no reference of ours yet), the creation is repeated with the same payout
   * id, its idempotency key: the provider answers the first result or, if it never got it, makes
   * it now. Nothing but a final answer of that connector finishes the payout.
   */
  async reconcileFromProvider_(row: WorkRow): Promise<OperationOutcome> {
    const name = row.connector!;
    const c = await this.connectors.get(name);
    if (!c) return { status: 'unknown', ref: null, reason: `connector ${name} is disabled or not available` };
    const o = await this.connectors.call(c, 'get_payout', (ctx) => c.getPayout({ payoutId: row.id, ref: row.provider_ref ?? null, data: row.provider_data ?? null }, ctx));
    if (isNotFound(o) && !row.provider_ref) {
      const account = this.accountOf(row);
      // The repeat says when the key was first used (CreatePayout.firstSentAt: a key past its life is never sent again).
      if (account !== null) return this.connectors.call(c, 'create_payout', (ctx) => c.createPayout({ ...this.request(row, account), firstSentAt: row.sentAt }, ctx));
    }
    return o;
  }

  /**
   * The provider's answer about a payout now (its connector's get_payout), outside any
   * transaction; null when no connector has it. By `ref` when given (the object a notification
   * names), else by the reference we stored.
   */
  async readFromProvider_(id: string, ref?: string | null): Promise<OperationOutcome | null> {
    const row = await readPayout(this.pool, id);
    if (!row?.connector) return null;
    const c = await this.connectors.get(row.connector);
    if (!c) return null;
    return this.connectors.call(c, 'get_payout', (ctx) => c.getPayout({ payoutId: row.id, ref: ref ?? row.provider_ref ?? null, data: row.provider_data ?? null }, ctx));
  }

  /** The merchant's payout webhook (`aggregateId`: the payout's, or its conflict's). */
  private async webhook_(c: Queryable, row: PayoutRow, status: 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED', aggregateId: string): Promise<void> {
    await enqueueEvent(c, {
      merchantId: row.merchant_id, kind: 'PAYOUT_WEBHOOK', aggregateId, url: await payoutWebhookUrl(c, row.merchant_id), fields: payoutWebhookFields(row, status),
    });
  }

  /** The destination in clear for the call; null when it cannot be read (the payout is ERROR). */
  private accountOf(row: PayoutRow): string | null {
    try {
      return decrypt(this.config.tokenEncryptionKey, row.account_enc ?? '');
    } catch {
      return null;
    }
  }

  private request(row: PayoutRow, account: string) {
    return {
      payoutId: row.id, accountType: row.account_type, account, cardHolder: row.card_holder,
      bankMemberId: row.bank_member_id, amount: new Decimal(row.amount), currency: row.currency,
    };
  }
}
