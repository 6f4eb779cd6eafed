import type { ConnectorPlugin } from '../../plugin.js';
import { SANDBOX_CAPABILITIES, SandboxConnector } from './client.js';
import { SANDBOX_SETTINGS } from './settings.js';

export { SandboxConnector, SANDBOX_CAPABILITIES, type SandboxEnv } from './client.js';
export { SandboxBank, SANDBOX_3DS_TTL_MS, SANDBOX_QR_TTL_MS, sandbox3dsPath, sandboxSbpPath } from './bank.js';
export {
  SANDBOX_3DS_CARD, SANDBOX_DECLINED_CARD, SANDBOX_INSUFFICIENT_CARD, SANDBOX_LOST_ANSWER_CARD, SANDBOX_LOST_PAYOUT_SUFFIX, SANDBOX_LOST_REFUND_KOPECKS,
} from './mapping.js';

/** The built-in test instrument (PROVIDERS.md "Sandbox behaviour"); the connector `sandbox` is always present. */
export const sandbox: ConnectorPlugin<'sandbox'> = {
  kind: 'sandbox',
  title: 'Sandbox (built-in test instrument, answers at once)',
  settings: SANDBOX_SETTINGS,
  capabilities: SANDBOX_CAPABILITIES,
  notifications: null,
  build: (row, ctx) => new SandboxConnector(row.name, row.mode, { refuse: row.settings.refuse === true }, { db: ctx.db, publicBaseUrl: ctx.publicBaseUrl }),
};
