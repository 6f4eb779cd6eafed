import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { assertSafeUrl, checkUrlShape, isPrivateAddress, UnsafeUrlError } from '../../src/outbox/url-guard.js';

describe('outbound URL guard', () => {
  it('accepts only http(s) URLs with a host and no credentials', () => {
    expect(checkUrlShape('https://shop.example/result?x=1').hostname).toBe('shop.example');
    for (const bad of ['ftp://shop.example/x', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://x', 'not a url', 'https://user:pw@shop.example/']) {
      expect(() => checkUrlShape(bad), bad).toThrow(UnsafeUrlError);
    }
  });

  it('refuses private, loopback, link-local and similar addresses', () => {
    for (const ip of ['127.0.0.1', '127.5.5.5', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
      '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fc00::1', 'fd12::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '224.0.0.1']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(ip), ip).toBe(false);
    }
  });

  it('refuses private, loopback and link-local hosts unless private URLs are allowed', async () => {
    for (const url of ['http://127.0.0.1/x', 'http://localhost:8080/x', 'http://[::1]/x', 'http://169.254.169.254/latest', 'https://10.0.0.5/hook', `http://${hostname()}/x`]) {
      await expect(assertSafeUrl(url, false), url).rejects.toThrow(UnsafeUrlError);
      await expect(assertSafeUrl(url, true), url).resolves.toBeInstanceOf(URL);
    }
  });

  it('accepts a public address; refuses a non-http URL even when private URLs are allowed', async () => {
    await expect(assertSafeUrl('https://8.8.8.8/hook', false)).resolves.toBeInstanceOf(URL);
    await expect(assertSafeUrl('ftp://8.8.8.8/hook', true)).rejects.toThrow(UnsafeUrlError);
  });

  it('refuses a host that does not resolve', async () => {
    await expect(assertSafeUrl('https://no-such-host.invalid/hook', false)).rejects.toThrow(/does not resolve/);
  });
});
