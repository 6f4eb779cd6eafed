import { ERROR_BODY, ERROR_MEANINGS, IDEMPOTENCY_IN_PROGRESS, MERCHANT_ERRORS, OPERATOR_EXTRA_ERRORS, errorResponses, type ErrorList } from './errors.js';
import { idempotencyHeader, IDEMPOTENCY_REPLAY_HEADERS } from './idempotency.js';
import { REQUEST_EXAMPLES } from './examples.js';
import { WEBHOOKS } from './webhooks.js';

/**
 * The two documents cut from what @fastify/swagger collects from the route schemas
 * (docs/adr/0068-two-openapi-documents.md): the merchants' (`/docs`, `/docs/json`: the merchant
 * API, the `/pay` JSON API, health, readiness, metrics and the webhooks) and the operators'
 * (`/admin/docs`, `/admin/docs/json`: the operator API). OpenAPI 3.1; each operation lists its
 * error responses with their keys and example bodies, and carries a real request example.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** 3.0's `nullable: true` as 3.1 writes it (a `null` type), everywhere in a schema tree. */
function to31(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(to31);
  if (!node || typeof node !== 'object') return node;
  const o: Json = {};
  for (const [k, v] of Object.entries(node as Json)) o[k] = to31(v);
  if (o.nullable === true) {
    delete o.nullable;
    if (typeof o.type === 'string') o.type = [o.type, 'null'];
    else if (Array.isArray(o.anyOf)) o.anyOf = [...o.anyOf, { type: 'null' }];
    if (Array.isArray(o.enum) && !o.enum.includes(null)) o.enum = [...o.enum, null];
  }
  return o;
}

const ID = 'Zx8Wq2LmN4pR7tYv';
/** An example value for a field nobody gave one for, from its schema and its name. */
export function exampleOf(schema: Json | undefined, name = ''): unknown {
  if (!schema) return ID;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum.find((x: unknown) => x !== null);
  if (Array.isArray(schema.anyOf)) return exampleOf(schema.anyOf.find((s: Json) => s.type !== 'null'), name);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: Json) => exampleOf(s, name)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  const n = name.toLowerCase();
  if (type === 'object' || schema.properties) {
    const out: Json = {};
    for (const [k, v] of Object.entries((schema.properties ?? {}) as Json)) out[k] = exampleOf(v, k);
    return out;
  }
  if (type === 'array') return [exampleOf(schema.items, name.replace(/s$/, ''))];
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') {
    if (/limit|per_page/.test(n)) return 50;
    if (/percent/.test(n)) return 2.5;
    if (/amount|fixed|max|threshold/.test(n)) return 1000;
    return 1;
  }
  if (n === 'success') return 'true';
  if (/^(payment|payout)_(card|sbp)$/.test(n) || n === 'connector') return 'sandbox';
  if (n === 'actor') return 'support@pay.example';
  if (n === 'action') return 'merchant.update';
  if (n === 'outcome') return 'SUCCESS';
  if (n === 'note') return 'Confirmed with the acquirer by phone';
  if (/email/.test(n)) return 'owner@shop.example';
  if (/url/.test(n)) return 'https://shop.example/payments/result';
  if (/cursor/.test(n)) return 'eyJpZCI6IjFKYTk3WmNuVVh5ZkpuOWwifQ';
  if (n === 'next' || n === 'prev' || n === 'path') return `https://pay.example/api/v1/bill/search${n === 'path' ? '' : '?cursor=eyJpZCI6IjFKYTk3WmNuVVh5ZkpuOWwifQ'}`;
  if (/holder/.test(n)) return 'IVAN PETROV';
  if (/card|identifier|masked/.test(n)) return '424242******4242';
  if (/bank/.test(n)) return 'Sberbank';
  if (/^balance_/.test(n)) return '1500.50000000';
  if (/_at$/.test(n)) return '2026-11-30 14:05:09';
  if (/date/.test(n)) return '2026-11-30';
  if (/amount|fixed|percent|limit|max|threshold|rate|rub_per_unit/.test(n)) return '1000.00';
  if (/currency/.test(n)) return 'RUB';
  if (/password/.test(n)) return 'correct horse battery staple';
  if (/reason|memo|comment/.test(n)) return 'Refund of a duplicate charge, ticket 4411';
  if (/name/.test(n)) return 'Coffee & Co';
  if (/status/.test(n)) return 'active';
  if (/role/.test(n)) return 'support';
  if (/ip|cidr/.test(n)) return '203.0.113.10';
  if (/code/.test(n)) return '123456';
  if (n === 'before_id') return '1037';
  if (/id$|^id|_id/.test(n)) return ID;
  return `${name || 'value'} example`;
}

