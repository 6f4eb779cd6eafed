import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { API_SCOPES } from '../../domain/api-key/api-key.scopes.js';
import { ROLES } from '../../domain/operator/roles.js';
import { TEAM_ROLES } from '../../domain/merchant/team-roles.js';
import { ROUTES } from '../../domain/providers/connector.js';
import { PAYOUT_TOKEN_ISSUERS } from '../../domain/providers/connectors/index.js';

/**
 * The operator API's answers (docs/adr/0072-operator-api-response-schemas.md): each route's
 * `response` schema, so /admin/docs types every answer and Fastify serializes through it. A
 * field missing here is dropped from the answer: test/api/operator-responses.test.ts compares
 * real answers with what the handlers returned.
 */

const Null = <T extends TSchema>(t: T, opts: Record<string, unknown> = {}) => Type.Union([t, Type.Null()], opts);
const At = (description = 'Y-m-d H:i:s, service time zone') => Type.String({ description, examples: ['2026-11-23 18:42:11'] });
const Iso = (description = 'ISO 8601, UTC') => Type.String({ description, examples: ['2026-11-23T15:42:11.000Z'] });
const Money8 = (description = '8 decimals') => Type.String({ description, examples: ['1500.50000000'] });
const Id = (examples: string[] = ['Zx8Wq2LmN4pR7tYv']) => Type.String({ examples });
const Currency = Type.String({ enum: ['RUB', 'USD', 'EUR'] });
/** Any JSON object (connector settings, event fields, what the provider last said). */
const FreeObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

/** `{success: true, ...props}`. */
export const ok = (props: TProperties, description: string) => Type.Object({ success: Type.Literal(true), ...props }, { description });
/** `{success: true, data: [item]}`. */
export const list = (item: TSchema, description: string) => ok({ data: Type.Array(item) }, description);
/** The same answer under each status a route may send it with (PUT: 201 created, 200 replaced). */
export const both = <T extends TSchema>(codes: number[], schema: T): Record<number, T> => Object.fromEntries(codes.map((c) => [c, schema]));

export const BalanceSchema = Type.Object({
  currency: Currency,
  balance_available: Money8(), balance_locked: Money8(), balance_hold: Money8(),
});

/** What a merchant's two-stage payments hold at the providers, per currency: not balance (docs/adr/0073). */
export const HeldSchema = Type.Array(Type.Object({
  currency: Currency,
  amount: Type.String({ description: 'Held on payers\' cards, not yet captured (2 decimals)', examples: ['1000.00'] }),
}), { description: 'Held by two-stage payments awaiting capture or cancel, per currency; not part of any balance' });

const FEE_KINDS = ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp'] as const;
const FeesSchema = Type.Object(Object.fromEntries(FEE_KINDS.flatMap((k) => [
  [`${k}_percent`, Type.String({ description: 'Effective: the merchant\'s own, else the operator\'s default', examples: ['2.5'] })],
  [`${k}_fixed`, Type.String({ examples: ['0.00'] })],
])));
const RoutingSchema = Type.Object(Object.fromEntries(ROUTES.map((r) => [r, Type.Array(Type.String(), { examples: [['yk-live', 'sandbox']] })])), {
  description: 'Connector names per route, in order (effective: unset routes follow the profile)',
});

export const MerchantSchema = Type.Object({
  id: Id(),
  name: Type.String({ examples: ['Coffee & Co'] }),
  email: Type.String({ examples: ['owner@shop.example'] }),
  status: Type.String({ enum: ['active', 'banned'] }),
  verified: Type.Boolean(),
  subscription: Type.String({ enum: ['active', 'inactive', 'none'] }),
  grants: Type.Object({ refunds: Type.Boolean(), regular_payouts: Type.Boolean() }),
  payout_daily_limit: Null(Money8(), { description: 'null: no limit' }),
  payout_monthly_limit: Null(Money8(), { description: 'null: no limit' }),
  moderation_threshold: Null(Money8(), { description: 'Payouts from this amount wait for an operator; null: none do' }),
  payout_max_card: Null(Money8()),
  payout_max_sbp: Null(Money8()),
  fees: FeesSchema,
  payout_webhook_url: Null(Type.String({ examples: ['https://shop.example/payouts/webhook'] })),
  api_ip_allowlist: Type.Array(Type.String(), { description: 'Empty: any address', examples: [['203.0.113.7', '198.51.100.0/24']] }),
  routing: RoutingSchema,
  has_password: Type.Boolean(),
  api_token_issued_at: At(),
  created_at: At(),
  updated_at: At(),
});

export const ShopSchema = Type.Object({
  id: Id(),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  name: Type.String({ examples: ['Coffee & Co online'] }),
  enabled: Type.Boolean(),
  default_currency: Currency,
  result_url: Null(Type.String({ examples: ['https://shop.example/payments/result'] })),
  success_url: Null(Type.String({ examples: ['https://shop.example/payments/success'] })),
  fail_url: Null(Type.String({ examples: ['https://shop.example/payments/fail'] })),
  fiscalization: Type.Object({
    enabled: Type.Boolean(),
    tax_system_code: Null(Type.Integer(), { examples: [1] }),
    vat_code: Null(Type.Integer(), { examples: [11] }),
    payment_subject: Type.String({ examples: ['commodity'] }),
    payment_mode: Type.String({ examples: ['full_payment'] }),
    ffd_version: Type.String({ enum: ['1.05', '1.2'], examples: ['1.2'] }),
  }),
  created_at: At(),
  updated_at: At(),
});

