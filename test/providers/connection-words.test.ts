import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { providerFetch } from '../../src/domain/providers/provider-http.js';
import { ConnectorRefusedError } from '../../src/domain/providers/connector.js';

/** A connection error an operator reads (connector health, test connection, a payment's failure) is said in words. */
const call = async (url: string) => {
  try {
    await providerFetch('yookassa', url, { method: 'GET', headers: {} }, AbortSignal.timeout(10_000), { allowPrivate: true });
  } catch (e) { return e as Error; }
  throw new Error('the call did not fail');
};

describe('connection errors in words', () => {
  it('an unknown host reads "host name was not found", the code only in brackets', async () => {
    const e = await call('http://no-such-host.invalid/v3/me');
    expect(e).toBeInstanceOf(ConnectorRefusedError);
    expect(e.message).toMatch(/^yookassa: the provider's host name was not found \(check the base URL or DNS\), so the request was not sent \((ENOTFOUND|EAI_AGAIN)\)$|^yookassa: the provider's host name could not be looked up just now/);
  });

  it('a refused connection reads "refused the connection"', async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); }); });
    const e = await call(`http://127.0.0.1:${port}/v3/me`);
    expect(e.message).toBe("yookassa: the provider's address refused the connection, so the request was not sent (ECONNREFUSED)");
  });
});