/** Gives every parameter and request body of `op` an example (the given one, else from its schema). */
function addRequestExamples(op: Json, given?: { body?: Json; query?: Json }): void {
  for (const p of op.parameters ?? []) {
    if (p.example !== undefined) continue;
    p.example = given?.query?.[p.name] ?? exampleOf(p.schema, p.name);
  }
  for (const media of Object.values((op.requestBody?.content ?? {}) as Json)) {
    if (media.example !== undefined) continue;
    media.example = given?.body ?? exampleOf(media.schema);
  }
}

/**
 * A 2xx answer as a reader sees it: a description (never the generator's "Default Response") and
 * an example built from its schema's own examples, so Swagger UI shows no `"string"`.
 */
function describeSuccess(op: Json): void {
  for (const [status, r] of Object.entries((op.responses ?? {}) as Json)) {
    if (!status.startsWith('2')) continue;
    if (!r.description || r.description === 'Default Response') r.description = 'Success';
    for (const media of Object.values((r.content ?? {}) as Json)) {
      if (media.example === undefined && media.examples === undefined && media.schema) media.example = exampleOf(media.schema);
    }
  }
}

function operations(paths: Json): [string, string, Json][] {
  const out: [string, string, Json][] = [];
  for (const [path, item] of Object.entries(paths)) for (const m of METHODS) if (item[m]) out.push([path, m, item[m]]);
  return out;
}

const ERROR_COMPONENT = { Error: ERROR_BODY };
const COMMON_MERCHANT: ErrorList = { 401: ['Unauthenticated.'], 429: ['Too Many Attempts.'] };

/** Hand-written paths of routes whose schemas are hidden from the generator (pages, probes). */
const EXTRA_MERCHANT_PATHS: Json = {
  '/pay/{bill_id}': {
    post: {
      tags: ['Payment page (JSON)'], summary: 'Pay a bill from your own checkout (JSON mode)',
      description: 'With `Accept: application/json` (or a JSON body) the payment page answers JSON: `{payment_id, status, redirect}` once final, or `{payment_id, status: "PROCESS", action}` while the payer must act (a redirect, a 3-D Secure page, an SBP QR code). Card fields only for the sandbox; a provider that hosts its own card form gets a `redirect` action.',
      security: [],
      parameters: [{ name: 'bill_id', in: 'path', required: true, schema: { type: 'string' }, example: 'kD3vPq8Rz1' }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object', required: ['method'],
              properties: {
                method: { type: 'string', enum: ['BANK_CARD', 'SBP'] }, card_number: { type: 'string' }, card_expiry: { type: 'string', description: 'MM/YY' },
                card_cvc: { type: 'string' }, payer_email: { type: 'string' }, payer_phone: { type: 'string' },
              },
            },
            example: { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/30', card_cvc: '123', payer_email: 'buyer@example.com' },
          },
        },
      },
      responses: {
        200: {
          description: 'The payment: final with its redirect, or PROCESS with what the payer must do',
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/PayState' },
              examples: {
                final: { value: { payment_id: 'Qm7Tz2Vb9KcX4wEr', status: 'SUCCESS', redirect: { url: 'https://shop.example/success', method: 'POST', fields: { InvId: 'order-1042', OutSum: '1500.50', CurrencyIn: 'RUB', custom: 'cart=7781', SignatureValue: '3F0B6A1C0E2D9A8B7C6D5E4F3A2B1C0D' } } } },
                action: { value: { payment_id: 'Qm7Tz2Vb9KcX4wEr', status: 'PROCESS', action: { type: '3ds', url: '/sandbox/3ds/Qm7Tz2Vb9KcX4wEr' } } },
              },
            },
          },
        },
      },
    },
  },
  '/pay/{bill_id}/payments/{payment_id}': {
    get: {
      tags: ['Payment page (JSON)'], summary: 'Poll a payment started on the payment page (JSON mode)',
      security: [],
      parameters: [
        { name: 'bill_id', in: 'path', required: true, schema: { type: 'string' }, example: 'kD3vPq8Rz1' },
        { name: 'payment_id', in: 'path', required: true, schema: { type: 'string' }, example: 'Qm7Tz2Vb9KcX4wEr' },
        { name: 'Accept', in: 'header', required: true, schema: { type: 'string', enum: ['application/json'] }, example: 'application/json' },
      ],
      responses: {
        200: {
          description: '`{payment_id, status, action?}` while PROCESS, `{payment_id, status, redirect}` once final',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PayState' }, example: { payment_id: 'Qm7Tz2Vb9KcX4wEr', status: 'PROCESS', action: { type: 'sbp_qr', payload: 'https://qr.nspk.ru/AS1000670LSS7DN18SJQDNP4B05KLJL2', links: [] } } } },
        },
      },
    },
  },
  '/health': {
    get: {
      tags: ['Service'], summary: 'Liveness: the process answers', security: [],
      responses: { 200: { description: 'Up', content: { 'application/json': { schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] }, profile: { type: 'string', enum: ['sandbox', 'production'] } } }, example: { status: 'ok', profile: 'production' } } } } },
    },
  },
  '/ready': {
    get: {
      tags: ['Service'], summary: 'Readiness: the database answers and its migrations are current', security: [],
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: { $ref: '#/components/schemas/Ready' }, example: { status: 'ready', profile: 'production' } } } },
        503: { description: 'Not ready (migrations pending or the database unreachable)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Ready' }, example: { status: 'not ready', profile: 'production' } } } },
      },
    },
  },
  '/metrics': {
    get: {
      tags: ['Service'], summary: 'Prometheus metrics (the operator token: ADMIN_API_TOKEN)',
      responses: {
        200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' }, example: '# TYPE http_requests_total counter\nhttp_requests_total{method="POST",route="/api/v1/bill/create",status="200"} 1042\n' } } },
        401: { description: '`Unauthenticated.`: missing or wrong operator token (ADMIN_API_TOKEN); the merchant API token does not open it.', 'x-error-keys': ['Unauthenticated.'], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: { 'Unauthenticated.': { value: { success: false, message: 'Unauthenticated.' } } } } } },
      },
    },
  },
};

