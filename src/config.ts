import { existsSync, readFileSync } from 'node:fs';
import { Decimal } from 'decimal.js';

/** Every setting of the service, read once at boot (see .env.example). */
export type PaymentsProfile = 'sandbox' | 'production';

export interface Config {
  databaseUrl: string | undefined;
  /**
   * What the deployment is (PAYMENTS_PROFILE): `sandbox`, a test instrument where every route
   * defaults to the built-in sandbox; `production`, where live money moves only through
   * live-mode connectors and the sandbox serves test mode only. Default: `sandbox` with the
   * embedded PostgreSQL (no DATABASE_URL), else `production`.
   */
  profile: PaymentsProfile;
  host: string;
  port: number;
  publicBaseUrl: string;
  adminApiToken: string;
  /** 32 bytes for AES-256-GCM. */
  tokenEncryptionKey: Buffer;
  tz: string;
  logLevel: string;
  /** `json` (one JSON line per entry), `pretty` (readable lines), `auto`: pretty on a terminal. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** API processes (node:cluster) `npm start` runs; the job workers run once, in the primary. */
  webConcurrency: number;
  allowPrivateWebhookUrls: boolean;
  /**
   * Connectors may call providers on loopback, private and link-local addresses and over plain
   * http (ALLOW_PRIVATE_PROVIDER_URLS): emulators and tests. Off, a connector's addresses must
   * be public https ones, checked when saved and again at each call. Default: on only in `sandbox`.
   */
  allowPrivateProviderUrls: boolean;
  sandboxProcessingDelayMs: number;
  runWorkers: boolean;
  dataDir: string;
  /** Most payments bill/payments answers before api:error.too_many_payments. */
  billPaymentsMax: number;
  /** Operator default fees (percent, fixed) where a merchant has none of its own. */
  defaultFees: FeeDefaults;
  /** Payment form attempts per bill and per IP in a 10-minute window. */
  payAttemptsPerBill: number;
  payAttemptsPerIp: number;
  /** Cabinet sign-in: attempts per client address in 10 minutes; wrong passwords per email in an hour (see SignInGuard). */
  loginAttemptsPerIp: number;
  loginFailuresPerAccount: number;
  /**
   * Which proxies may set X-Forwarded-For (Fastify's trustProxy): false (default: the socket
   * address is the client), true (any), a hop count, or a comma list of addresses/CIDRs.
   * Per-IP limits read the client address from it, so trusting everyone lets clients choose it.
   */
  trustProxy: boolean | number | string;
  /** Requests per minute per API token and per client IP on /api/v1 (0 disables). */
  rateLimitPerToken: number;
  rateLimitPerIp: number;
  /** How long a worker holds a claimed event, payout or refund before another may take it. */
  workerLeaseMs: number;
  /** How long a call to a provider may take before its outcome is `unknown` (CONNECTOR_TIMEOUT_MS). */
  connectorTimeoutMs: number;
  /**
   * Reconciliation of operations left in PROCESS: the first question to the provider after this
   * long (never before a creation call could still be running), then doubling up to the max
   * delay; past the give-up age without a final answer the operation goes to the attention list.
   */
  reconcileFirstCheckMs: number;
  reconcileMaxDelayMs: number;
  reconcileGiveUpMs: number;
  /** How often the reconciliation worker looks for due operations. */
  reconcilePollMs: number;
  /** How long a decline read without its reason waits for the provider's notification to bring it. */
  declineReasonWaitMs: number;
  /** How long an Idempotency-Key answer is kept, in hours. */
  idempotencyTtlHours: number;
  /** Monthly partitions kept created ahead of the current month (src/db/partitions.ts). */
  partitionMonthsAhead: number;
  /** Delivered / dead outbox events and their delivery attempts older than this are dropped by month. */
  outboxRetentionDays: number;
  /**
   * Outgoing mail (SMTP_URL, e.g. `smtp://user:pass@mail.example.com:587` or `smtps://...:465`);
   * unset: in the `sandbox` profile mail is kept in the dev mailbox (/operator/mailbox), in
   * `production` it waits in the queue (one warning at start) and password resets are refused.
   */
  smtpUrl: string | undefined;
  /** The From of outgoing mail (MAIL_FROM). */
  mailFrom: string;
}

