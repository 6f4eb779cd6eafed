import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { OutboxService } from './outbox/outbox.service.js';
import { MerchantService } from './domain/merchant/merchant.service.js';
import { ShopService } from './domain/shop/shop.service.js';
import { BillService } from './domain/bill/bill.service.js';
import { RefundService } from './domain/refund/refund.service.js';
import { ChargebackService } from './domain/chargeback/chargeback.service.js';
import { PayoutAccountService } from './domain/payout-account/payout-account.service.js';
import { RateService } from './domain/rate/rate.service.js';
import { AdjustmentService } from './domain/adjustment/adjustment.service.js';
import { DeploymentService } from './domain/deployment/deployment.service.js';
import { PaymentService } from './domain/payment/payment.service.js';
import { PaymentPage } from './domain/payment/payment-page.js';
import { PaymentReads } from './domain/payment/payment.reads.js';
import { SavedMethodService } from './domain/payment/saved-methods.js';
import { PayoutService } from './domain/payout/payout.service.js';
import { ConnectorRegistry } from './domain/providers/registry.js';
import { RehearsalService } from './domain/rehearsal/rehearsal.service.js';
import type { ConnectorPlugin } from './domain/providers/plugin.js';
import { OperatorService } from './domain/operator/operator.service.js';
import { SbpBankService } from './domain/sbp-bank/sbp-bank.service.js';
import { LedgerService } from './domain/ledger/ledger.service.js';
import { AttentionService } from './domain/attention/attention.service.js';
import type { LifecycleObserver } from './domain/operations/lifecycle.js';
import type { ConflictLog } from './domain/providers/conflict.js';
import { operationKinds } from './domain/operations/kinds.js';
import { AuditService } from './audit/audit.service.js';
import { MerchantLists } from './domain/merchant/merchant-lists.js';
import { ProviderNotificationService } from './domain/providers/notification.service.js';
import { OperatorTwoFactor, cabinetTwoFactors } from './domain/operator/two-factor.js';
import { MerchantTeamService } from './domain/merchant/team.service.js';
import { ApiKeyService } from './domain/api-key/api-key.service.js';
import { MailOutbox } from './mail/mail-outbox.js';
import { PasswordResetService } from './domain/merchant/password-reset.service.js';
import { OperatorPasswordResetService } from './domain/operator/password-reset.js';
import { OperatorLists } from './domain/operator/operator-lists.js';
import { SandboxBank } from './domain/providers/connectors/sandbox/bank.js';
import { LimitCounters } from './db/limit-counters.js';

/**
 * Every service class, built once per process; the API, pages, cabinet, CLI and workers share
 * them. `observer`: told each phase of a provider operation (src/domain/operations/lifecycle.ts);
 * `log`: where a provider's contradiction of a final status is logged (silent when not given).
 */
export function createServices(config: Config, db: Db, opts: { connectors?: readonly ConnectorPlugin[]; observer?: LifecycleObserver; log?: ConflictLog } = {}) {
  const merchants = new MerchantService(config, db);
  const shops = new ShopService(config, db);
  const bills = new BillService(config, db);
  // One registry: payments, refunds and payouts route through the same connectors.
  const connectors = new ConnectorRegistry(config, db, opts.connectors);
  const refunds = new RefundService(config, db, connectors, opts.observer, opts.log);
  const payoutAccounts = new PayoutAccountService(config, db, connectors);
  const rates = new RateService(config, db);
  const adjustments = new AdjustmentService(config, db);
  const deployment = new DeploymentService(config, db);
  const chargebacks = new ChargebackService(config, db);
  const payments = new PaymentService(config, db, connectors, opts.observer, opts.log);
  const paymentPage = new PaymentPage(config, db, connectors);
  const paymentReads = new PaymentReads(db);
  const savedMethods = new SavedMethodService(config, db, bills, payments, connectors);
  const payouts = new PayoutService(config, db, connectors, opts.observer, opts.log);
  const outbox = new OutboxService(config, db, merchants);
  const operators = new OperatorService(db);
  const sbpBanks = new SbpBankService(db);
  const ledger = new LedgerService(db);
  // The one map of operation kinds: the workers, notifications and the attention list dispatch through it.
  const operations = operationKinds(config, { payments, refunds, payouts });
  const attention = new AttentionService(db, operations);
  const audit = new AuditService(db);
  const providerNotifications = new ProviderNotificationService(db, operations, payments);
  // The merchant's own lists as the cabinet reads them (filters, pages, CSV exports).
  const merchantLists = new MerchantLists(db);
  // Cabinet accounts' TOTP (the merchant's own login and team members) and the team.
  const cabinetTwoFactor = cabinetTwoFactors(db, config.tokenEncryptionKey);
  const team = new MerchantTeamService(db);
  // Restricted API keys: the merchant API's auth hook, the cabinet and the operator API.
  const apiKeys = new ApiKeyService(db);
  // Outgoing mail (written in the business transaction, sent by the mail worker) and the
  // operator's password reset by a mailed one-time link.
  const mail = new MailOutbox(config, db);
  const passwordResets = new PasswordResetService(config, db, mail);
  const operatorPasswordResets = new OperatorPasswordResetService(config, db, mail);
  // Operators' TOTP (the console's sign-in, the operator API's reset).
  const operatorTwoFactor = new OperatorTwoFactor(db, config.tokenEncryptionKey);
  // The console's own lists (its home page's counts, the merchant search, test twins).
  const operatorLists = new OperatorLists(db);
  // The sandbox's bank pages play the payer's bank on the sandbox's own memory.
  const sandboxBank = new SandboxBank(db.pool);
  // Go-live rehearsals of connectors against their providers' test terminals (docs/adr/0104).
  const rehearsals = new RehearsalService(config, db, connectors);
  // Limits that guard money and accounts, counted once for all processes (sign-in, payment form, notifications, API).
  const limits = new LimitCounters(db.pool);
  return { operations, limits, rehearsals, operatorLists, operatorTwoFactor, sandboxBank, apiKeys, mail, passwordResets, operatorPasswordResets, audit, providerNotifications, merchantLists, cabinetTwoFactor, team, connectors, operators, sbpBanks, ledger, outbox, payouts, payments, paymentPage, paymentReads, savedMethods, merchants, shops, bills, refunds, payoutAccounts, rates, adjustments, chargebacks, attention, deployment };
}

export type Services = ReturnType<typeof createServices>;
