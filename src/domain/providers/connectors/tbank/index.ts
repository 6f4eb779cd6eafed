import type { ConnectorPlugin } from '../../plugin.js';
import { rehearsedAmountReading } from '../../rehearsal-findings.js';
import { TBANK_CAPABILITIES, TBankConnector } from './client.js';
import { TBANK_SETTINGS, tbankSettingsOf } from './settings.js';

export { TBankConnector, TBANK_CAPABILITIES } from './client.js';
export { tbReceipt } from './mapping.js';
export { tbankToken } from './notifications.js';
export { TBANK_BASE_URL, TBANK_NOTIFICATION_SOURCES, type TBankSettings } from './settings.js';

/** A T-Bank terminal, internet acquiring API v2 (docs/connectors/tbank.md). */
export const tbank: ConnectorPlugin<'tbank'> = {
  kind: 'tbank',
  title: 'T-Bank internet acquiring API v2: card payments on T-Bank\'s form, SBP QR, refunds (no payouts)',
  settings: TBANK_SETTINGS,
  capabilities: TBANK_CAPABILITIES,
  notifications: { verifiedBy: 'Token: SHA-256 of the sorted root values with the terminal password, checked in constant time; answered OK' },
  build: (row, ctx) => {
    const s = tbankSettingsOf(row, ctx.profile);
    return new TBankConnector(row.name, row.mode, s, ctx.publicBaseUrl, ctx.net, () => rehearsedAmountReading(ctx.db, 'tbank', s.baseUrl));
  },
};
