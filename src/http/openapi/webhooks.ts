import { md5Upper } from '../../lib/crypto.js';

/**
 * What the service posts to the merchant (spec part 6 and the twins' extra events), as OpenAPI
 * 3.1 `webhooks`: one per kind of event, each with its form fields (which are always posted, which
 * only when known), its signature recipe in words and as `x-signature` (the fields joined by `:`,
 * the API token last, MD5, uppercase hex), and an example signed with that recipe.
 */
type Field = { description: string; example: string; enum?: string[]; required?: boolean };

/** The token the examples are signed with, so a reader can check the recipe on them. */
export const EXAMPLE_TOKEN = 'example-api-token';

const TOKEN_WORDS = 'your API token (the test token for objects made with it)';

/** How SignatureValue is computed: uppercase hex MD5 of `fields` joined by `:`, then `:` and the token. */
export interface SignatureRecipe { field: 'SignatureValue'; algorithm: 'MD5'; output: 'uppercase hex'; separator: ':'; fields: string[]; last: string }

export const signWithRecipe = (recipe: Pick<SignatureRecipe, 'fields'>, values: Record<string, string>, token: string): string =>
  md5Upper([...recipe.fields.map((f) => values[f] ?? ''), token].join(':'));

const RECEIVER_ANSWERS = {
  '2XX': { description: 'Received: any 2xx marks the event delivered; the body is not read.' },
  default: {
    description: 'Not received. A 5xx, 408, 425 or 429, a refused connection or no answer within 10 seconds is retried with a growing delay ' +
      '(1 minute doubling to 4 hours, then every 4 hours: 14 attempts over about 24 hours); any other answer (a redirect, which is not followed, ' +
      'or another 4xx) is tried 3 times in all. Then the event is dead: it is sent again when you redeliver it from the cabinet\'s webhooks page ' +
      '(or the operator does). Delivery is at least once: the same event may arrive more than once, so dedupe by its id.',
  },
};

