import { randomId } from '../../lib/ids.js';
import type { Acquirer, ChargeRequest, ChargeResult } from './acquirer.js';

/** Declined by the sandbox (DESIGN "Sandbox behaviour"). */
export const SANDBOX_DECLINED_CARD = '4000000000000002';

/**
 * Sandbox acquirer: card 4000000000000002 is declined, every other (Luhn-valid) card pays the
 * amount due; SBP pays the amount due, or the amount the payer form posted.
 */
export class SandboxAcquirer implements Acquirer {
  readonly name = 'sandbox';

  async charge(req: ChargeRequest): Promise<ChargeResult> {
    const reference = `sbx_${randomId(12)}`;
    if (req.method === 'BANK_CARD') {
      if (!req.card) return { outcome: 'DECLINED', reason: 'no_card', reference };
      if (req.card.number === SANDBOX_DECLINED_CARD) return { outcome: 'DECLINED', reason: 'card_declined', reference };
      return { outcome: 'PAID', amountReceived: req.amountDue, reference };
    }
    return { outcome: 'PAID', amountReceived: req.sbpAmount ?? req.amountDue, reference };
  }
}
