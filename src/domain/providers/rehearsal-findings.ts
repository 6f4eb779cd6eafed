import type { Queryable } from '../../db/client.js';

/**
 * What a go-live rehearsal learnt where a provider's documents leave a meaning open
 * (docs/adr/0135-rehearsal-findings-narrow-the-connector.md). A key is present only once a
 * rehearsal's step answered it; absent, the question is open.
 * - `getstate_amount_after_refund`: T-Bank GetState's `Amount` after a refund is what is left
 *   (`left`) or what the payment was (`paid`).
 * - `charge_enabled`: the terminal's Charge (a saved card's recurring charge) was taken (true) or
 *   refused as not enabled (false). It belongs to the rehearsed terminal's keys alone.
 */
export interface RehearsalFindings {
  getstate_amount_after_refund?: 'left' | 'paid';
  charge_enabled?: boolean;
}

/** The questions a rehearsal report answers, in the order it lists them. */
export const FINDING_KEYS = ['getstate_amount_after_refund', 'charge_enabled'] as const;

/** A provider's API address as findings key it (no trailing slash). */
export const apiAddress = (url: string): string => url.replace(/\/+$/, '');

/**
 * How T-Bank GetState's `Amount` reads after a refund, as the latest finished rehearsal of a
 * connector of `kind` that talked to the API at `apiUrl` found it; null while no rehearsal there
 * answered it. It is the provider's behaviour at that address, so it holds for every connector of
 * the kind calling it; an emulator's reading never reaches a connector of the real API. (Charge
 * being enabled is one terminal's setting: the report shows it, no other connector reads it.)
 */
export async function rehearsedAmountReading(db: Queryable, kind: string, apiUrl: string): Promise<'left' | 'paid' | null> {
  const r = await db.query<{ reading: string }>(
    `SELECT findings->>'getstate_amount_after_refund' AS reading FROM connector_rehearsals
      WHERE kind = $1 AND api_url = $2 AND finished_at IS NOT NULL AND findings ? 'getstate_amount_after_refund'
      ORDER BY finished_at DESC LIMIT 1`, [kind, apiAddress(apiUrl)]);
  const reading = r.rows[0]?.reading;
  return reading === 'left' || reading === 'paid' ? reading : null;
}