export const PayoutAccountSchema = Type.Object({
  id: Id(),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  type: Type.String({ enum: ['card', 'sbp'] }),
  status: Type.String({ enum: ['active', 'banned'] }),
  identifier_masked: Type.String({ examples: ['427600******4242'] }),
  token_provider: Null(Type.String({
    examples: PAYOUT_TOKEN_ISSUERS.slice(0, 1),
    description: 'Set when the card is known by a token its issuer gave (a connector kind that declares payout tokens): no card number is held for it',
  })),
  card_type: Null(Type.String({ examples: ['Visa'] })),
  card_issuer: Null(Type.String({ examples: ['Sberbank'] })),
  card_holder: Null(Type.String({ examples: ['IVAN PETROV'] })),
  bank_member_id: Null(Type.Integer({ examples: [100000000111] })),
  created_at: At(),
  updated_at: At(),
});

export const AdjustmentSchema = Type.Object({
  id: Id(),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  currency: Currency,
  amount: Money8('Signed, 8 decimals: positive credited, negative debited'),
  reason: Type.String({ examples: ['Refund of a duplicate charge, ticket 4411'] }),
  created_at: At(),
});

export const RateSchema = Type.Object({
  currency: Type.String({ enum: ['USD', 'EUR'] }),
  rub_per_unit: Type.String({ examples: ['92.5'] }),
  updated_at: At(),
});

export const SbpBankSchema = Type.Object({
  member_id: Type.Integer({ examples: [100000000111] }),
  name: Type.String({ examples: ['Сбербанк'] }),
  name_en: Type.String({ examples: ['Sberbank'] }),
  bic: Type.String({ examples: ['044525225'] }),
  active: Type.Boolean(),
});

export const ConnectorSchema = Type.Object({
  name: Type.String({ examples: ['yk-live'] }),
  kind: Type.String({ examples: ['yookassa'] }),
  mode: Type.String({ enum: ['live', 'test'] }),
  enabled: Type.Boolean(),
  settings: FreeObject('Settings; secrets masked'),
  health: Type.Optional(Type.Object({
    last_success_at: Null(At()),
    recent_calls: Type.Integer({ description: 'Calls in the last 15 minutes' }),
    recent_error_rate: Null(Type.Number({ examples: [0.05] }), { description: 'Errors / calls over the last 15 minutes; null without calls' }),
    last_error: Null(Type.String({ examples: ['connection_refused'] })),
  })),
  unknown_outcomes: Type.Optional(Type.Integer({ description: 'Operations waiting on this connector with an unknown outcome' })),
  created_at: At(),
  updated_at: At(),
});

export const AttemptSchema = Type.Object({
  attempted_at: Iso(),
  http_status: Null(Type.Integer({ examples: [200] })),
  latency_ms: Type.Integer({ examples: [84] }),
  error: Null(Type.String({ examples: ['timeout'] })),
  response_head: Null(Type.String({ examples: ['OK'] })),
  url: Null(Type.String({ examples: ['https://shop.example/payments/result'] })),
});

export const EventSchema = Type.Object({
  id: Type.String({ examples: ['1042'] }),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  kind: Type.String({ enum: ['PAYMENT_POSTBACK', 'PAYOUT_WEBHOOK', 'TEST_POSTBACK', 'REFUND_POSTBACK', 'CHARGEBACK_POSTBACK'] }),
  aggregate_id: Id(),
  trs_id: Null(Type.String({ examples: ['Qm7Tz2Vb9KcX4wEr'] })),
  url: Null(Type.String({ examples: ['https://shop.example/payments/result'] })),
  status: Type.String({ enum: ['pending', 'delivered', 'dead'] }),
  attempt_count: Type.Integer(),
  next_attempt_at: Null(Iso()),
  last_error: Null(Type.String({ examples: ['HTTP 500'] })),
  created_at: Iso(),
  delivered_at: Null(Iso()),
  fields: FreeObject('The fields posted (form fields, signed)'),
  attempts: Type.Array(AttemptSchema),
});

