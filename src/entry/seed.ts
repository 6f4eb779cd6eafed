import type { Db } from '../db/client.js';
import type { Services } from '../services.js';
import { sandboxShopUrls } from '../domain/shop/sandbox-shop.js';

export const DEMO_EMAIL = 'demo@example.com';
export const DEMO_PASSWORD = 'demo-password';

/** The sandbox profile's demo merchant and shop, created on first start and reused after. */
export async function seedDemo(services: Services, db: Db, publicBaseUrl?: string) {
  let m = await db.prisma.merchant.findUnique({ where: { email: DEMO_EMAIL } });
  if (!m) {
    const created = await services.merchants.create({ name: 'Demo merchant', email: DEMO_EMAIL });
    await services.merchants.setPassword(created.merchant.id, DEMO_PASSWORD);
    await db.prisma.merchant.update({ where: { id: created.merchant.id }, data: { verified: true, grantRefunds: true, grantRegularPayouts: true } });
    await services.shops.create(created.merchant.id, { name: 'Demo shop' });
    m = await db.prisma.merchant.findUniqueOrThrow({ where: { id: created.merchant.id } });
  }
  let shop = await db.prisma.shop.findFirstOrThrow({ where: { merchantId: m.id }, orderBy: { createdAt: 'asc' } });
  // The built-in sandbox receiver as the demo shop's Result, Success and Fail URLs:
  // the first payment shows a delivered postback and a return to the shop. Set once, when the
  // shop has none of them; a URL the user saved is kept.
  if (publicBaseUrl && !shop.resultUrl && !shop.successUrl && !shop.failUrl) {
    shop = await db.prisma.shop.update({ where: { id: shop.id }, data: sandboxShopUrls(publicBaseUrl) });
  }
  const { twin } = await services.merchants.ensureTestTwin(m.id);
  return {
    apiToken: services.merchants.decryptToken(m.apiTokenEnc), testApiToken: services.merchants.decryptToken(twin.apiTokenEnc),
    shopId: shop.id, email: DEMO_EMAIL, password: DEMO_PASSWORD,
  };
}
