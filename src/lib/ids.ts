import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 string (rejection sampling keeps it uniform). 10 chars = 59 bits. */
export function randomId(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Short opaque ids, unguessable; bills are 10 chars like 5QWlqB2kKJ. */
export const newBillId = (): string => randomId(10);
export const newId = (): string => randomId(16);