export const AdminPayoutSchema = Type.Object({
  id: Id(),
  status: Type.String({ enum: ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'] }),
  amount: Money8(),
  commission: Money8(),
  account_identifier: Type.String({ examples: ['427600******4242'] }),
  currency: Currency,
  created_at: At(),
  error_message: Null(Type.String({ examples: ['declined by the operator'] }), { description: 'Why a FAIL, ERROR or DECLINED payout failed' }),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  order_id: Null(Type.String({ examples: ['payout-771'] })),
  kind: Type.String({ enum: ['PERSONAL', 'REGULAR'] }),
  account_type: Type.String({ enum: ['CARD', 'SBP'] }),
  request_id: Id(),
});

export const OperatorSchema = Type.Object({
  id: Id(),
  email: Type.String({ examples: ['support@pay.example'] }),
  role: Type.String({ enum: [...ROLES] }),
  status: Type.String({ enum: ['active', 'disabled'] }),
  has_password: Type.Boolean(),
  totp_enabled: Type.Boolean(),
  created_at: At(),
});

export const OperatorTokenSchema = Type.Object({
  id: Id(),
  name: Type.String({ examples: ['api'] }),
  created_at: At(),
  last_used_at: Null(At()),
  revoked_at: Null(At()),
});

export const TeamMemberSchema = Type.Object({
  id: Id(),
  email: Type.String({ examples: ['accountant@shop.example'] }),
  role: Type.String({ enum: [...TEAM_ROLES] }),
  state: Type.String({ enum: ['invited', 'active'] }),
  two_factor: Type.Boolean(),
  created_at: At(),
});

export const AuditEntrySchema = Type.Object({
  id: Type.String({ examples: ['5120'] }),
  at: Iso(),
  actor: Type.String({ description: 'The person: an email, admin-token, cli:<os user>', examples: ['support@pay.example'] }),
  actor_id: Type.String({ description: 'The key: operator:<id>, merchant:<id>, merchant-user:<id>, ...', examples: ['operator:Op3Kz8Lm2Qx'] }),
  action: Type.String({ examples: ['merchant.update'] }),
  object_type: Type.String({ examples: ['merchant'] }),
  object_id: Id(),
  object_name: Null(Type.String({ examples: ['owner@shop.example'] }), { description: 'The object\'s email when it is an account' }),
  before: Type.Unknown({ description: 'The fields before (null on a creation)', examples: [{ status: 'active' }] }),
  after: Type.Unknown({ description: 'The fields after (null on a removal)', examples: [{ status: 'banned' }] }),
  ip: Null(Type.String({ examples: ['203.0.113.10'] })),
});

export const AttentionSchema = Type.Object({
  id: Id(),
  object_type: Type.String({ enum: ['payment', 'refund', 'payout'] }),
  object_id: Id(),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  connector: Type.String({ examples: ['yk-live'] }),
  provider_ref: Null(Type.String({ examples: ['2d7b5b5e-000f-5000-9000-1b6f3c1a2b3c'] })),
  kind: Type.String({ enum: ['unknown_outcome', 'conflict', 'receipt_failed'] }),
  reason: Type.String({ examples: ['reconciliation gave up after 24 h'] }),
  last_heard: FreeObject('What the provider last said'),
  created_at: Iso(),
  resolved_at: Null(Iso()),
  resolution: Null(Type.String({ examples: ['SUCCESS'] })),
  note: Null(Type.String({ examples: ['Confirmed with the acquirer by phone'] })),
  resolved_by: Null(Type.String({ examples: ['operator'] })),
});

export const ApiKeySchema = Type.Object({
  id: Id(),
  merchant_id: Id(['Mr5Tq8Wz2Lp']),
  name: Type.String({ examples: ['accounting export'] }),
  scopes: Type.Array(Type.String({ enum: [...API_SCOPES] })),
  token_last4: Type.String({ examples: ['x9Qa'] }),
  created_by: Type.String({ examples: ['operator:Op3Kz8Lm2Qx'] }),
  created_at: Null(At()),
  last_used_at: Null(At()),
  revoked_at: Null(At()),
});

/** A go-live rehearsal's step (docs/adr/0104-connector-rehearsals.md). */
const RehearsalStepSchema = Type.Object({
  name: Type.String({ examples: ['refund'] }),
  status: Type.String({ enum: ['passed', 'failed', 'skipped'] }),
  detail: Type.String({ examples: ['partial refund of 30.00 succeeded; provider says PARTIAL_REFUNDED, GetState Amount 70.00 (what is left after refunds)'] }),
  raw: Type.Unknown({ description: 'The provider\'s answers as the connector read them, secrets masked', examples: [{ created: { status: 'action', ref: '3000602995' } }] }),
});

/** A rehearsal without its steps (the list), with its counts. */
export const RehearsalSummarySchema = Type.Object({
  id: Id(['k3Jd9QmW2x']),
  connector: Type.String({ examples: ['tb-test'] }),
  kind: Type.String({ examples: ['tbank'] }),
  status: Type.String({ enum: ['running', 'passed', 'failed'] }),
  shop_id: Null(Type.String({ examples: ['Z54JKcF8zaFTsTb7'] })),
  public_url: Null(Type.String({ examples: ['https://pay.example'] })),
  passed: Type.Integer(), failed: Type.Integer(), skipped: Type.Integer(),
  started_at: Iso(),
  finished_at: Null(Iso(), { description: 'null while running' }),
  findings: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean()]), {
    description: 'Each question the provider\'s documents leave open for this kind (getstate_amount_after_refund: left | paid; charge_enabled: true | false), as this run answered it, or "open" (docs/adr/0135)',
    examples: [{ getstate_amount_after_refund: 'left', charge_enabled: 'open' }],
  }),
});

export const RehearsalSchema = Type.Object({ ...RehearsalSummarySchema.properties, steps: Type.Array(RehearsalStepSchema) });
