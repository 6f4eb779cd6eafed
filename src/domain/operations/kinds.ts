import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import type { PaymentService } from '../payment/payment.service.js';
import type { PayoutService } from '../payout/payout.service.js';
import type { PaymentOutcome } from '../providers/connector.js';
import type { RefundService } from '../refund/refund.service.js';
import type { AnyLifecycle, Applied, Claimed, Target } from './lifecycle.js';
import type { OperationType } from '../operation-type.js';

/**
 * The one map of operation kinds (docs/adr/0120-one-worker-factory-and-one-map-of-kinds.md):
 * for each type of operation handed to a provider, its lifecycle and how a worker claims and
 * gives back its due work. The workers, the provider notifications and the attention list
 * dispatch through it by type; none of them names a kind's service.
 */
export interface KindEntry {
  /** The kind's lifecycle: its phases, and the kind itself (`lifecycle.kind`: `finalOf`, `wordOf`, reads). */
  readonly lifecycle: AnyLifecycle;
  /** Claims up to `limit` due operations under a lease (one cheap indexed statement when none is due). */
  claim(limit: number): Promise<Claimed[]>;
  /** Gives back operations claimed but never worked on (a worker stopping). */
  release(ids: string[]): Promise<void>;
  /**
   * A provider's answer about one of this kind's operations (a notification), applied once in
   * `tx`; `status` null when there is no such operation of that connector.
   */
  apply(target: Target, o: unknown, opts: { tx?: Queryable; via: string }): Promise<Applied>;
}

export type OperationKinds = Readonly<Record<OperationType, KindEntry>>;

/** A kind whose answers go through its lifecycle alone (refunds, payouts). */
export function kindEntry<C extends Claimed>(
  lifecycle: AnyLifecycle, work: { claim(limit: number): Promise<C[]>; release(ids: string[]): Promise<void> },
): KindEntry {
  return {
    lifecycle,
    claim: (limit) => work.claim(limit),
    release: (ids) => work.release(ids),
    apply: (target, o, opts) => lifecycle.applyAnswer(target, o, opts),
  };
}

/** What one pass over a kind's due work did. */
export interface Pass { claimed: number; finalised: number }

/**
 * One pass over a kind's due work, as the worker runs it (tests drive it in place of the loop):
 * claimed under a lease, each run through the lifecycle. One that fails keeps its lease and is
 * taken again when it expires; the others of the batch still run, then the failures are thrown
 * together. `giveUpMs`: the worker's RECONCILE_GIVE_UP_MS when it has its own configuration.
 */
export async function runDue(
  work: { lifecycle: AnyLifecycle; claim(limit: number): Promise<Claimed[]> }, limit: number, giveUpMs?: number,
): Promise<Pass> {
  const claimed = await work.claim(limit);
  const errors: unknown[] = [];
  let finalised = 0;
  for (const op of claimed) {
    try {
      if ((await work.lifecycle.run(op, giveUpMs))?.applied === true) finalised += 1;
    } catch (e) {
      errors.push(e);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} ${work.lifecycle.kind.type}(s) could not be finished`);
  return { claimed: claimed.length, finalised };
}

/** How long a claimed payment check is the worker's: longer than the provider call it makes. */
export const paymentCheckLeaseMs = (config: Pick<Config, 'connectorTimeoutMs'>) => config.connectorTimeoutMs + 5_000;

/**
 * The map, built once per process from the services that own each kind's lifecycle. A payment's
 * answer goes through PaymentService.applyOutcome, which also keeps a card the provider said it
 * saved after the payment finished.
 */
export function operationKinds(
  config: Pick<Config, 'connectorTimeoutMs'>,
  s: {
    payments: Pick<PaymentService, 'lifecycle' | 'claimDueChecks' | 'releaseChecks' | 'findAtConnector' | 'applyOutcome'>;
    refunds: Pick<RefundService, 'lifecycle' | 'operation'>;
    payouts: Pick<PayoutService, 'lifecycle' | 'operation'>;
  },
): OperationKinds {
  const { payments } = s;
  return {
    payment: {
      lifecycle: payments.lifecycle as AnyLifecycle,
      // The lease: while one worker asks, no other claims the payment.
      claim: (limit) => payments.claimDueChecks(limit, paymentCheckLeaseMs(config)),
      release: (ids) => payments.releaseChecks(ids),
      apply: async (target, o, { tx, via }) => {
        const id = !('id' in target) ? await payments.findAtConnector(target.connector, null, target.ref, tx)
          : target.connector === undefined ? target.id : await payments.findAtConnector(target.connector, target.id, '', tx);
        if (id === null) return { applied: false, status: null };
        const done = await payments.applyOutcome(id, o as PaymentOutcome, { tx, via });
        return { applied: done.applied, status: done.status, id, ...(done.conflict ? { conflict: true as const } : {}) };
      },
    },
    refund: kindEntry(s.refunds.lifecycle as AnyLifecycle, s.refunds.operation),
    payout: kindEntry(s.payouts.lifecycle as AnyLifecycle, s.payouts.operation),
  };
}
