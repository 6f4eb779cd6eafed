import { payoutTokenIssuers } from '../plugin.js';
import { sandbox } from './sandbox/index.js';
import { tbank } from './tbank/index.js';
import { yookassa } from './yookassa/index.js';

/**
 * Every connector kind of this build: the one list the registry (settings validation, build),
 * the operator API (validation, OpenAPI enum), the console, the CLI's usage and the docs test
 * read. Adding a kind is its folder here and one line below (docs/connectors/README.md).
 */
export const CONNECTORS = [sandbox, yookassa, tbank] as const;

export type ConnectorKind = (typeof CONNECTORS)[number]['kind'];
export const CONNECTOR_KINDS: readonly ConnectorKind[] = CONNECTORS.map((c) => c.kind);

/** Whose payout card tokens a payout account may hold: the issuers the kinds' plugins declare (`payoutTokens`). */
export const PAYOUT_TOKEN_ISSUERS = payoutTokenIssuers(CONNECTORS);
