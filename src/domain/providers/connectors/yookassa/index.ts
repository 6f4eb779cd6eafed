import type { ConnectorPlugin } from '../../plugin.js';
import { YooKassaConnector } from './client.js';
import { YOOKASSA_SETTINGS, YOOKASSA_TOKEN_ISSUER, yookassaSettingsOf } from './settings.js';

export { YooKassaConnector } from './client.js';
export { ykReceipt } from './mapping.js';
export { YOOKASSA_BASE_URL, YOOKASSA_PAYOUT_WIDGET_URL, YOOKASSA_TOKEN_ISSUER, YOOKASSA_NOTIFICATION_SOURCES, type YooKassaSettings } from './settings.js';

/** A YooKassa shop, API v3 (docs/connectors/yookassa.md). */
export const yookassa: ConnectorPlugin<'yookassa'> = {
  kind: 'yookassa',
  title: 'YooKassa API v3: card and SBP payments on YooKassa\'s page, refunds, payouts to cards and SBP',
  settings: YOOKASSA_SETTINGS,
  // Payouts only with the payout gateway's credentials, card numbers only with payout_pci_dss (the connector's own capabilities say).
  capabilities: { payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: true, sbp: true }, hostsCardForm: true,
    payoutCardBy: { number: true, tokens: [YOOKASSA_TOKEN_ISSUER] }, twoStage: true, savedCards: true },
  // The payout widget collects the card and answers its payout_token (docs/adr/0070).
  payoutTokens: { issuer: YOOKASSA_TOKEN_ISSUER },
  notifications: { verifiedBy: 'YooKassa signs nothing: the object is read again with the shop\'s credentials and only that answer counts (source networks allow-listed)' },
  build: (row, ctx) => new YooKassaConnector(row.name, row.mode, yookassaSettingsOf(row), ctx.publicBaseUrl, ctx.net),
};
