import type { InboundNotification, ParsedNotification } from '../../connector.js';

/** The sandbox answers at once: it never notifies, so anything claiming to be from it is forged. */
export async function parseSandboxNotification(_n?: InboundNotification): Promise<ParsedNotification> {
  return { ok: false, reason: 'the sandbox sends no notifications' };
}
