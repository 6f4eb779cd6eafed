import type { TestApp } from '../helpers/app.js';

export interface MerchantFixture {
  merchantId: string;
  token: string;
  shopId: string;
  auth: { authorization: string };
}

let seq = 0;

/** A merchant with one enabled RUB shop, through the same service classes as the operator API. */
export async function createMerchant(t: TestApp, opts: { shop?: Record<string, unknown>; merchant?: Record<string, unknown> } = {}): Promise<MerchantFixture> {
  seq += 1;
  const { merchant, apiToken } = await t.app.services.merchants.create({ name: `Merchant ${seq}`, email: `m${seq}-${Date.now()}-${Math.random()}@example.test` });
  if (opts.merchant) await t.db.prisma.merchant.update({ where: { id: merchant.id }, data: opts.merchant });
  const shop = await t.app.services.shops.create(merchant.id, { name: `Shop ${seq}`, ...(opts.shop ?? {}) });
  return { merchantId: merchant.id, token: apiToken, shopId: shop.id, auth: { authorization: `Bearer ${apiToken}` } };
}
