import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { setupTestApp, type TestApp } from './app.js';
import { freePort } from './service-process.js';

/** Debian's Chromium, headless, with the options the browser tests use. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The app listening on a free local port (PUBLIC_BASE_URL set to it), a browser, and a screenshot folder. */
export async function browserTestApp(artifacts: string): Promise<{ t: TestApp; base: string; browser: Browser }> {
  mkdirSync(artifacts, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await setupTestApp({ PUBLIC_BASE_URL: base });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, base, browser: await launchChromium() };
}
