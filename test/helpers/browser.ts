import { mkdirSync } from 'node:fs';
import { freePort } from './service-process.js';
import { setupTestApp, type TestApp } from './app.js';

export { launchChromium } from './chromium.js';

/** A test app listening on 127.0.0.1 (PUBLIC_BASE_URL is its address) and the screenshot folder made. */
export async function listeningTestApp(artifacts: string, env: Record<string, string> = {}): Promise<{ t: TestApp; base: string }> {
  mkdirSync(artifacts, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await setupTestApp({ PUBLIC_BASE_URL: base, ...env });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, base };
}
