import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { isPrivateLiteralHost } from '../../outbox/url-guard.js';

/**
 * What a production start warns about, once: settings an operator chose explicitly that a
 * production deployment would not default to. They are the operator's to make (a staging
 * provider on a private address, a receiver inside the network), so they are said, not refused.
 */
export async function profileWarnings(
  c: Queryable, config: Pick<Config, 'profile' | 'allowPrivateWebhookUrls' | 'allowPrivateProviderUrls'>,
): Promise<string[]> {
  if (config.profile !== 'production') return [];
  const out: string[] = [];
  if (config.allowPrivateWebhookUrls) {
    out.push('ALLOW_PRIVATE_WEBHOOK_URLS=true in production: Result, Success, Fail and webhook URLs may point into private networks and loopback');
  }
  if (config.allowPrivateProviderUrls) {
    out.push('ALLOW_PRIVATE_PROVIDER_URLS=true in production: connectors may call providers on private, loopback and link-local addresses and over plain http');
  }
  const r = await c.query<{ name: string; base_url: string }>(
    `SELECT name, settings->>'base_url' AS base_url FROM connectors WHERE enabled AND settings ? 'base_url' ORDER BY name`);
  for (const x of r.rows) {
    if (!isPrivateHost(x.base_url)) continue;
    out.push(config.allowPrivateProviderUrls
      ? `connector ${x.name} calls ${x.base_url}, a private or loopback address (a staging provider?)`
      : `connector ${x.name} calls ${x.base_url}, a private or loopback address: its calls are refused (ALLOW_PRIVATE_PROVIDER_URLS=false)`);
  }
  return out;
}

function isPrivateHost(url: string): boolean {
  try { return isPrivateLiteralHost(new URL(url)); } catch { return false; }
}
