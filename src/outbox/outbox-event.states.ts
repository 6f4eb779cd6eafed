import type { OutboxEventStatus } from '../generated/prisma/enums.js';
import { ConflictError } from '../errors.js';
import { transitionPairs } from '../kernel/transitions.js';

/**
 * Every change of an outbox event's status, in one table.
 * PENDING -> PENDING is a failed attempt with a retry scheduled.
 * DEAD/DELIVERED -> PENDING is an operator's redelivery (at-least-once: receivers dedupe by TrsId).
 */
export const OUTBOX_EVENT_TRANSITIONS: Readonly<Record<OutboxEventStatus, readonly OutboxEventStatus[]>> = {
  PENDING: ['PENDING', 'DELIVERED', 'DEAD'],
  DELIVERED: ['PENDING'],
  DEAD: ['PENDING'],
};

export function canTransition(from: OutboxEventStatus, to: OutboxEventStatus): boolean {
  return OUTBOX_EVENT_TRANSITIONS[from].includes(to);
}

export function assertTransition(from: OutboxEventStatus, to: OutboxEventStatus): void {
  if (!canTransition(from, to)) throw new ConflictError(`outbox event cannot go from ${from} to ${to}`);
}

/** Every allowed (from, to) pair, for the worker's batch statement (unnest in SQL). */
export const OUTBOX_EVENT_PAIRS = transitionPairs(OUTBOX_EVENT_TRANSITIONS);

/** Statuses from which an event may be put back to PENDING by a redelivery. */
export const REDELIVERABLE_FROM: readonly OutboxEventStatus[] = (Object.keys(OUTBOX_EVENT_TRANSITIONS) as OutboxEventStatus[])
  .filter((s) => s !== 'PENDING' && canTransition(s, 'PENDING'));
