/**
 * What the service posts to the merchant (spec part 6), as OpenAPI 3.1 `webhooks`: form-encoded
 * fields, signed with SignatureValue, answered 200 by the receiver (anything else is retried).
 */
const str = (description: string, example: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, example, ...extra });

const RECEIVER_ANSWERS = {
  200: { description: 'Received. Any other status (or no answer in time) is retried, 14 times over about 24 hours, then the event is DEAD and can be redelivered from the cabinet.' },
};

export const WEBHOOKS = {
  paymentPostback: {
    post: {
      summary: 'Payment postback (to the shop\'s Result URL)',
      // Posted by the service to you: signed (SignatureValue), with no bearer token.
      security: [],
      description: 'Sent once a payment is final. Mark the order paid on SUCCESS (or OVERPAID), failed on FAIL. Check SignatureValue before trusting it.',
      tags: ['Events'],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              required: ['InvId', 'OutSum', 'Commission', 'Currency', 'CurrencyIn', 'TrsId', 'Status', 'SignatureValue'],
              properties: {
                InvId: str('order_id sent at bill creation', 'order-1042'),
                OutSum: str('Payment amount (2 decimals)', '1500.50'),
                Commission: str('Transaction fee (2 decimals)', '52.52'),
                Currency: str('Currency of the bill', 'RUB', { enum: ['RUB', 'USD', 'EUR'] }),
                CurrencyIn: str('Currency the payer paid in', 'RUB', { enum: ['RUB'] }),
                TrsId: str('Unique payment id', 'Qm7Tz2Vb9KcX4wEr'),
                Status: str('Payment status', 'SUCCESS', { enum: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'] }),
                custom: str('Value sent in custom at bill creation', 'cart=7781'),
                ErrorCode: str('Why a FAIL payment failed (as error_code in payment/status)', 'insufficient_funds'),
                ErrorMessage: str('The reason in words', 'Not enough money on the payer\'s card: the issuer declined the payment for insufficient funds.'),
                SignatureValue: str('Uppercase hex MD5 of OutSum:InvId:<API token>', '3F0B6A1C0E2D9A8B7C6D5E4F3A2B1C0D'),
              },
            },
            example: {
              InvId: 'order-1042', OutSum: '1500.50', Commission: '52.52', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: 'Qm7Tz2Vb9KcX4wEr',
              Status: 'SUCCESS', custom: 'cart=7781', SignatureValue: '3F0B6A1C0E2D9A8B7C6D5E4F3A2B1C0D',
            },
          },
        },
      },
      responses: RECEIVER_ANSWERS,
    },
  },
  payoutWebhook: {
    post: {
      summary: 'Payout webhook (to the merchant\'s payout webhook URL)',
      security: [],
      description: 'Sent once a payout is final (an ERROR is sent as FAIL). Amounts carry 8 decimals, exactly the strings signed.',
      tags: ['Events'],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              required: ['TrsId', 'Amount', 'Status', 'Currency', 'SignatureValue'],
              properties: {
                TrsId: str('Unique payout id', 'Po4Kx9Tz2Wq'),
                Amount: str('Payout amount (8 decimals)', '2500.00000000'),
                IsAuto: str('Created automatically', 'false', { enum: ['true', 'false'] }),
                Status: str('Payout status', 'SUCCESS', { enum: ['DECLINED', 'SUCCESS', 'FAIL'] }),
                Currency: str('Currency', 'RUB', { enum: ['USD', 'RUB', 'EUR', 'USDT'] }),
                Commission: str('Fees (8 decimals)', '25.00000000'),
                AccountType: str('Account type', 'SBP', { enum: ['BANK_CARD', 'SBP', 'QIWI'] }),
                AccountNumber: str('Masked card number or phone number', '7916***4567'),
                BalanceAmount: str('Amount debited from the balance', '2500.00000000'),
                BalanceCommission: str('Fees in balance currency', '25.00000000'),
                BalanceCurrency: str('Balance currency', 'RUB', { enum: ['USD', 'RUB', 'EUR'] }),
                CommissionApplyType: str('Who paid the fees', 'sender', { enum: ['sender', 'recipient'] }),
                SignatureValue: str('Uppercase hex MD5 of Amount:TrsId:<API token>', 'A1B2C3D4E5F60718293A4B5C6D7E8F90'),
              },
            },
            example: {
              TrsId: 'Po4Kx9Tz2Wq', Amount: '2500.00000000', IsAuto: 'false', Status: 'SUCCESS', Currency: 'RUB', Commission: '25.00000000',
              AccountType: 'SBP', AccountNumber: '7916***4567', BalanceAmount: '2500.00000000', BalanceCommission: '25.00000000',
              BalanceCurrency: 'RUB', CommissionApplyType: 'sender', SignatureValue: 'A1B2C3D4E5F60718293A4B5C6D7E8F90',
            },
          },
        },
      },
      responses: RECEIVER_ANSWERS,
    },
  },
};
