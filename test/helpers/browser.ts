import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { freePort } from './service-process.js';
import { setupTestApp, type TestApp } from './app.js';
import { launchChromium } from './chromium.js';

export { launchChromium };

/** A test app listening on 127.0.0.1 (PUBLIC_BASE_URL is its address) and the screenshot folder made. */
export async function listeningTestApp(artifacts: string, env: Record<string, string> = {}): Promise<{ t: TestApp; base: string }> {
  mkdirSync(artifacts, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await setupTestApp({ PUBLIC_BASE_URL: base, ...env });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, base };
}

/** The app listening on a free local port (PUBLIC_BASE_URL set to it), a browser, and a screenshot folder. */
export async function browserTestApp(artifacts: string): Promise<{ t: TestApp; base: string; browser: Browser }> {
  const { t, base } = await listeningTestApp(artifacts);
  return { t, base, browser: await launchChromium() };
}
