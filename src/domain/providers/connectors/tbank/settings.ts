import type { PaymentsProfile } from '../../../../config.js';
import { settingText, type SettingsSchema, type StoredConnector } from '../../plugin.js';
import { LOOPBACK_SOURCES } from '../../provider-http.js';

/** T-Bank internet acquiring API v2 in production (test terminals: https://rest-api-test.tinkoff.ru/v2). */
export const TBANK_BASE_URL = 'https://securepay.tinkoff.ru/v2';

/**
 * The networks T-Bank sends notifications from, as published (T-Bank's notification page and
 * integrators' guides, checked 2026-11-28: 91.194.226.0/23, 91.218.132.0/24 .. 91.218.135.0/24,
 * 212.49.24.0/24, 212.233.80.0/24 .. 212.233.83.0/24): the allow-list of a T-Bank connector without
 * `allowed_ips`. The Token is checked as well; a notification from elsewhere is refused before it
 * costs a GetState.
 */
export const TBANK_NOTIFICATION_SOURCES = '91.194.226.0/23, 91.218.132.0/22, 212.49.24.0/24, 212.233.80.0/22';

export interface TBankSettings {
  baseUrl: string;
  terminalKey: string;
  /** Used only to compute and check Tokens; never sent. */
  password: string;
  /** Source networks notifications may come from (comma separated); T-Bank's published ones when not set. */
  allowedIps: string;
}

export const TBANK_SETTINGS: SettingsSchema = {
  terminal_key: { type: 'string', required: true, description: 'The terminal\'s TerminalKey' },
  password: { type: 'string', required: true, secret: true, description: 'The terminal\'s password (signs every request\'s and notification\'s Token; never sent)' },
  base_url: { type: 'url', default: TBANK_BASE_URL, description: 'The API\'s base URL (test terminals: https://rest-api-test.tinkoff.ru/v2; an emulator in tests)' },
  allowed_ips: { type: 'ip-list', default: 'T-Bank\'s published networks (plus loopback in the sandbox profile)', description: 'Networks notifications may come from' },
};

/** The typed settings of a stored row; defaults applied. */
export function tbankSettingsOf(row: StoredConnector, profile: PaymentsProfile): TBankSettings {
  return {
    baseUrl: settingText(row.settings.base_url) ?? TBANK_BASE_URL, terminalKey: settingText(row.settings.terminal_key) ?? '', password: settingText(row.secrets.password) ?? '',
    // Without its own list, T-Bank's published sources (plus loopback in the sandbox profile: a local emulator, tests).
    allowedIps: settingText(row.settings.allowed_ips)
      ?? (profile === 'sandbox' ? `${TBANK_NOTIFICATION_SOURCES}, ${LOOPBACK_SOURCES}` : TBANK_NOTIFICATION_SOURCES),
  };
}
