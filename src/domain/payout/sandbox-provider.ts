import type { PayoutProvider, ProviderPayout, ProviderResult } from './payout-provider.js';

/**
 * Sandbox payouts (DESIGN.md "Sandbox behaviour"): cards and phones ending 0002 FAIL, every
 * other account SUCCEEDS. The processing delay is applied by the worker through process_after.
 */
export class SandboxPayoutProvider implements PayoutProvider {
  readonly name = 'sandbox';

  async send(p: ProviderPayout): Promise<ProviderResult> {
    if (p.account.endsWith('0002')) return { status: 'FAIL', reason: 'sandbox: account ending 0002 is declined' };
    return { status: 'SUCCESS' };
  }
}
