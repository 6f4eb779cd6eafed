import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = { DATABASE_URL: 'postgresql://x@127.0.0.1/x', ADMIN_API_TOKEN: 'a'.repeat(24), TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig(base);
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(3000);
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:3000');
    expect(c.tz).toBe('Europe/Moscow');
    expect(c.sandboxProcessingDelayMs).toBe(1000);
    expect(c.runWorkers).toBe(true);
    // With DATABASE_URL the deployment is production unless it says otherwise; private webhook
    // URLs are allowed by default only in the sandbox profile.
    expect(c.profile).toBe('production');
    expect(c.allowPrivateWebhookUrls).toBe(false);
    expect(c.allowPrivateProviderUrls).toBe(false);
  });

  it('PAYMENTS_PROFILE: sandbox without DATABASE_URL (embedded), production with it, or as set', () => {
    const { DATABASE_URL: _url, ...embedded } = base;
    expect(loadConfig(embedded).profile).toBe('sandbox');
    expect(loadConfig(embedded).allowPrivateWebhookUrls).toBe(true);
    expect(loadConfig({ ...base, PAYMENTS_PROFILE: 'sandbox' }).profile).toBe('sandbox');
    expect(loadConfig({ ...base, PAYMENTS_PROFILE: 'sandbox' }).allowPrivateWebhookUrls).toBe(true);
    expect(loadConfig(embedded).allowPrivateProviderUrls).toBe(true);
    expect(loadConfig({ ...base, PAYMENTS_PROFILE: 'sandbox' }).allowPrivateProviderUrls).toBe(true);
    expect(loadConfig({ ...embedded, PAYMENTS_PROFILE: 'production' }).allowPrivateProviderUrls).toBe(false);
    expect(loadConfig({ ...base, ALLOW_PRIVATE_PROVIDER_URLS: 'true' }).allowPrivateProviderUrls).toBe(true);
    expect(loadConfig({ ...embedded, PAYMENTS_PROFILE: 'production' }).profile).toBe('production');
    expect(() => loadConfig({ ...base, PAYMENTS_PROFILE: 'staging' })).toThrow(/PAYMENTS_PROFILE/);
  });

  it.each([
    ['ADMIN_API_TOKEN', { ...base, ADMIN_API_TOKEN: '' }],
    ['TOKEN_ENCRYPTION_KEY', { ...base, TOKEN_ENCRYPTION_KEY: '' }],
    ['TOKEN_ENCRYPTION_KEY', { ...base, TOKEN_ENCRYPTION_KEY: 'c2hvcnQ=' }],
    ['PORT', { ...base, PORT: 'eighty' }],
    ['RUN_WORKERS', { ...base, RUN_WORKERS: 'maybe' }],
  ])('a missing or bad %s is refused with a message naming it', (name, env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(name));
  });
});

// `npm start` is a cold tsx process (its exit and stderr are the subject): it runs in a hook
// (hookTimeout), the test reads what it left.
describe('configuration at npm start', () => {
  let r: { status: number | null; stderr: string };
  beforeAll(async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/main.ts'], {
      env: { PATH: process.env.PATH, DATABASE_URL: base.DATABASE_URL, TOKEN_ENCRYPTION_KEY: base.TOKEN_ENCRYPTION_KEY },
      cwd: process.cwd(), stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const status = await new Promise<number | null>((resolve) => child.once('close', (code) => { clearTimeout(timer); resolve(code); }));
    r = { status, stderr };
  });

  it('with DATABASE_URL but no ADMIN_API_TOKEN it stops with one line naming the setting', () => {
    expect(r.status, r.stderr).not.toBeNull();
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/ADMIN_API_TOKEN/);
  });
});
