import type { Queryable } from '../db/client.js';
import { mailTexts, type MailText } from './templates.js';

/** The team invitation mail, naming the merchant that invites (read in the inviting transaction). */
export async function teamInviteMail(c: Queryable, merchantId: string, link: string, role: string, days: number): Promise<MailText> {
  const r = await c.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [merchantId]);
  return mailTexts.teamInvite(link, role, days, r.rows[0]?.name ?? merchantId);
}
