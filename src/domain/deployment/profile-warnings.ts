import { isIP } from 'node:net';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { isPrivateAddress } from '../../outbox/url-guard.js';

/**
 * What a production start warns about, once: settings an operator chose explicitly that a
 * production deployment would not default to. They are the operator's to make (a staging
 * provider on a private address, a receiver inside the network), so they are said, not refused.
 */
export async function profileWarnings(c: Queryable, config: Pick<Config, 'profile' | 'allowPrivateWebhookUrls'>): Promise<string[]> {
  if (config.profile !== 'production') return [];
  const out: string[] = [];
  if (config.allowPrivateWebhookUrls) {
    out.push('ALLOW_PRIVATE_WEBHOOK_URLS=true in production: Result, Success, Fail and webhook URLs may point into private networks and loopback');
  }
  const r = await c.query<{ name: string; base_url: string }>(
    `SELECT name, settings->>'base_url' AS base_url FROM connectors WHERE enabled AND settings ? 'base_url' ORDER BY name`);
  for (const x of r.rows) {
    if (isPrivateHost(x.base_url)) out.push(`connector ${x.name} calls ${x.base_url}, a private or loopback address (a staging provider?)`);
  }
  return out;
}

function isPrivateHost(url: string): boolean {
  let host: string;
  try { host = new URL(url).hostname.replace(/^\[|\]$/g, ''); } catch { return false; }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}
