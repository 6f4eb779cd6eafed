import type pg from 'pg';
import type { OperationType } from '../operation-type.js';
import { inTxOr, withPgTx, type Queryable } from '../../db/client.js';
import { NotFoundError } from '../../errors.js';
import { IDEMPOTENCE_KEY_EXPIRED, NEEDS_OPERATOR } from '../providers/connector.js';
import { contradictsStatus, isProviderRead, moneyMoved, silentConflictLog, type ConflictLog, type ProviderWord } from '../providers/conflict.js';
import {
  closeAttention, lastHeard, lockOpenAttention, parseResolution, pastDeadline, raiseAttention, resolveItem,
  type AttentionRow,
} from './reconcile.js';

/**
 * The life of an operation handed to a provider, written once for its three users: payments,
 * refunds and payouts (docs/adr/0058-one-provider-operation-lifecycle.md).
 *
 *   claim (a worker's lease, or the payer's request opening a payment)
 *   -> call the connector outside any transaction          `sendFromProvider_`, `reconcileFromProvider_`
 *   -> apply a final answer once, in one transaction,       `applyOutcome_` -> the entity's `finish_`
 *      through the entity's state table and the ledger
 *   -> no final answer: it stays PROCESS, asked again        `defer_`
 *      with backoff; past RECONCILE_GIVE_UP_MS an attention item for the operator
 *   -> the operator decides, through the same `finish_`     `decide_`
 *   -> a provider's answer that contradicts a final state   the entity's `conflict_` (conflict.ts)
 *      is a recorded conflict, never dropped
 *
 * Every call to a provider goes through `send` (a creation, or a request on the operation such
 * as a hold's capture) or `run` (a worker's claim): the lifecycle reports the answer, applies
 * or defers it; no user calls its connector and applies the answer by hand.
 *
 * Phases are named as Medusa's payment module names them: a name ending in `_` runs in the
 * caller's transaction (`applyOutcome_`, `finish_`), `...FromProvider_` talks to the provider
 * outside any transaction. What differs between payments, refunds and payouts is an
 * `OperationKind`: their rows, their connector calls, their state table and ledger transfers.
 *
 * An answer's `data`, the provider's own state of the operation, is opaque here: each kind keeps
 * it in the statement that records the answer (`defer_`, `hold_`, `finish_`) and hands it back to
 * every later call of its connector about the operation (docs/adr/0118).
 */


/** Which operation an answer is about: our id (and the connector it must come from), or the connector and its reference. */
export type Target = { id: string; connector?: string } | { connector: string; ref: string };

/** What applying an answer did: `applied` only when this call made the operation final. */
export interface Applied<S extends string = string> {
  applied: boolean;
  /** Its status after the call; null when no such operation exists. */
  status: S | null;
  id?: string;
  /** The answer contradicted a final status and the conflict was recorded now. */
  conflict?: true;
}

/** A phase the lifecycle reports to an observer given when the app or the worker is built. */
export interface LifecycleEvent { phase: 'provider-answered'; type: OperationType; id: string }
export type LifecycleObserver = (e: LifecycleEvent) => void;

/** An operation a worker claimed under a lease. */
export interface Claimed {
  id: string;
  /** When it was handed to its connector; null: never, so it is sent (else its connector is asked). */
  sentAt: Date | null;
  /** How many times its provider was asked so far. */
  checkAttempts: number;
}

/** What a deferred operation keeps on record, for its attention item. */
export interface Deferred { merchantId: string; connector: string | null; ref: string | null; sentAt: Date | null }

/** What a send did: the provider's answer and what applying it did (null: it was deferred); `finished`, the kind's own finish of it. */
export interface Sent<S extends string, O, F> { outcome: O; applied: Applied<S> | null; finished?: F }

/**
 * One user of the lifecycle: what a payment, a refund or a payout is and does. `F`: what the
 * kind's `finishSent_` answers with (a payment: what the payer's page shows).
 */
export interface OperationKind<
  S extends string, Row extends { id: string; status: S; connector?: string | null }, O, C extends Claimed, F extends { status: S } = { status: S },
