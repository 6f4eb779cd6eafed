/**
 * Statuses in which a payment received money (and its bill, which follows it): credited to the
 * merchant, refundable, redirected to the Success URL, counted as turnover. The one definition;
 * payment.states.ts, bill.states.ts, refunds, the cabinet and the postback rules use it.
 */
export const MONEY_RECEIVED_STATUSES = ['SUCCESS', 'UNDERPAID', 'OVERPAID'] as const;

export type MoneyReceivedStatus = (typeof MONEY_RECEIVED_STATUSES)[number];

export function isMoneyReceived(status: string): status is MoneyReceivedStatus {
  return (MONEY_RECEIVED_STATUSES as readonly string[]).includes(status);
}
