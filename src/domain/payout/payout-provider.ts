/** What a payout provider needs to send one payout (the full account identifier, decrypted). */
export interface ProviderPayout {
  id: string;
  accountType: 'CARD' | 'SBP';
  /** Card digits or +7XXXXXXXXXX, in clear only for the duration of the call. */
  account: string;
  cardHolder: string | null;
  bankMemberId: string | null;
  amount: string;
  currency: string;
}

/** The provider's final answer for a payout. */
export interface ProviderResult {
  status: 'SUCCESS' | 'FAIL' | 'ERROR';
  reason?: string;
}

/**
 * A bank or payout network connector. Called by the payout worker outside any database
 * transaction; a thrown error means "unknown, try again later" (the lease expires and the
 * payout is picked up again), while ERROR is a final answer from the provider.
 */
export interface PayoutProvider {
  readonly name: string;
  send(p: ProviderPayout): Promise<ProviderResult>;
}
