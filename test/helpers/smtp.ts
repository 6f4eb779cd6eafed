import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { TestApp } from './app.js';
import { startMailWorker, type MailWorkerOptions } from '../../src/workers/mail.js';
import type { Worker } from '../../src/workers/index.js';

/** One message as the test SMTP server received it, its text decoded. */
export interface ReceivedMail { from: string; to: string[]; subject: string; text: string; raw: string }

/** Quoted-printable or base64 bodies, as nodemailer writes them; 7bit/8bit as they are. */
function decodeBody(headers: string, body: string): string {
  const enc = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (enc === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const subject = /^subject:\s*(.*)$/im.exec(headers)?.[1]?.trim() ?? '';
  return { from, to, subject, text: decodeBody(headers, body).replace(/\r\n/g, '\n'), raw };
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package; no TLS, any or no login) that
 * keeps what it receives. `refuseNext(n, code)` answers the next n messages with an SMTP error
 * (a 4xx is "try again later").
 */
export async function startSmtpServer(): Promise<{
  url: string; port: number; received: ReceivedMail[]; refuseNext(n: number, code?: number): void;
  waitFor(pred: (m: ReceivedMail) => boolean, ms?: number): Promise<ReceivedMail>; close(): Promise<void>;
}> {
  const received: ReceivedMail[] = [];
  let refuse = 0;
  let refuseCode = 451;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuse > 0) {
          refuse -= 1;
          const err = Object.assign(new Error('Try again later'), { responseCode: refuseCode });
          return callback(err);
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push(parse(Buffer.concat(chunks).toString('utf8'), from, session.envelope.rcptTo.map((r) => r.address)));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`, port, received,
    refuseNext(n, code = 451) { refuse = n; refuseCode = code; },
    async waitFor(pred, ms = 10_000) {
      const until = Date.now() + ms;
      for (;;) {
        const m = received.find(pred);
        if (m) return m;
        if (Date.now() > until) throw new Error(`no such mail within ${ms} ms; received: ${JSON.stringify(received.map((x) => [x.to, x.subject]))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The mail worker of the service on a test app (fast polls; short retry delays unless given). */
export function startTestMailWorker(t: TestApp, opts: MailWorkerOptions & { log?: pino.Logger } = {}): Worker {
  return startMailWorker({ config: t.config, db: t.db, services: t.app.services, log: opts.log ?? pino({ level: 'silent' }) }, { pollMs: 25, retryDelaysMs: [200, 200, 200], ...opts });
}

/** The one-time link in a password reset mail (the cabinet's, or the console's with `face` 'operator'). */
export const resetLinkOf = (m: ReceivedMail, face: 'cabinet' | 'operator' = 'cabinet'): string => {
  const link = new RegExp(`(https?://\\S+/${face}/password-reset\\?token=[A-Za-z0-9_-]+)`).exec(m.text)?.[1];
  if (!link) throw new Error(`no reset link in: ${m.text}`);
  return link;
};
