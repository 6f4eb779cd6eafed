import nodemailer from 'nodemailer';
import type { AttemptOutcome } from '../lib/delivery-retry.js';

export interface MailSender {
  send(m: { to: string; subject: string; text: string }): Promise<void>;
  close(): void;
}

/**
 * nodemailer's SMTP transport for SMTP_URL (smtp:// with STARTTLS when the server offers it,
 * smtps:// for implicit TLS; credentials in the URL). Bounded waits, so a silent server costs
 * an attempt, not a stuck worker. nodemailer's own logger stays off: it would print the message.
 */
export function smtpSender(url: string, from: string): MailSender {
  const transport = nodemailer.createTransport({
    url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, logger: false, debug: false,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(m) { await transport.sendMail({ from, to: m.to, subject: m.subject, text: m.text }); },
    close() { transport.close(); },
  };
}

/**
 * What a failed send means for the mail (src/lib/delivery-retry.ts's outcomes, the postbacks' schedule):
 * a 4xx reply (greylisting, a full queue) and network errors are retried; a 5xx reply (the
 * server refuses the sender or the recipient) is retried a few times only, then the mail is dead.
 */
export function smtpOutcome(err: unknown): AttemptOutcome {
  const e = err as { responseCode?: number; code?: string; message?: string };
  const reason = (e.responseCode ? `SMTP ${e.responseCode}` : e.code ?? 'error') + (e.message ? `: ${e.message}` : '');
  if (typeof e.responseCode === 'number' && e.responseCode >= 500) return { kind: 'refused', reason: reason.slice(0, 300) };
  return { kind: 'retryable', reason: reason.slice(0, 300) };
}
