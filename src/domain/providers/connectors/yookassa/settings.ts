import { settingText, type SettingsSchema, type StoredConnector } from '../../plugin.js';

/** YooKassa API v3 in production (yookassa.ru/developers/using-api/basics). */
export const YOOKASSA_BASE_URL = 'https://api.yookassa.ru/v3';

/**
 * The networks YooKassa sends notifications from, as published (yookassa.ru/developers,
 * "Входящие уведомления", IP addresses; the official PHP SDK's `lib/Helpers/SecurityHelper.php`
 * lists the same IPv4 networks and, for IPv6, four /64 networks inside 2a02:5180::/32). The
 * allow-list of a YooKassa connector without `allowed_ips`, in every profile and mode: a forged
 * notification from elsewhere is refused before it costs a call to YooKassa. An emulator on
 * loopback is reached by setting `allowed_ips` (a local reverse proxy would make every sender
 * loopback, so loopback is never a default).
 */
export const YOOKASSA_NOTIFICATION_SOURCES = '185.71.76.0/27, 185.71.77.0/27, 77.75.153.0/25, 77.75.156.11, 77.75.156.35, 77.75.154.128/25, 2a02:5180::/32';
/**
 * YooKassa's payout widget ("Виджет ЮKassa для выплат"), the script its page names
 * (yookassa.ru/developers/payouts/making-payouts/bank-card/using-payout-widget/implementing-widget:
 * the library is then `window.PayoutsData`, initialised with the gateway's agentId).
 */
export const YOOKASSA_PAYOUT_WIDGET_URL = 'https://yookassa.ru/payouts-data/3.1.0/widget.js';

/** Whose the payout widget's tokens are (`payout_token`): a payout account's `token_provider`, `token:yookassa:<token>` in CreatePayout.account. */
export const YOOKASSA_TOKEN_ISSUER = 'yookassa';

export interface YooKassaSettings {
  baseUrl: string;
  shopId: string;
  secretKey: string;
  /** The payout gateway's own pair (agentId and its key); payouts are off without them. */
  payoutAgentId?: string;
  payoutSecretKey?: string;
  /**
   * The payout gateway may receive full card numbers: its operator holds a PCI DSS certificate and
   * YooKassa enabled raw numbers for it (payouts/making-payouts/bank-card/using-raw-data). False:
   * card payouts go by the payout widget's payout_token only.
   */
  payoutPciDss: boolean;
  /** The payout widget's script (an emulator's stand-in in tests). */
  payoutWidgetUrl: string;
  /** Source networks notifications may come from (comma separated): `allowed_ips`, else YooKassa's published ones. */
  allowedIps: string;
  /** The shop uses "Чеки от ЮKassa" (YooKassa's own register): receipts reach the payer by e-mail only (ykReceipt). */
  ownReceipts: boolean;
}

export const YOOKASSA_SETTINGS: SettingsSchema = {
  shop_id: { type: 'string', required: true, description: 'The shop\'s id (shopId)' },
  secret_key: { type: 'string', required: true, secret: true, description: 'The shop\'s secret key' },
  base_url: { type: 'url', default: YOOKASSA_BASE_URL, description: 'The API\'s base URL (an emulator in tests)' },
  payout_agent_id: { type: 'string', description: 'The payout gateway\'s agentId; payouts are off without it and its key' },
  payout_secret_key: { type: 'string', secret: true, description: 'The payout gateway\'s secret key' },
  payout_pci_dss: {
    type: 'boolean', default: 'false',
    description: 'The payout gateway takes full card numbers (your PCI DSS certificate, enabled by YooKassa); otherwise card payouts go only by the payout widget\'s token',
  },
  payout_widget_url: { type: 'url', default: YOOKASSA_PAYOUT_WIDGET_URL, description: 'The payout widget\'s script (an emulator in tests)' },
  allowed_ips: { type: 'ip-list', default: 'YooKassa\'s published networks', description: 'Networks notifications may come from' },
  own_receipts: {
    type: 'boolean', default: 'false',
    description: 'The shop\'s receipts are YooKassa\'s own ("Чеки от ЮKassa"): they go to the payer by e-mail only, so a payment whose payer gave only a phone is not sent here',
  },
};

/** The typed settings of a stored row; defaults applied. */
export function yookassaSettingsOf(row: StoredConnector): YooKassaSettings {
  return {
    baseUrl: settingText(row.settings.base_url) ?? YOOKASSA_BASE_URL, shopId: settingText(row.settings.shop_id) ?? '', secretKey: settingText(row.secrets.secret_key) ?? '',
    payoutAgentId: settingText(row.settings.payout_agent_id), payoutSecretKey: settingText(row.secrets.payout_secret_key),
    payoutPciDss: row.settings.payout_pci_dss === true,
    ownReceipts: row.settings.own_receipts === true,
    payoutWidgetUrl: settingText(row.settings.payout_widget_url) ?? YOOKASSA_PAYOUT_WIDGET_URL,
    // Without its own list, YooKassa's published sources: the same in every profile and mode.
    allowedIps: settingText(row.settings.allowed_ips) ?? YOOKASSA_NOTIFICATION_SOURCES,
  };
}
