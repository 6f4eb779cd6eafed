import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loggerOptions, prettyStream } from '../../src/logger.js';

function prettyLogger() {
  const lines: string[] = [];
  const out = Object.assign(Object.create(process.stdout) as NodeJS.WriteStream, {
    isTTY: false,
    write: (s: string) => { lines.push(...s.split('\n').filter(Boolean)); return true; },
  });
  const { stream: _json, ...opts } = loggerOptions('info', { format: 'json' });
  return { log: pino(opts, prettyStream(out)), lines };
}

describe('development logs (LOG_FORMAT=pretty, the default on a terminal)', () => {
  it('a request is one readable line: time, level, method, path without query, status, duration', () => {
    const { log, lines } = prettyLogger();
    const req = log.child({ reqId: 'req-7' });
    req.info({ req: { method: 'POST', url: '/api/v1/bill/create?token=secret', id: 'req-7' } }, 'incoming request');
    req.info({ res: { statusCode: 200 }, responseTime: 4.123 }, 'request completed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/api\/v1\/bill\/create 200 4\.1 ms$/);
    expect(lines[0]).not.toContain('{');
  });

  it('other entries keep their fields as key=value, errors their stack, and redaction still applies', () => {
    const { log, lines } = prettyLogger();
    log.warn({ eventId: 'ev1', body: { card_number: '4242424242424242' } }, 'outbox: slow receiver');
    log.error({ err: new Error('boom') }, 'outbox: claim failed');
    expect(lines[0]).toMatch(/WARN {2}outbox: slow receiver eventId=ev1 body=\{"card_number":"\[redacted\]"\}$/);
    expect(lines[1]).toMatch(/ERROR outbox: claim failed$/);
    expect(lines[2]).toMatch(/^ {4}Error: boom$/);
    expect(lines.join('\n')).not.toContain('4242424242424242');
  });

  it('LOG_FORMAT: json gives pino JSON lines (production), pretty a stream of lines; anything else stops start-up', () => {
    expect(loggerOptions('info', { format: 'json' }).stream).toBeUndefined();
    expect(loggerOptions('info', { format: 'pretty' }).stream).toBeDefined();
    const base = { ADMIN_API_TOKEN: 'x'.repeat(32), TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };
    expect(loadConfig(base).logFormat).toBe('auto');
    expect(loadConfig({ ...base, LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ ...base, LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT must be auto, json or pretty/);
  });
});
