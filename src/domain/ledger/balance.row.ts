/** A merchant's balance in one currency as the reads select it (NUMERIC as text). */
export interface BalanceRow { currency: string; available: string; locked: string; hold: string }

export const BALANCE_COLUMNS = 'currency, available, locked, hold';
