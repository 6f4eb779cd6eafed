import { Type } from '@sinclair/typebox';
import { money8 } from '../../lib/money.js';
import { BALANCE_COLUMNS, type BalanceRow } from '../../domain/ledger/balance.row.js';

export { BALANCE_COLUMNS, type BalanceRow };

export interface BalanceView { currency: string; balance_available: string; balance_locked: string; balance_hold: string }

/** One balance entry per currency, amounts with 8 decimals (spec). */
export function balanceView(b: BalanceRow): BalanceView {
  return {
    currency: b.currency,
    balance_available: money8(b.available),
    balance_locked: money8(b.locked),
    balance_hold: money8(b.hold),
  };
}

export const BalanceSchema = Type.Object({
  currency: Type.String({ enum: ['USD', 'RUB', 'EUR'] }),
  balance_available: Type.String({ description: '8 decimals' }),
  balance_locked: Type.String({ description: 'Locked for payouts and refunds, 8 decimals' }),
  balance_hold: Type.String({ description: 'Fees of running payouts, 8 decimals' }),
});