const PAY_STATE = {
  type: 'object', required: ['payment_id', 'status'],
  properties: {
    payment_id: { type: 'string' }, status: { type: 'string', enum: ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] },
    action: { type: 'object', properties: { type: { type: 'string', enum: ['redirect', '3ds', 'sbp_qr'] }, url: { type: 'string' }, payload: { type: 'string' }, links: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, url: { type: 'string' } } } } } },
    redirect: { type: 'object', properties: { url: { type: ['string', 'null'] }, method: { type: 'string', enum: ['POST'] }, fields: { type: 'object', additionalProperties: { type: 'string' } } } },
  },
};
const READY = { type: 'object', properties: { status: { type: 'string', enum: ['ready', 'not ready'] }, profile: { type: 'string', enum: ['sandbox', 'production'] } } };

/** Every message a merchant can be answered with, each with its meaning: the one list of them. */
const ERROR_KEY = {
  type: 'string',
  description: 'The `message` of an error answer: a key (`api:error.*`) or the spec\'s words. One entry per message, with what it means.',
  oneOf: Object.entries(ERROR_MEANINGS).map(([key, meaning]) => ({ const: key, description: meaning })),
};

/** The merchants' document: what a merchant integrates from. */
export function merchantDocument(full: Json, settings: { idempotencyTtlHours?: number } = {}): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries(full.paths ?? {})) if (path.startsWith('/api/v1/')) paths[path] = item;
  Object.assign(paths, JSON.parse(JSON.stringify(EXTRA_MERCHANT_PATHS)));
  for (const [path, method, op] of operations(paths)) {
    const key = `${method} ${path}`;
    addRequestExamples(op, REQUEST_EXAMPLES[key]);
    describeSuccess(op);
    if (!path.startsWith('/health') && !path.startsWith('/ready') && !path.startsWith('/metrics')) {
      op.responses = { ...op.responses, ...errorResponses(MERCHANT_ERRORS[key] ?? COMMON_MERCHANT) };
    }
    // Every POST of the merchant API honours Idempotency-Key (src/plugins/idempotency.ts).
    if (method === 'post' && path.startsWith('/api/v1/')) {
      op.parameters = [...(op.parameters ?? []), idempotencyHeader(path, settings.idempotencyTtlHours ?? 24)];
      op.responses = { ...op.responses, ...errorResponses({ 409: [IDEMPOTENCY_IN_PROGRESS] }) };
      for (const [status, r] of Object.entries(op.responses as Json)) {
        if (status.startsWith('2')) r.headers = { ...(r.headers ?? {}), ...IDEMPOTENCY_REPLAY_HEADERS };
      }
    }
  }
  // `type` as the spec and the README write it: either case is accepted.
  const create = paths['/api/v1/bill/create']?.post?.requestBody?.content;
  for (const media of Object.values((create ?? {}) as Json)) {
    const type = media.schema?.properties?.type;
    if (type) Object.assign(type, { enum: ['normal', 'multi', 'NORMAL', 'MULTI'], description: 'NORMAL (default): one successful payment; MULTI: many. Either case is accepted; responses write MULTI / NORMAL.' });
  }
  return to31({
    openapi: '3.1.0',
    info: {
      title: 'Payment service: merchant API', version: full.info?.version ?? '1.0.0',
      description: 'The merchant API (/api/v1), the payment page\'s JSON mode, the service probes and the events the service posts to you (webhooks). Every call answers JSON; errors carry `success: false` and the key in `message`. Every POST honours an `Idempotency-Key` header (the first answer is kept ' + (settings.idempotencyTtlHours ?? 24) + ' hours and replayed for the same key; each POST says what it dedupes): send one key per intended bill, charge, payout or refund (e.g. your order id and attempt number) and the same key on every retry of it; for a charge it is the only thing that deduplicates. Each error message is listed with its meaning (ErrorKey), each event you receive with its fields and signature (webhooks). The operator API has its own document: /admin/docs.',
    },
    servers: full.servers,
    tags: full.tags,
    components: { ...(full.components ?? {}), schemas: { ...(full.components?.schemas ?? {}), ...ERROR_COMPONENT, ErrorKey: ERROR_KEY, PayState: PAY_STATE, Ready: READY } },
    security: full.security,
    paths,
    webhooks: WEBHOOKS,
  }) as Json;
}