export interface FeeDefaults {
  paymentCardPercent: Decimal;
  paymentCardFixed: Decimal;
  paymentSbpPercent: Decimal;
  paymentSbpFixed: Decimal;
  payoutCardPercent: Decimal;
  payoutCardFixed: Decimal;
  payoutSbpPercent: Decimal;
  payoutSbpFixed: Decimal;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** Reads KEY=VALUE lines of a .env file; the real environment wins over it. */
export function readDotEnv(path = '.env'): Env {
  if (!existsSync(path)) return {};
  const out: Env = {};
  for (const line of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    out[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

function bool(name: string, v: string | undefined, dflt: boolean): boolean {
  if (v === undefined || v === '') return dflt;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${v}"`);
}

function int(name: string, v: string | undefined, dflt: number, min = 0): number {
  if (v === undefined || v === '') return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${v}"`);
  return Number(v);
}

function trustProxyOf(v: string | undefined): boolean | number | string {
  if (v === undefined || v === '' || /^(0|false|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}

function profileOf(v: string | undefined, dflt: PaymentsProfile): PaymentsProfile {
  if (v === undefined || v === '') return dflt;
  if (v === 'sandbox' || v === 'production') return v;
  throw new ConfigError(`PAYMENTS_PROFILE must be sandbox or production, got "${v}"`);
}

function smtpUrlOf(v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^smtps?:\/\/[^/]+/.test(v)) throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL');
  return v;
}

function logFormatOf(v: string | undefined): Config['logFormat'] {
  if (v === undefined || v === '') return 'auto';
  if (v === 'auto' || v === 'json' || v === 'pretty') return v;
  throw new ConfigError(`LOG_FORMAT must be auto, json or pretty, got "${v}"`);
}

function dec(name: string, v: string | undefined, dflt: string): Decimal {
  const s = v === undefined || v === '' ? dflt : v;
  if (!/^\d+(\.\d+)?$/.test(s)) throw new ConfigError(`${name} must be a non-negative decimal, got "${s}"`);
  return new Decimal(s);
}

/**
 * Builds the config from an environment. `generated` supplies secrets kept in ./.data for the
 * embedded/dev profile; without them a missing secret stops start-up naming the setting.
 */
export function loadConfig(env: Env = { ...readDotEnv(), ...process.env }, generated: Partial<Record<'ADMIN_API_TOKEN' | 'TOKEN_ENCRYPTION_KEY', string>> = {}): Config {
  const host = env.HOST || '127.0.0.1';
  const port = int('PORT', env.PORT, 3000);
  const adminApiToken = env.ADMIN_API_TOKEN || generated.ADMIN_API_TOKEN;
  if (!adminApiToken) throw new ConfigError('ADMIN_API_TOKEN is required (a long random string for the operator API)');
  if (adminApiToken.length < 16) throw new ConfigError('ADMIN_API_TOKEN must be at least 16 characters');
  const keyB64 = env.TOKEN_ENCRYPTION_KEY || generated.TOKEN_ENCRYPTION_KEY;
  if (!keyB64) throw new ConfigError('TOKEN_ENCRYPTION_KEY is required (32 bytes, base64: openssl rand -base64 32)');
  const key = Buffer.from(keyB64, 'base64');
  if (key.length !== 32) throw new ConfigError('TOKEN_ENCRYPTION_KEY must be 32 bytes, base64-encoded');
  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(publicBaseUrl)) throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL, got "${publicBaseUrl}"`);
  const databaseUrl = env.DATABASE_URL || undefined;
  const profile = profileOf(env.PAYMENTS_PROFILE, databaseUrl === undefined ? 'sandbox' : 'production');
  return {
    databaseUrl,
    profile,
    host,
    port,
    publicBaseUrl,
    adminApiToken,
    tokenEncryptionKey: key,
    tz: env.TZ || 'Europe/Moscow',
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormatOf(env.LOG_FORMAT),
    webConcurrency: int('WEB_CONCURRENCY', env.WEB_CONCURRENCY, 1, 1),
    // Default true only in the sandbox profile.
    allowPrivateWebhookUrls: bool('ALLOW_PRIVATE_WEBHOOK_URLS', env.ALLOW_PRIVATE_WEBHOOK_URLS, profile === 'sandbox'),
    allowPrivateProviderUrls: bool('ALLOW_PRIVATE_PROVIDER_URLS', env.ALLOW_PRIVATE_PROVIDER_URLS, profile === 'sandbox'),
    sandboxProcessingDelayMs: int('SANDBOX_PROCESSING_DELAY_MS', env.SANDBOX_PROCESSING_DELAY_MS, 1000),
    runWorkers: bool('RUN_WORKERS', env.RUN_WORKERS, true),
    dataDir: env.DATA_DIR || './.data',
    billPaymentsMax: int('BILL_PAYMENTS_MAX', env.BILL_PAYMENTS_MAX, 1000, 1),
    payAttemptsPerBill: int('PAY_ATTEMPTS_PER_BILL', env.PAY_ATTEMPTS_PER_BILL, 30, 1),
    payAttemptsPerIp: int('PAY_ATTEMPTS_PER_IP', env.PAY_ATTEMPTS_PER_IP, 1000, 1),
    loginAttemptsPerIp: int('LOGIN_ATTEMPTS_PER_IP', env.LOGIN_ATTEMPTS_PER_IP, 30, 1),
    loginFailuresPerAccount: int('LOGIN_FAILURES_PER_ACCOUNT', env.LOGIN_FAILURES_PER_ACCOUNT, 100, 1),
    trustProxy: trustProxyOf(env.TRUST_PROXY),
    rateLimitPerToken: int('RATE_LIMIT_PER_TOKEN', env.RATE_LIMIT_PER_TOKEN, 60000),
    rateLimitPerIp: int('RATE_LIMIT_PER_IP', env.RATE_LIMIT_PER_IP, 120000),
    workerLeaseMs: int('WORKER_LEASE_MS', env.WORKER_LEASE_MS, 60_000, 1000),
    connectorTimeoutMs: int('CONNECTOR_TIMEOUT_MS', env.CONNECTOR_TIMEOUT_MS, 15_000, 100),
    reconcileFirstCheckMs: int('RECONCILE_FIRST_CHECK_MS', env.RECONCILE_FIRST_CHECK_MS, 30_000, 0),
    reconcileMaxDelayMs: int('RECONCILE_MAX_DELAY_MS', env.RECONCILE_MAX_DELAY_MS, 3_600_000, 0),
    reconcileGiveUpMs: int('RECONCILE_GIVE_UP_MS', env.RECONCILE_GIVE_UP_MS, 86_400_000, 0),
    reconcilePollMs: int('RECONCILE_POLL_MS', env.RECONCILE_POLL_MS, 5_000, 50),
    declineReasonWaitMs: int('DECLINE_REASON_WAIT_MS', env.DECLINE_REASON_WAIT_MS, 10_000, 0),
    idempotencyTtlHours: int('IDEMPOTENCY_TTL_HOURS', env.IDEMPOTENCY_TTL_HOURS, 24, 1),
    partitionMonthsAhead: int('PARTITION_MONTHS_AHEAD', env.PARTITION_MONTHS_AHEAD, 3, 1),
    outboxRetentionDays: int('OUTBOX_RETENTION_DAYS', env.OUTBOX_RETENTION_DAYS, 90, 1),
    smtpUrl: smtpUrlOf(env.SMTP_URL),
    mailFrom: env.MAIL_FROM || 'Payments <no-reply@localhost>',
    defaultFees: {
      paymentCardPercent: dec('FEE_PAYMENT_CARD_PERCENT', env.FEE_PAYMENT_CARD_PERCENT, '0'),
      paymentCardFixed: dec('FEE_PAYMENT_CARD_FIXED', env.FEE_PAYMENT_CARD_FIXED, '0'),
      paymentSbpPercent: dec('FEE_PAYMENT_SBP_PERCENT', env.FEE_PAYMENT_SBP_PERCENT, '0'),
      paymentSbpFixed: dec('FEE_PAYMENT_SBP_FIXED', env.FEE_PAYMENT_SBP_FIXED, '0'),
      payoutCardPercent: dec('FEE_PAYOUT_CARD_PERCENT', env.FEE_PAYOUT_CARD_PERCENT, '0'),
      payoutCardFixed: dec('FEE_PAYOUT_CARD_FIXED', env.FEE_PAYOUT_CARD_FIXED, '0'),
      payoutSbpPercent: dec('FEE_PAYOUT_SBP_PERCENT', env.FEE_PAYOUT_SBP_PERCENT, '0'),
      payoutSbpFixed: dec('FEE_PAYOUT_SBP_FIXED', env.FEE_PAYOUT_SBP_FIXED, '0'),
    },
  };
}
