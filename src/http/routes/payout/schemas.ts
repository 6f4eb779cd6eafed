import { Type } from '@sinclair/typebox';
import type { ErrorStatusMap } from '../../../errors.js';

/** The spec's Payout object (amounts as JSON numbers: docs/adr/0001-money-as-decimal-and-wire-amounts.md). */
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

/** The create endpoints answer every keyed error 400 (spec), the merchant's state too (usually 403). */
export const CREATE_ERROR_STATUS: ErrorStatusMap = {
  merchant_banned: 400, merchant_not_found: 400, merchant_subscription_inactive: 400, merchant_subscription_not_found: 400,
};
