/**
 * How people read a two-stage payment (docs/adr/0096-holds-as-people-read-them.md): the status
 * alone says PROCESS, SUCCESS or FAIL, which to a payer or a merchant reads as "checking", "paid"
 * and "declined". The payer's page, the cabinet, its CSV and the console say instead what
 * happened to the hold; the API and the postbacks keep the status as it is.
 */
export type HoldReading = 'HELD' | 'CAPTURED' | 'CANCELLED_BY_SHOP';

export interface HoldFacts {
  status: string;
  /** What the provider holds or held (null: the payment never was a hold). */
  authorized: unknown;
  failureReason: string | null;
  /** Whether a cancellation was asked for (the shop's, through the operator). */
  cancelRequested: boolean;
}

export function holdReading(p: HoldFacts): HoldReading | null {
  if (p.authorized === null || p.authorized === undefined) return null;
  if (p.status === 'PROCESS') return 'HELD';
  if (p.status === 'SUCCESS') return 'CAPTURED';
  // An expired hold (`expired_on_capture`) is not the shop's doing: it reads as the failure it is.
  if (p.status === 'FAIL' && (p.cancelRequested || p.failureReason === 'canceled')) return 'CANCELLED_BY_SHOP';
  return null;
}

/** The same, from a payment row as Prisma reads it. */
export const holdReadingOf = (p: { status: string; authorizedAmount?: unknown; failureReason?: string | null; cancelRequestedAt?: Date | null }): HoldReading | null =>
  holdReading({ status: p.status, authorized: p.authorizedAmount ?? null, failureReason: p.failureReason ?? null, cancelRequested: p.cancelRequestedAt != null });
