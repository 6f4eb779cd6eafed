import type { Counter, Hit, LimitStore } from './limit-store.js';

export interface SignInLimits {
  /** Sign-in attempts (any outcome) per client address in 10 minutes. */
  perAddress: number;
  /** Wrong passwords per (email, address) pair that close that pair for 15 minutes. */
  perPair: number;
  /** Wrong passwords per email, from all addresses, in an hour, after which only addresses with no failure on it may try. */
  perAccount: number;
}

export const SIGN_IN_LIMITS: SignInLimits = { perAddress: 30, perPair: 5, perAccount: 100 };
export const PAIR_LOCK_MINUTES = 15;

/**
 * Who may try a password now, decided before any hashing, counted in the store every process
 * shares (src/db/limit-counters.ts), so N API processes allow each limit once in total. Keyed by
 * the email as typed (normalised), never by whether it exists, so known and unknown emails get
 * the same answers. A guesser is closed out per (email, address) pair, so the owner signing in
 * from another address is not locked out by them; a guesser's address runs out of attempts
 * whatever emails it tries; many addresses guessing one email use up its account budget, after
 * which only addresses with no failure on it may try (the owner, who has not mistyped, still gets
 * in; each new guessing address gets one attempt). Every attempt is counted as a failure when
 * admitted (one statement: all three or none), so concurrent guesses cannot slip past the counts,
 * and taken back when the password was right. `scope` keeps the cabinet's, the console's and the
 * code steps' counts apart.
 */
export class SignInGuard {
  constructor(private readonly store: LimitStore, private readonly scope: string, private readonly limits: SignInLimits = SIGN_IN_LIMITS) {}

  /** null when refused; otherwise the ticket to settle with `succeeded` after a right password. */
  async admit(email: string, address: string): Promise<SignInTicket | null> {
    const account = email.trim().toLowerCase();
    const counters: Counter[] = [
      { name: `${this.scope}:address`, key: address, windowMs: 10 * 60_000, limit: this.limits.perAddress },
      { name: `${this.scope}:pair`, key: `${account}\u001f${address}`, windowMs: PAIR_LOCK_MINUTES * 60_000, limit: this.limits.perPair },
      { name: `${this.scope}:account`, key: account, windowMs: 60 * 60_000, limit: this.limits.perAccount, onlyAfter: 1 },
    ];
    const hits = await this.store.admit(counters);
    return hits ? { pair: hits[1]!.counter, account: hits[2]! } : null;
  }

  /** The password was right: the pair starts over, and the account's budget gets its attempt back. */
  async succeeded(ticket: SignInTicket): Promise<void> {
    await this.store.release([ticket.pair], [ticket.account]);
  }
}

export interface SignInTicket { pair: Counter; account: Hit }

/**
 * "Forgot password?" limits, on the sign-in guard's keys (address; email and address; email):
 * each request counts, none is taken back, so an address cannot mail one inbox more than
 * `perPair` times in 15 minutes nor ask about many addresses.
 */
export const FORGOT_LIMITS = { perAddress: 10, perPair: 3, perAccount: 5 } as const;
