import { settingText, type SettingsSchema, type StoredConnector } from '../../plugin.js';

/** T-Bank internet acquiring API v2 in production (test terminals: https://rest-api-test.tinkoff.ru/v2). */
export const TBANK_BASE_URL = 'https://securepay.tinkoff.ru/v2';

export interface TBankSettings {
  baseUrl: string;
  terminalKey: string;
  /** Used only to compute and check Tokens; never sent. */
  password: string;
  /** Source networks notifications may come from (comma separated); any source when absent. */
  allowedIps?: string;
}

export const TBANK_SETTINGS: SettingsSchema = {
  terminal_key: { type: 'string', required: true, description: 'The terminal\'s TerminalKey' },
  password: { type: 'string', required: true, secret: true, description: 'The terminal\'s password (signs every request\'s and notification\'s Token; never sent)' },
  base_url: { type: 'url', default: TBANK_BASE_URL, description: 'The API\'s base URL (test terminals: https://rest-api-test.tinkoff.ru/v2; an emulator in tests)' },
  allowed_ips: { type: 'ip-list', default: 'any source (the Token is checked)', description: 'Networks notifications may come from' },
};

/** The typed settings of a stored row; defaults applied. */
export function tbankSettingsOf(row: StoredConnector): TBankSettings {
  return {
    baseUrl: settingText(row.settings.base_url) ?? TBANK_BASE_URL, terminalKey: settingText(row.settings.terminal_key) ?? '', password: settingText(row.secrets.password) ?? '',
    allowedIps: settingText(row.settings.allowed_ips),
  };
}
