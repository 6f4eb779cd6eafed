import { Type } from '@sinclair/typebox';

/** The spec's Payout object (amounts as JSON numbers: docs/decisions.md "Public clients"). */
export const PayoutSchema = Type.Object({
  id: Type.String(),
  status: Type.String({ enum: ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'] }),
  amount: Type.Number({ examples: [1500], description: 'Payout amount; a JSON number' }),
  commission: Type.Number({ examples: [15.5], description: 'Fees; a JSON number' }),
  account_identifier: Type.String({ description: 'Masked card (first 6, stars, last 4) or the +7 phone' }),
  currency: Type.String({ enum: ['RUB'] }),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
  error_message: Type.Union([Type.String(), Type.Null()], {
    description: 'Why a FAIL, ERROR or DECLINED payout failed; null for any other status', examples: [null],
  }),
});

export const PayoutListSchema = Type.Object({ data: Type.Array(PayoutSchema), success: Type.Boolean() });

export const PayoutStatusSchema = Type.Intersect([PayoutSchema, Type.Object({ success: Type.Boolean() })]);

/** Statuses of the create endpoints' keyed errors (spec: all 400 on payouts, merchant_banned too). */
export const CREATE_ERROR_STATUS: Record<string, number> = Object.fromEntries([
  'invalid_amount', 'merchant_banned', 'merchant_not_found', 'merchant_subscription_inactive',
  'merchant_subscription_not_found', 'payout_account_not_found', 'payout_account_banned',
  'daily_payout_limit_exceeded', 'monthly_payout_limit_exceeded', 'balance_not_enough',
  'direction_not_available', 'merchant_not_verified',
].map((k) => [k, 400]));

/** payout/status and payout/search: merchant keys 403, payout_not_found 422. */
export const READ_ERROR_STATUS: Record<string, number> = {
  merchant_banned: 403, merchant_not_found: 403, merchant_subscription_inactive: 403,
  merchant_subscription_not_found: 403, payout_not_found: 422,
};
