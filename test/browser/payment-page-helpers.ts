import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/** Chromium as the browser tests run it (Debian's, headless). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The shop's Success/Fail pages: records what was POSTed to them, by path. */
export interface ShopReceiver {
  base: string;
  received: Array<{ path: string; fields: Record<string, string> }>;
  close(): Promise<void>;
}

export async function startShopReceiver(): Promise<ShopReceiver> {
  const received: ShopReceiver['received'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const fields = Object.fromEntries(new URLSearchParams(body));
      if (req.method === 'POST') received.push({ path: req.url ?? '', fields });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Shop</title><h1 id="landed">${req.url === '/success' ? 'Thank you' : 'Payment failed'}</h1><pre>${JSON.stringify(fields).replace(/</g, '&lt;')}</pre>`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
