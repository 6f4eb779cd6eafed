import type { Config } from '../config.js';
import type { InTx } from '../db/client.js';
import type { Merchant, PayoutAccount, Shop } from '../generated/prisma/client.js';
import { merchantView, payoutAccountView, shopView } from '../admin/views.js';
import { changed, writeAudit, type Actor } from './audit.js';

type Change<T> = { before: T | null; after: T };

/**
 * The audit step of a change to an object shown through an operator view: the view's changed
 * fields (`updated_at` moves on every change and says nothing). The views never hold a secret
 * (token or password hash, card number: masked), and writeAudit drops secret-named keys anyway.
 */
function viewStep<T extends { id: string }>(show: (x: T) => Record<string, unknown>, objectType: string) {
  const shown = (x: T) => { const { updated_at: _, ...rest } = show(x); return rest; };
  return (who: Actor, action: string): InTx<Change<T>> => (c, r) => writeAudit(c, who, {
    action, objectType, objectId: r.after.id,
    ...(r.before ? changed(shown(r.before), shown(r.after)) : { before: null, after: shown(r.after) }),
  });
}

export const merchantAudit = (config: Config, who: Actor, action: string) =>
  viewStep<Merchant>((m) => merchantView(config, m), 'merchant')(who, action);
export const shopAudit = (config: Config, who: Actor, action: string) =>
  viewStep<Shop>((s) => shopView(config, s), 'shop')(who, action);
export const payoutAccountAudit = (config: Config, who: Actor, action: string) =>
  viewStep<PayoutAccount>((a) => payoutAccountView(config, a), 'payout_account')(who, action);