> {
  readonly type: OperationType;
  /** In the transaction: the operation's row locked (FOR UPDATE); null when there is none. */
  lock_(c: Queryable, target: Target): Promise<Row | null>;
  /** Whether an answer is final: the status it finishes the operation with (a payment: SUCCESS for money received); null when it is not (ask again). */
  finalOf(o: O): S | null;
  /** A final answer as the provider's word about the money; null when it is not the provider's (a payout that could not be sent). */
  wordOf(o: O): Omit<ProviderWord, 'via'> | null;
  /** In the transaction, the row locked and PROCESS: the final status through the state table, the ledger and the merchant's event. */
  finish_(c: Queryable, row: Row, o: O): Promise<S>;
  /** In the transaction, the row locked and final: the provider's word contradicts it; the money follows the provider (conflict.ts). True when recorded now. */
  conflict_(c: Queryable, row: Row, o: O, word: ProviderWord, log: ConflictLog): Promise<boolean>;
  /** In the transaction: an answer that is not final, kept on the PROCESS row (a payer's action, a reference, the next check). */
  hold_(c: Queryable, row: Row, o: O, attempts: number | undefined): Promise<void>;
  /** In the transaction: a final answer that waits a while longer before it applies (a decline whose reason follows). */
  waits_?(c: Queryable, row: Row, o: O, ctx: { attempts: number | undefined; via: string }): Promise<boolean>;
  /** The operator's decision as the answer `finish_` applies. */
  decided(row: Row, to: 'SUCCESS' | 'FAIL', note: string | null): O;
  /** The state table's refusal of `from` -> `to` (409). */
  illegal(from: S, to: S): Error;
  /** Outside any transaction: the first call, or a request on the operation `op` names; the operation is on record with its connector before it. */
  sendFromProvider_(op: C): Promise<O>;
  /**
   * Outside any transaction, optional: a final answer to `send` finished by the kind in one
   * statement atomic on its own (no BEGIN/COMMIT, no lock: its state table's guarded update
   * refuses a row final already). Null when it did not finish it (not such a send, or the row
   * was final already): the answer is then applied as any other.
   */
  finishSent_?(op: C, o: O): Promise<F | null>;
  /** Outside any transaction: the connector that has it asked (a repeat under the same key where it shows nothing). */
  reconcileFromProvider_(op: C): Promise<O>;
  /**
   * Outside any transaction: the provider's answer now, applied nowhere; null when it cannot be
   * asked. `ref`: the provider's own reference of the object to read (the one its notification
   * names), instead of the one we stored (none when an answer was lost); the connector checks the
   * object it reads is this one of ours.
   */
  readFromProvider_(id: string, ref?: string | null): Promise<O | null>;
  /** In the transaction: no final answer; the row stays PROCESS with what was heard and its next check after the backoff. */
  defer_(c: Queryable, op: C, o: O): Promise<Deferred | null>;
}

export interface LifecycleContext {
  pool: pg.Pool;
  /** How long an operation may stay with its provider unanswered before the operator gets it (RECONCILE_GIVE_UP_MS). */
  giveUpMs: number;
  observer?: LifecycleObserver;
  /** Where a recorded conflict's error line goes (silent when not given). */
  log?: ConflictLog;
}

/** The lifecycle of one kind of operation; each service holds one. */
export class Lifecycle<
  S extends string, Row extends { id: string; status: S; connector?: string | null }, O, C extends Claimed, F extends { status: S } = { status: S },