const PAYMENT_FIELDS: Record<string, Field> = {
  InvId: { description: 'order_id sent at bill creation (empty when none was sent)', example: 'order-1042', required: true },
  OutSum: { description: 'Payment amount, 2 decimals (what a partial capture captured)', example: '1500.50', required: true },
  Commission: { description: 'Transaction fee, 2 decimals', example: '52.52', required: true },
  Currency: { description: 'Currency of the bill', example: 'RUB', enum: ['RUB', 'USD', 'EUR'], required: true },
  CurrencyIn: { description: 'Currency the payer paid in (always RUB)', example: 'RUB', enum: ['RUB'], required: true },
  TrsId: { description: 'Unique payment id: dedupe by it', example: 'Qm7Tz2Vb9KcX4wEr', required: true },
  Status: { description: 'Payment status: mark the order paid on SUCCESS or OVERPAID, failed on FAIL', example: 'SUCCESS', enum: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'], required: true },
  custom: { description: 'Value sent in custom at bill creation (an object as its JSON text; empty when none)', example: 'cart=7781', required: true },
  AccountType: { description: 'How the payer paid', example: 'BANK_CARD', enum: ['BANK_CARD', 'SBP'] },
  AccountNumber: { description: 'Masked card (first 6 and last 4 digits), or the payer\'s phone for SBP', example: '424242******4242' },
  BalanceAmount: { description: 'What your balance was credited, 8 decimals (0 for FAIL)', example: '1447.98000000' },
  BalanceCurrency: { description: 'Currency of your balance credited', example: 'RUB', enum: ['RUB', 'USD', 'EUR'] },
  PayerPhone: { description: 'The payer\'s phone, when the page asked for it (request_fields)', example: '+79161234567' },
  PayerEmail: { description: 'The payer\'s e-mail, when given', example: 'buyer@example.com' },
  PayerName: { description: 'The payer\'s name, when the page asked for it', example: 'Anna Petrova' },
  PayerComment: { description: 'The payer\'s comment, when the page asked for it', example: 'Please gift-wrap' },
  ErrorCode: { description: 'FAIL only: why (as error_code in payment/status)', example: 'insufficient_funds' },
  ErrorMessage: { description: 'FAIL only: the reason in words', example: 'Not enough money on the payer\'s card: the issuer declined the payment for insufficient funds.' },
  PaymentMethodId: { description: 'The saved card\'s id, when this payment saved the payer\'s card (for payment/charge)', example: 'Zq3LmN8pR2sT5vW7' },
};

const REFUND_CHARGEBACK_FIELDS: Record<string, Field> = {
  Id: { description: 'Unique id of this refund or chargeback: dedupe by it', example: 'Rf5Tk8Lm2Qx', required: true },
  PaymentId: { description: 'The payment it takes money back from (TrsId of its payment postback)', example: 'Qm7Tz2Vb9KcX4wEr', required: true },
  BillId: { description: 'The bill of that payment', example: 'kD3vPq8Rz1', required: true },
  InvId: { description: 'order_id of that bill (empty when none was sent)', example: 'order-1042', required: true },
  Amount: { description: 'Amount taken back, 2 decimals', example: '250.75', required: true },
  Currency: { description: 'Currency of the amount', example: 'RUB', enum: ['RUB', 'USD', 'EUR'], required: true },
};

const PAYOUT_FIELDS: Record<string, Field> = {
  TrsId: { description: 'Unique payout id: dedupe by it', example: 'Po4Kx9Tz2Wq', required: true },
  Amount: { description: 'Payout amount, 8 decimals: exactly the string signed', example: '2500.00000000', required: true },
  IsAuto: { description: 'Created automatically', example: 'false', enum: ['true', 'false'], required: true },
  Status: { description: 'Payout status (an ERROR is sent as FAIL)', example: 'SUCCESS', enum: ['DECLINED', 'SUCCESS', 'FAIL'], required: true },
  Currency: { description: 'Currency', example: 'RUB', enum: ['USD', 'RUB', 'EUR', 'USDT'], required: true },
  Commission: { description: 'Fees, 8 decimals', example: '25.00000000', required: true },
  AccountType: { description: 'Account type (the spec\'s QIWI is never sent)', example: 'SBP', enum: ['BANK_CARD', 'SBP'], required: true },
  AccountNumber: { description: 'Masked card number, or the phone number for SBP', example: '+79161234567', required: true },
  BalanceAmount: { description: 'Amount debited from the balance, 8 decimals', example: '2500.00000000', required: true },
  BalanceCommission: { description: 'Fees in balance currency, 8 decimals', example: '25.00000000', required: true },
  BalanceCurrency: { description: 'Balance currency', example: 'RUB', enum: ['USD', 'RUB', 'EUR'], required: true },
  CommissionApplyType: { description: 'Who paid the fees', example: 'sender', enum: ['sender', 'recipient'], required: true },
};

interface Kind {
  /** The event's kind as the cabinet's and the operator's event lists name it. */
  kind: string;
  summary: string;
  description: string;
  fields: Record<string, Field>;
  signed: string[];
  /** Example values beyond each field's own. */
  example?: Record<string, string>;
  /** Fields left out of the example (optional ones that do not go with it). */
  omit?: string[];
}

function webhook(k: Kind): Record<string, unknown> {
  const recipe: SignatureRecipe = { field: 'SignatureValue', algorithm: 'MD5', output: 'uppercase hex', separator: ':', fields: k.signed, last: 'API token' };
  const formula = `upper(md5(${[...k.signed, 'token'].join(' + ":" + ')}))`;
  const properties: Record<string, unknown> = {};
  const values: Record<string, string> = {};
  for (const [name, f] of Object.entries(k.fields)) {
    properties[name] = { type: 'string', description: f.description, example: f.example, ...(f.enum ? { enum: f.enum } : {}) };
    if (!k.omit?.includes(name)) values[name] = k.example?.[name] ?? f.example;
  }
  properties.SignatureValue = {
    type: 'string', pattern: '^[0-9A-F]{32}$',
    description: `Uppercase hex MD5 of ${k.signed.join(':')}:<token>, where <token> is ${TOKEN_WORDS}: ${formula}. Compute it over the strings exactly as posted and compare before trusting anything else.`,
  };
  const example = { ...values, SignatureValue: signWithRecipe(recipe, values, EXAMPLE_TOKEN) };
  (properties.SignatureValue as Record<string, unknown>).example = example.SignatureValue;
  const required = [...Object.entries(k.fields).filter(([, f]) => f.required).map(([n]) => n), 'SignatureValue'];
  return {
    post: {
      summary: k.summary,
      // Posted by the service to you: signed (SignatureValue), with no bearer token.
      security: [],
      'x-event-kind': k.kind,
      'x-signature': recipe,
      description: `${k.description}\n\n` +
        `**Signature:** \`SignatureValue = ${formula}\`, \`token\` being ${TOKEN_WORDS}. ` +
        `The example is signed with the token \`${EXAMPLE_TOKEN}\`.\n\n` +
        '`POST`, `application/x-www-form-urlencoded`, UTF-8. Fields without a value for this event are not posted (the signed ones always are, ' +
        'empty when they have no value); fields may be added later, so ignore the ones you do not know. ' +
        'Signed at send time with the token current then: after you refresh the token, retries of older events are signed with the new one.',
      tags: ['Events'],
      requestBody: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required, properties }, example } },
      },
      responses: RECEIVER_ANSWERS,
    },
  };
}

