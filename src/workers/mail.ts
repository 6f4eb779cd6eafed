import type { Worker, WorkerContext } from './index.js';
import type { ClaimedMail, MailOutbox } from '../mail/mail-outbox.js';
import { smtpOutcome, smtpSender, type MailSender } from '../mail/smtp.js';
import { decide } from '../lib/delivery-retry.js';
import { startPollLoop } from './poll-loop.js';

export interface MailWorkerOptions {
  pollMs?: number;
  /** Retry delays after each failed attempt (tests shorten them); default the postbacks' schedule. */
  retryDelaysMs?: readonly number[];
  /** Another sender than SMTP_URL's (none in the code; kept for a second transport later). */
  sender?: MailSender;
}

/**
 * Sends one claimed mail and records the outcome; never throws. With no sender (no SMTP_URL) in
 * the sandbox profile the mail is kept in the dev mailbox. Log lines name the mail's id and
 * kind, never its address, subject or text (a reset link is a password).
 */
async function sendOne(ctx: WorkerContext, mail: MailOutbox, sender: MailSender | null, m: ClaimedMail, delays?: readonly number[]): Promise<void> {
  if (!sender) { await mail.kept(m.id); return; }
  if (m.text === null) {
    // Nothing sensible to send (the key changed under it): given up, for the operator to see.
    ctx.log.error({ mailId: m.id, kind: m.kind }, 'mail: the text cannot be read');
    await mail.failed(m.id, 'the text cannot be read (TOKEN_ENCRYPTION_KEY changed?)', null);
    return;
  }
  try {
    await sender.send({ to: m.to, subject: m.subject, text: m.text });
    await mail.sent(m.id);
  } catch (err) {
    const outcome = smtpOutcome(err);
    const d = decide(outcome, m.attempts + 1, new Date(), Math.random, delays);
    const reason = outcome.kind === 'delivered' ? '' : outcome.reason;
    ctx.log.warn({ mailId: m.id, kind: m.kind, attempt: m.attempts + 1, error: reason, retry: d.status === 'PENDING' }, 'mail: send failed');
    await mail.failed(m.id, reason, d.status === 'PENDING' ? d.nextAttemptAt : null);
  }
}

/**
 * The mail worker: claims due mail from mail_outbox under a lease and sends it over SMTP_URL,
 * retrying as postbacks are retried (src/lib/delivery-retry.ts). In production without SMTP_URL it
 * does not run: mail waits in the queue (the mailbox page lists it) and one warning says so.
 */
export function startMailWorker(ctx: WorkerContext, opts: MailWorkerOptions = {}): Worker {
  const { config, log } = ctx;
  const mail = ctx.services.mail;
  const sender = opts.sender ?? (config.smtpUrl ? smtpSender(config.smtpUrl, config.mailFrom) : null);
  if (!sender && config.profile === 'production') {
    log.warn('SMTP_URL is not set: outgoing mail (password reset links, invitations, payout decisions) waits in the queue until it is; operator password resets are refused');
    return { name: 'mail', stop: async () => {} };
  }
  const loop = startPollLoop<ClaimedMail>({
    name: 'mail',
    log,
    concurrency: 4,
    pollMs: opts.pollMs ?? 1000,
    claim: (n) => mail.claim(n, config.workerLeaseMs),
    process: (m) => sendOne(ctx, mail, sender, m, opts.retryDelaysMs),
    release: (ms) => mail.release(ms.map((m) => m.id)),
  });
  return { name: 'mail', stop: async () => { await loop.stop(); sender?.close(); } };
}