> {
  constructor(readonly kind: OperationKind<S, Row, O, C, F>, private readonly ctx: LifecycleContext) {}

  /** The logger `conflict_` records with (the caller of a phase outside the lifecycle passes it too). */
  get log(): ConflictLog { return this.ctx.log ?? silentConflictLog; }

  /** Reports that the provider answered, before anything of the answer is committed. */
  private answered(id: string): void {
    this.ctx.observer?.({ phase: 'provider-answered', type: this.kind.type, id });
  }

  /**
   * A claimed operation: sent when it never was, else its connector asked (outside any
   * transaction); a final answer applied once in its own transaction, anything else deferred.
   * Null when it was deferred. `giveUpMs`: the worker's RECONCILE_GIVE_UP_MS when it has its
   * own configuration.
   */
  async run(op: C, giveUpMs = this.ctx.giveUpMs): Promise<Applied<S> | null> {
    if (op.sentAt === null) return (await this.send(op, { giveUpMs })).applied;
    return (await this.heard(op, await this.kind.reconcileFromProvider_(op), { giveUpMs }, false)).applied;
  }

  /**
   * The send phase: the operation's call (`sendFromProvider_`: its creation, or a request on it
   * such as a hold's capture) outside any transaction, then its answer as `run` takes one, except
   * that a final answer is finished by the kind's own one-statement finish when it has one
   * (`finishSent_`). `via`: how the answer is heard when the call is a request on an operation
   * already with its provider (a hold's capture: 'read'); such an answer counts no check of
   * reconciliation's.
   */
  async send(op: C, opts: { giveUpMs?: number; via?: string } = {}): Promise<Sent<S, O, F>> {
    return this.heard(op, await this.kind.sendFromProvider_(op), opts, true);
  }

  /**
   * The answer to our own call, reported to the observer before anything of it is applied: not
   * final, deferred; final, applied once (by `finishSent_` when `sent` and the kind takes it).
   */
  private async heard(op: C, o: O, opts: { giveUpMs?: number; via?: string }, sent: boolean): Promise<Sent<S, O, F>> {
    this.answered(op.id);
    if (this.kind.finalOf(o) === null) {
      await this.defer(op, o, opts.giveUpMs ?? this.ctx.giveUpMs);
      return { outcome: o, applied: null };
    }
    const finished = sent ? await this.kind.finishSent_?.(op, o) ?? null : null;
    if (finished !== null) return { outcome: o, applied: { applied: true, status: finished.status, id: op.id }, finished };
    // The answer to our own call is the provider's word: against a final state (a notification
    // or an operator decided meanwhile) it is heard as a read.
    const attempts = opts.via === undefined ? op.checkAttempts + 1 : undefined;
    return { outcome: o, applied: await this.applyAnswer({ id: op.id }, o, { via: opts.via ?? 'reconciliation', attempts }) };
  }

  /**
   * A provider's answer (a notification, a read, reconciliation) applied once: in the caller's
   * transaction when given (a notification's dedupe row commits with it), else in its own.
   */
  applyAnswer(target: Target, o: O, opts: { tx?: Queryable; via: string; attempts?: number }): Promise<Applied<S>> {
    return inTxOr(this.ctx.pool, opts.tx, async (c) => {
      const row = await this.kind.lock_(c, target);
      if (!row) return { applied: false, status: null };
      // Another connector's word about it is no answer.
      if (target.connector !== undefined && row.connector !== target.connector) return { applied: false, status: row.status };
      return this.applyOutcome_(c, row, o, opts.via, opts.attempts);
    });
  }

  /**
   * In the caller's transaction with the row locked: PROCESS and a final answer -> the final
   * status through `finish_` (the state table guards it, the ledger moves the money once) and
   * the attention item, if any, closed by the provider's answer. A final row: only a read of the
   * provider moves money against it (a notification is confirmed by a read first,
   * ProviderNotificationService), and only where it contradicts: a conflict.
   */
  async applyOutcome_(c: Queryable, row: Row, o: O, via: string, attempts?: number): Promise<Applied<S>> {
    const k = this.kind;
    const to = k.finalOf(o);
    if (row.status !== 'PROCESS') {
      const word = to === null ? null : k.wordOf(o);
      const conflict = word !== null && isProviderRead(via) && contradictsStatus(k.type, row.status, word.status)
        && await k.conflict_(c, row, o, { ...word, via }, this.log);
      return { applied: false, status: row.status, id: row.id, ...(conflict ? { conflict: true as const } : {}) };
    }
    if (to === null) {
      await k.hold_(c, row, o, attempts);
      return { applied: false, status: row.status, id: row.id };
    }
    if (await k.waits_?.(c, row, o, { attempts, via })) return { applied: false, status: row.status, id: row.id };
    const status = await k.finish_(c, row, o);
    await closeAttention(c, k.type, row.id, { resolution: status, note: 'the provider answered', by: via === 'reconciliation' ? 'reconciliation' : 'provider' });
    return { applied: true, status, id: row.id };
  }

  /**
   * No final answer about a claimed operation: kept PROCESS and asked again after the backoff;
   * once it has been with its connector past RECONCILE_GIVE_UP_MS, an attention item for the
   * operator (once; later questions keep what was last heard on it).
   */
  private async defer(op: C, o: O, giveUpMs: number): Promise<void> {
    await withPgTx(this.ctx.pool, async (c) => {
      const held = await this.kind.defer_(c, op, o);
      if (!held?.connector) return;
      // A creation whose idempotency key outlived the provider's memory of it is never sent again
      // (a repeat could make a second one): only a person can decide it, so at once.
      const reason = (o as { reason?: unknown }).reason;
      const keyExpired = reason === IDEMPOTENCE_KEY_EXPIRED;
      // The provider's final state does not say whether this operation was made (docs/adr/0091):
      // asking again teaches nothing, so an operator gets it now, with what the provider answered.
      const undecidable = typeof reason === 'string' && reason.startsWith(NEEDS_OPERATOR);
      if (!keyExpired && !undecidable && !pastDeadline(held.sentAt, giveUpMs)) return;
      await raiseAttention(c, {
        objectType: this.kind.type, objectId: op.id, merchantId: held.merchantId, connector: held.connector, providerRef: held.ref,
        reason: keyExpired
          ? `${held.connector} no longer knows this creation's idempotency key (kept 24 h): it was not sent again; check the provider's dashboard and decide`
          : undecidable
            ? `${held.connector}'s answers cannot decide it: ${(reason as string).slice(NEEDS_OPERATOR.length, NEEDS_OPERATOR.length + 200)}`
            : `no final answer from ${held.connector} within RECONCILE_GIVE_UP_MS (${giveUpMs} ms)`,
        lastHeard: lastHeard(o as { status: string }),
      });
    });
  }

  /**
   * The operator's decision on an operation reconciliation gave up on, in the caller's
   * transaction (the attention item is the caller's to close): PROCESS -> the decision through
   * `finish_`; already decided that way, nothing; final otherwise, 409.
   */
  async decide_(c: Queryable, id: string, to: 'SUCCESS' | 'FAIL', note: string | null): Promise<void> {
    const row = await this.kind.lock_(c, { id });
    if (!row) throw new NotFoundError(`No such ${this.kind.type}.`);
    if (row.status === 'PROCESS') {
      await this.kind.finish_(c, row, this.kind.decided(row, to, note));
      return;
    }
    const already = to === 'SUCCESS' ? moneyMoved(this.kind.type, row.status) : row.status === 'FAIL';
    if (!already) throw this.kind.illegal(row.status, to as S);
  }

  /**
   * The operator's decision on this kind's attention item, with the item closed (the note and
   * who decided) in one transaction: 404 for no such item of this kind, 409 when resolved already
   * or the operation became final otherwise, 422 for an outcome other than SUCCESS or FAIL.
   */
  async resolveAttention(itemId: string, outcome: unknown, note: string | null, actor: string): Promise<AttentionRow> {
    const to = parseResolution(outcome);
    return withPgTx(this.ctx.pool, async (c) => {
      const item = await lockOpenAttention(c, itemId, this.kind.type);
      await this.decide_(c, item.object_id, to, note);
      return resolveItem(c, itemId, { resolution: to, note, by: actor });
    });
  }
}

/** Any of the three lifecycles, as the attention list and notifications use them by object type. */
export type AnyLifecycle = Lifecycle<string, { id: string; status: string; connector?: string | null }, unknown, Claimed, { status: string }>;
