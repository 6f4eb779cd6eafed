/** Where the demo shop's Result, Success and Fail URLs point (the sandbox's built-in shop, src/page/sandbox-shop.ts). */
export const SANDBOX_SHOP_PATH = '/sandbox/shop';

/** The demo shop's URLs as the seed stores them. */
export function sandboxShopUrls(publicBaseUrl: string) {
  const base = `${publicBaseUrl.replace(/\/+$/, '')}${SANDBOX_SHOP_PATH}`;
  return { resultUrl: `${base}/result`, successUrl: `${base}/success`, failUrl: `${base}/fail` };
}
