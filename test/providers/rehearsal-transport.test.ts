import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTransport } from '../../src/domain/rehearsal/transport.js';

/**
 * The rehearsal's transport step over real TLS: a provider's API whose chain ends at a root this
 * system does not trust fails, naming the chain; the same chain passes once its root is added the
 * way the image adds T-Bank's Russian Trusted Root (NODE_EXTRA_CA_CERTS, docs/adr/0089).
 */
let dir: string;
let server: Server;
let url: string;

/** A root CA "Rehearsal Test Root" and a leaf for localhost signed by it, made with openssl. */
function makeChain(at: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: at, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Rehearsal Test Root');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  writeFileSync(join(at, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '2', '-extfile', 'san.ext');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rh-tls-'));
  makeChain(dir);
  const cert = readFileSync(join(dir, 'leaf.pem'));
  const ca = readFileSync(join(dir, 'ca.pem'));
  server = createServer({ key: readFileSync(join(dir, 'leaf.key')), cert: Buffer.concat([cert, ca]) }, (_q, r) => { r.end('{}'); });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `https://localhost:${(server.address() as AddressInfo).port}/v2/`;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
  rmSync(dir, { recursive: true, force: true });
});

describe('the rehearsal transport step over TLS', () => {
  it('fails a chain whose root this system does not trust, naming the chain and the reason', async () => {
    const step = await checkTransport(url, false);
    expect(step.status).toBe('failed');
    expect(step.detail).toMatch(/^TLS chain not trusted \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/);
    expect(step.detail).toContain('localhost <- Rehearsal Test Root');
    expect(step.raw).toMatchObject({ authorized: false });
  });

  it('passes the same chain when its root is added as the image adds T-Bank\'s (NODE_EXTRA_CA_CERTS), naming the root', async () => {
    // NODE_EXTRA_CA_CERTS is read when a process starts: the step runs in a process of its own
    // (asynchronously: this process serves the handshake).
    const script = `import { checkTransport } from './src/domain/rehearsal/transport.ts';
      process.stdout.write(JSON.stringify(await checkTransport(${JSON.stringify(url)}, false)));`;
    const { stdout: out } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') }, encoding: 'utf8',
    });
    const step = JSON.parse(out) as { status: string; detail: string };
    expect(step.status).toBe('passed');
    expect(step.detail).toMatch(/^TLS TLSv1\.[23]: localhost <- Rehearsal Test Root; root Rehearsal Test Root trusted by this system$/);
  });

  it('fails a host that answers no TLS at all with why', async () => {
    const open = new Set<import('node:net').Socket>();
    const plain = await import('node:net').then((n) => n.createServer((s) => { open.add(s); s.end('HTTP/1.1 400 Bad Request\r\n\r\n'); }));
    await new Promise<void>((ok) => plain.listen(0, '127.0.0.1', ok));
    try {
      const step = await checkTransport(`https://127.0.0.1:${(plain.address() as AddressInfo).port}/`, false);
      expect(step.status).toBe('failed');
      expect(step.detail).toMatch(/^cannot reach 127\.0\.0\.1:\d+: /);
    } finally {
      for (const s of open) s.destroy();
      await new Promise((ok) => plain.close(ok));
    }
  });
});
