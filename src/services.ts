import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { MerchantService } from './domain/merchant/merchant.service.js';
import { ShopService } from './domain/shop/shop.service.js';

/** Every service class, built once per process; the API, pages, cabinet, CLI and workers share them. */
export function createServices(config: Config, db: Db) {
  const merchants = new MerchantService(config, db);
  const shops = new ShopService(config, db);
  return { merchants, shops };
}

export type Services = ReturnType<typeof createServices>;