export const WEBHOOKS = {
  paymentPostback: webhook({
    kind: 'PAYMENT_POSTBACK',
    summary: 'Payment postback (to the shop\'s Result URL)',
    description: 'Sent to the shop\'s Result URL once a payment is final. Mark the order paid on SUCCESS (or OVERPAID), failed on FAIL. ' +
      'A held two-stage payment is final when it is captured (SUCCESS, OutSum what was captured) or cancelled (FAIL).',
    fields: PAYMENT_FIELDS,
    signed: ['OutSum', 'InvId'],
    omit: ['ErrorCode', 'ErrorMessage', 'PaymentMethodId', 'PayerPhone', 'PayerName', 'PayerComment'],
  }),
  refundPostback: webhook({
    kind: 'REFUND_POSTBACK',
    summary: 'Refund postback (to the shop\'s Result URL)',
    description: 'Sent to the same Result URL as payment postbacks when a refund is final: SUCCESS (the money went back to the payer) or FAIL ' +
      '(it did not). Tell it from a payment postback by `PaymentId` and `Id` (a payment postback has `TrsId`), ' +
      'and check it with its own signature.',
    fields: { ...REFUND_CHARGEBACK_FIELDS, Status: { description: 'Refund status', example: 'SUCCESS', enum: ['SUCCESS', 'FAIL'], required: true } },
    signed: ['Amount', 'Currency', 'BillId', 'PaymentId', 'Id'],
  }),
  chargebackPostback: webhook({
    kind: 'CHARGEBACK_POSTBACK',
    summary: 'Chargeback postback (to the shop\'s Result URL)',
    description: 'Sent to the same Result URL as payment postbacks when the operator records a chargeback against one of your payments ' +
      '(the payer\'s bank took the money back; it has left your available balance). Status is always CHARGEBACK; its signature covers no amount.',
    fields: {
      ...REFUND_CHARGEBACK_FIELDS,
      Id: { ...REFUND_CHARGEBACK_FIELDS.Id!, example: 'Cb2Wn7Rq4Zs' },
      Reason: { description: 'Why, as the operator recorded it', example: 'fraud: card not present', required: true },
      Status: { description: 'Always CHARGEBACK', example: 'CHARGEBACK', enum: ['CHARGEBACK'], required: true },
    },
    signed: ['BillId', 'PaymentId', 'Id'],
    example: { Amount: '1500.50' },
  }),
  payoutWebhook: webhook({
    kind: 'PAYOUT_WEBHOOK',
    summary: 'Payout webhook (to the merchant\'s payout webhook URL)',
    description: 'Sent to your payout webhook URL (cabinet: Webhooks) once a payout is final. Amounts carry 8 decimals, exactly the strings signed.',
    fields: PAYOUT_FIELDS,
    signed: ['Amount', 'TrsId'],
  }),
  testPostback: webhook({
    kind: 'TEST_POSTBACK',
    summary: 'Test postback (to the shop\'s Result URL, on request)',
    description: 'Sent once, at once and without retries, when you press "Send test postback" on a shop in the cabinet (or the operator does): ' +
      'a payment postback with sample values about no payment (`InvId` is `test`, `TrsId` starts with `test-`), signed like every payment postback. ' +
      'Answer it 2xx as you would a real one, and change nothing for it.',
    fields: PAYMENT_FIELDS,
    signed: ['OutSum', 'InvId'],
    example: { InvId: 'test', OutSum: '100.00', Commission: '0.00', TrsId: 'test-Qm7Tz2Vb9KcX4wEr', custom: 'test postback' },
    omit: ['AccountType', 'AccountNumber', 'BalanceAmount', 'BalanceCurrency', 'PayerPhone', 'PayerEmail', 'PayerName', 'PayerComment', 'ErrorCode', 'ErrorMessage', 'PaymentMethodId'],
  }),
};
