import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes from the operating system's CSPRNG, drawn 4 KiB at a time: one call per ~250
 * ids instead of one per id (each call costs about as much as the id's whole formatting). Each
 * byte is used once; the pool lives in this process only (cluster workers are processes of
 * their own, not forks of this memory).
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** A random base62 string (rejection sampling keeps it uniform). 10 chars = 59 bits. */
export function randomId(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

/** Short opaque ids, unguessable; bills are 10 chars like 5QWlqB2kKJ. */
export const newBillId = (): string => randomId(10);
export const newId = (): string => randomId(16);

/*
 * Payment ids name the month of their creation (docs/adr/0012-payment-ids-name-their-month.md): two base62 characters count UTC calendar months from January 2000 (the months of
 * the partitions of `payments`), then 14 random characters (83 bits). 16 characters of
 * [A-Za-z0-9] as before, still opaque to merchants. A read by id then names the one partition
 * (payment-by-id.ts); ids made before this format decode to no month or to a wrong one, and are
 * found by the unpruned read that follows a miss.
 */
const ID_EPOCH_YEAR = 2000;
const PAYMENT_ID_RANDOM = 14;

/** Months since January 2000 of `at` in UTC. */
const monthIndex = (at: Date): number => (at.getUTCFullYear() - ID_EPOCH_YEAR) * 12 + at.getUTCMonth();

/** The two characters naming the UTC month of `at`. */
export function paymentIdPrefix(at: Date): string {
  const m = monthIndex(at);
  return ALPHABET[Math.floor(m / 62)]! + ALPHABET[m % 62]!;
}

/** The random part of a payment id (the statement that inserts the payment adds the month). */
export const newPaymentIdSuffix = (): string => randomId(PAYMENT_ID_RANDOM);

/** A payment id made at `at` (the insert makes it in SQL, `paymentIdSql`, from the row's own creation time). */
export const newPaymentId = (at: Date): string => paymentIdPrefix(at) + newPaymentIdSuffix();

/**
 * SQL for the payment id of a row created at `at` (an expression of type timestamptz(3): the
 * row's created_at itself, so the id and the partition key cannot fall into different months)
 * with the random part `suffix` (an expression of type text). Same encoding as paymentIdPrefix.
 */
export function paymentIdSql(at: string, suffix: string): string {
  const m = `((extract(year FROM (${at}) AT TIME ZONE 'UTC')::int - ${ID_EPOCH_YEAR}) * 12 + extract(month FROM (${at}) AT TIME ZONE 'UTC')::int - 1)`;
  return `(substr('${ALPHABET}', ${m} / 62 + 1, 1) || substr('${ALPHABET}', ${m} % 62 + 1, 1) || ${suffix})`;
}

/** The UTC month [from, to) a payment id names; null when it names none that can hold a payment yet. */
export function paymentIdMonth(id: string, now: Date = new Date()): { from: Date; to: Date } | null {
  if (!/^[A-Za-z0-9]{16}$/.test(id)) return null;
  const m = ALPHABET.indexOf(id[0]!) * 62 + ALPHABET.indexOf(id[1]!);
  // A month after next cannot be one a payment was made in (next: a clock a little ahead).
  if (m > monthIndex(now) + 1) return null;
  const year = ID_EPOCH_YEAR + Math.floor(m / 12);
  return { from: new Date(Date.UTC(year, m % 12, 1)), to: new Date(Date.UTC(year, m % 12 + 1, 1)) };
}
