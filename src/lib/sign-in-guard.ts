import { AttemptLimiter } from './attempt-limiter.js';

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
 * Who may try a password now, decided before any hashing (in process memory, like the payment
 * form's limits). Keyed by the email as typed (normalised), never by whether it exists, so
 * known and unknown emails get the same answers. A guesser is closed out per (email, address)
 * pair, so the owner signing in from another address is not locked out by them; a guesser's
 * address runs out of attempts whatever emails it tries; many addresses guessing one email use
 * up its account budget, after which only addresses with no failure on it may try (the owner,
 * who has not mistyped, still gets in; each new guessing address gets one attempt).
 * Every attempt is counted as a failure when admitted, so concurrent guesses cannot slip past
 * the counts, and taken back when the password was right.
 */
export class SignInGuard {
  private readonly byAddress = new AttemptLimiter(10 * 60_000);
  private readonly byPair = new AttemptLimiter(PAIR_LOCK_MINUTES * 60_000);
  private readonly byAccount = new AttemptLimiter(60 * 60_000);

  constructor(private readonly limits: SignInLimits = SIGN_IN_LIMITS) {}

  /** null when refused; otherwise the ticket to settle with `succeeded` after a right password. */
  admit(email: string, address: string): { pair: string; account: string } | null {
    const account = email.trim().toLowerCase();
    const pair = `${account}\u0000${address}`;
    const now = Date.now();
    if (this.byAddress.blocked(address, this.limits.perAddress, now)) return null;
    if (this.byPair.blocked(pair, this.limits.perPair, now)) return null;
    if (this.byAccount.blocked(account, this.limits.perAccount, now) && this.byPair.count(pair, now) > 0) return null;
    this.byAddress.fail(address, now);
    this.byPair.fail(pair, now);
    this.byAccount.fail(account, now);
    return { pair, account };
  }

  /** The password was right: the pair starts over, and the account's budget gets its attempt back. */
  succeeded(ticket: { pair: string; account: string }): void {
    this.byPair.reset(ticket.pair);
    this.byAccount.undo(ticket.account);
  }
}

/**
 * "Forgot password?" limits, on the sign-in guard's keys (address; email and address; email):
 * each request counts, none is taken back, so an address cannot mail one inbox more than
 * `perPair` times in 15 minutes nor ask about many addresses.
 */
export const FORGOT_LIMITS = { perAddress: 10, perPair: 3, perAccount: 5 } as const;