const OPERATOR_ERRORS: ErrorList = { 401: ['Unauthenticated.'], 403: ['This action is unauthorized.'], 422: ['The given data was invalid.'] };

/** A provider's notification is answered as that provider expects, and refused with `{error}`. */
const NOTIFICATIONS = '/providers/{connector}/notifications';
const providerError = (description: string, examples: Json) => ({
  description,
  content: {
    'application/json': {
      schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' }, reason: { type: 'string' } } },
      examples: Object.fromEntries(Object.entries(examples).map(([k, value]) => [k, { value }])),
    },
  },
});
const NOTIFICATION_RESPONSES = {
  200: { description: 'Recorded (or a duplicate, which changes nothing); the body is what the provider expects (T-Bank: `OK`; YooKassa: empty)', content: { 'text/plain': { schema: { type: 'string' }, example: 'OK' } } },
  400: providerError('Could not be verified (signature, token, or the object read back differs)', { unverifiable: { error: 'unverifiable', reason: 'not a YooKassa notification' } }),
  404: providerError('No such connector, or about no object of ours', { unknown_connector: { error: 'unknown_connector' }, payment_not_found: { error: 'payment_not_found' } }),
  429: providerError('Over 10 unproven notifications a second from one address to one connector', { too_many_requests: { error: 'too_many_requests' } }),
  503: providerError('The provider did not answer the check: it sends the notification again', { provider_unavailable: { error: 'provider_unavailable' } }),
};

/** The operators' document: the operator API, typed answers, its own errors. */
export function operatorDocument(full: Json): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries(full.paths ?? {})) if (path.startsWith('/admin/') || path.startsWith('/providers/')) paths[path] = item;
  if (paths[NOTIFICATIONS]?.post) paths[NOTIFICATIONS].post.responses = JSON.parse(JSON.stringify(NOTIFICATION_RESPONSES));
  for (const [path, method, op] of operations(paths)) {
    addRequestExamples(op);
    if (path.startsWith('/providers/')) continue;
    const responses: Json = {};
    for (const [status, r] of Object.entries((op.responses ?? {}) as Json)) {
      const code = status === 'default' ? (op.requestBody && !path.includes('{') ? '201' : '200') : status;
      responses[code] = r;
    }
    // Every operator route declares its answers (src/admin/routes/schemas.ts); one that forgot is
    // still shown as the envelope every answer has, never as "Default Response".
    if (!Object.keys(responses).some((s) => s.startsWith('2'))) responses['200'] = { description: 'Success' };
    for (const [status, r] of Object.entries(responses)) {
      if (!status.startsWith('2') || r.content) continue;
      r.content = { 'application/json': { schema: { type: 'object', required: ['success'], properties: { success: { type: 'boolean', enum: [true] } }, additionalProperties: true } } };
    }
    op.responses = responses;
    describeSuccess(op);
    const errors: ErrorList = { ...OPERATOR_ERRORS, ...(path.includes('{') ? { 404: ['Not Found.'] } : {}), ...OPERATOR_EXTRA_ERRORS[`${method} ${path}`] };
    op.responses = { ...responses, ...errorResponses(errors) };
  }
  return to31({
    openapi: '3.1.0',
    info: {
      title: 'Payment service: operator API', version: full.info?.version ?? '1.0.0',
      description: 'The operator API (/admin/v1) with ADMIN_API_TOKEN or a personal operator token; each role may call what its permissions allow (a 403 otherwise). Provider notifications (/providers) are called by the providers.',
    },
    components: { ...(full.components ?? {}), schemas: { ...(full.components?.schemas ?? {}), ...ERROR_COMPONENT } },
    security: full.security,
    paths,
  }) as Json;
}
