import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { newBillId } from '../../lib/ids.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import type { ParsedNotification, SavedCard } from '../providers/connector.js';
import { apiAddress, type RehearsalFindings } from '../providers/rehearsal-findings.js';
import { activeFiscal, fiscalOf } from '../receipt/fiscal.js';
import { paymentReceipt, type Receipt } from '../receipt/receipt.js';
import { PayerBrowser } from './payer-page.js';
import { REHEARSAL_PROVIDERS } from './rehearsal.providers.js';
import { runRehearsal } from './rehearsal.run.js';
import { masked, type RehearsalStatus, type RehearsalStep } from './rehearsal.step.js';

/** Every id a rehearsal gives a provider starts so; a merchant's ids are base62 only, so none can. */
export const REHEARSAL_ID_PREFIX = 'rh-';

export interface RehearsalRecord {
  id: string; connector: string; kind: string; status: RehearsalStatus; shopId: string | null; publicUrl: string | null;
  steps: RehearsalStep[]; failedSteps: number; startedAt: Date; finishedAt: Date | null;
  /** What the run answered of the questions the providers' documents leave open (docs/adr/0135). */
  findings: RehearsalFindings;
}

interface Row {
  id: string; connector: string; kind: string; status: RehearsalStatus; shop_id: string | null; public_url: string | null;
  steps: RehearsalStep[]; failed_steps: number; started_at: Date; finished_at: Date | null; findings: RehearsalFindings;
}
const COLUMNS = 'id, connector, kind, status, shop_id, public_url, steps, failed_steps, started_at, finished_at, findings';
const toRecord = (r: Row): RehearsalRecord => ({
  id: r.id, connector: r.connector, kind: r.kind, status: r.status, shopId: r.shop_id, publicUrl: r.public_url,
  steps: r.steps, failedSteps: r.failed_steps, startedAt: r.started_at, finishedAt: r.finished_at, findings: r.findings,
});

/**
 * How long a run may take at most: every wait of every step at once, with the payer's pages, is
 * well inside it. A row still `running` past it is a run whose process is gone (docs/adr/0136).
 */
export const RUN_TIMEOUT_MS = 30 * 60_000;

export interface RehearsalWaits { settleMs: number; notificationMs: number; pollMs: number; runMs: number }

export interface RehearsalStart { id: string; connector: string; shopId: string | null; publicUrl: string | null }

/**
 * Go-live rehearsals of connectors (docs/adr/0104-connector-rehearsals.md): a run is recorded
 * `running` and goes on in the background of this process, outside any transaction, each step
 * written as it ends; its payments are the run's own (ids REHEARSAL_ID_PREFIX...), written into no
 * money table (docs/adr/0105-rehearsal-money-kept-apart.md). `waits` lets a test bound its waits.
 */
export class RehearsalService {
  private readonly running = new Set<Promise<void>>();
  /** The runs this process is carrying on (their rows are never taken for interrupted). */
  private readonly mine = new Set<string>();

  constructor(
    private readonly config: Config, private readonly db: Db, private readonly connectors: ConnectorRegistry,
    private readonly waits: RehearsalWaits = { settleMs: 60_000, notificationMs: 30_000, pollMs: 200, runMs: RUN_TIMEOUT_MS },
  ) {}

  /** Checks the request, records the run `running`, starts it; 404 for an unknown connector, 422 naming the field. */
  async start(name: string, body: Record<string, unknown>, audit?: InTx<RehearsalStart>): Promise<RehearsalRecord> {
    const c = await this.connectors.find(name);
    if (!c) throw new NotFoundError('Connector not found.');
    const errors: Record<string, string[]> = {};
    if (!REHEARSAL_PROVIDERS[c.kind]) errors.name = [`Connectors of kind ${c.kind} talk to no provider of their own: nothing to rehearse.`];
    // A rehearsal pays, holds and refunds: only with the provider's test terminal or test shop,
    // never with credentials that move real money (docs/adr/0105-rehearsal-money-kept-apart.md).
    else if (c.mode === 'live') errors.name = ['A rehearsal runs only on a test connector (the provider\'s test terminal or test shop): a live one would make its payments with real money. Add a connector of the same kind with mode "test" and the provider\'s test credentials, and rehearse that.'];
    const shopId = body.shop_id ?? null;
    const publicUrl = body.public_url ?? null;
    if (shopId !== null && (typeof shopId !== 'string' || shopId.length > 64)) errors.shop_id = ['The shop_id must be a shop\'s id.'];
    if (publicUrl !== null && (typeof publicUrl !== 'string' || publicUrl.length > 500 || !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(publicUrl))) errors.public_url = ['The public_url must be an http(s) URL.'];
    if (Object.keys(errors).length === 0 && typeof shopId === 'string') {
      const s = await this.db.pool.query('SELECT 1 FROM shops WHERE id = $1', [shopId]);
      if (s.rowCount === 0) errors.shop_id = ['No shop has this id.'];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const start: RehearsalStart = { id: newBillId(), connector: name, shopId: shopId as string | null, publicUrl: publicUrl === null ? null : (publicUrl as string).replace(/\/+$/, '') };
    const row = await withPgTx(this.db.pool, async (tx) => {
      const r = await tx.query<Row>(
        `INSERT INTO connector_rehearsals (id, connector, kind, shop_id, public_url) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
        [start.id, name, c.kind, start.shopId, start.publicUrl]);
      if (audit) await audit(tx, start);
      return r.rows[0]!;
    });
    this.mine.add(start.id);
    const p = this.run(start).catch(() => { /* recorded as the run's failure */ }).finally(() => { this.running.delete(p); this.mine.delete(start.id); });
    this.running.add(p);
    return toRecord(row);
  }

  private async run(s: RehearsalStart): Promise<void> {
    const steps: RehearsalStep[] = [];
    const findings: RehearsalFindings = {};
    const payer = new PayerBrowser(`${s.publicUrl ?? this.config.publicBaseUrl}/rehearsals/${s.id}/returned`);
    try {
      const built = await this.connectors.buildFor(s.connector, s.publicUrl ?? this.config.publicBaseUrl);
      const provider = built ? REHEARSAL_PROVIDERS[built.connector.kind] : undefined;
      if (!built || !provider) throw new Error('the connector is gone or of a kind this build cannot rehearse');
      const secrets = Object.values(built.secrets).filter((v): v is string => typeof v === 'string');
      const wait = this.waits;
      await this.db.pool.query('UPDATE connector_rehearsals SET api_url = $2 WHERE id = $1', [s.id, apiAddress(provider.baseUrl(built))]);
      await runRehearsal({
        connector: built.connector, row: built, provider, payer, idPrefix: `${REHEARSAL_ID_PREFIX}${s.id}-`,
        returnUrl: `${s.publicUrl ?? this.config.publicBaseUrl}/rehearsals/${s.id}/returned`, publicUrl: s.publicUrl,
        receipt: await this.receiptOf(s.shopId),
        call: (op, fn) => this.connectors.call(built.connector, op, fn),
        waitNotice: (id, ms) => this.until(async () => {
          const r = await this.db.pool.query<{ event_key: string }>('SELECT event_key FROM connector_rehearsal_notices WHERE connector = $1 AND object_id = $2 LIMIT 1', [s.connector, id]);
          return r.rows[0] ? { eventKey: r.rows[0].event_key } : null;
        }, ms),
        waitSaved: (id, ms) => this.until(async () => {
          const r = await this.db.pool.query<{ saved: string }>(
            'SELECT saved_method_enc AS saved FROM connector_rehearsal_notices WHERE connector = $1 AND object_id = $2 AND saved_method_enc IS NOT NULL LIMIT 1', [s.connector, id]);
          return r.rows[0] ? JSON.parse(decrypt(this.config.tokenEncryptionKey, r.rows[0].saved)) as SavedCard : null;
        }, ms),
        learn: async (f) => {
          Object.assign(findings, f);
          await this.db.pool.query('UPDATE connector_rehearsals SET findings = $2::jsonb WHERE id = $1', [s.id, JSON.stringify(findings)]);
        },
        until: (fn, ms) => this.until(fn, ms),
        waits: { settleMs: wait.settleMs, notificationMs: wait.notificationMs },
      }, async (step) => {
        steps.push({ ...step, raw: masked(step.raw, secrets) });
        await this.save(s.id, steps, null);
      });
      await this.save(s.id, steps, steps.some((x) => x.status === 'failed') ? 'failed' : 'passed');
    } catch (e) {
      steps.push({ name: 'rehearsal', status: 'failed', detail: `the rehearsal stopped: ${(e as Error).message}`, raw: null });
      await this.save(s.id, steps, 'failed');
    } finally {
      await payer.close();
    }
  }

  private async save(id: string, steps: RehearsalStep[], status: 'passed' | 'failed' | null): Promise<void> {
    await this.db.pool.query(
      `UPDATE connector_rehearsals SET steps = $2::jsonb, failed_steps = $3,
              status = COALESCE($4, status), finished_at = CASE WHEN $4::text IS NULL THEN NULL ELSE now() END
        WHERE id = $1 AND status = 'running'`,
      [id, JSON.stringify(steps), steps.filter((x) => x.status === 'failed').length, status]);
  }

  /** The shop's fiscal settings as receipts (with the merchant's e-mail as the customer), or why none is sent. */
  private async receiptOf(shopId: string | null): Promise<{ of: (amount: Decimal) => Receipt | null; why: string | null }> {
    const none = (why: string) => ({ of: () => null, why });
    if (!shopId) return none('no shop_id given, so no shop\'s fiscal settings');
    const r = await this.db.pool.query<{ fiscalization: unknown; email: string | null }>(
      'SELECT s.fiscalization, m.email FROM shops s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = $1', [shopId]);
    const fiscal = activeFiscal(fiscalOf(r.rows[0]?.fiscalization));
    if (!fiscal) return none(`the shop ${shopId} does not fiscalize`);
    const email = r.rows[0]!.email;
    return {
      of: (amount) => paymentReceipt({
        fiscal, billName: 'Rehearsal', billDescription: null, items: [], totalRub: amount, payerCommission: new Decimal(0), rate: new Decimal(1), rub: true, email, phone: null,
      }),
      why: null,
    };
  }

  private async until<T>(fn: () => Promise<T | null>, ms: number): Promise<T | null> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== null) return v;
      if (Date.now() >= end) return null;
      await new Promise((r) => setTimeout(r, this.waits.pollMs));
    }
  }

  /**
   * A verified notification about a rehearsal's own object (our id starts REHEARSAL_ID_PREFIX):
   * noted for the run that waits on it and answered as the provider expects; never applied.
   * False for anything else (the usual path applies it).
   */
  async heard(connector: string, n: Extract<ParsedNotification, { ok: true }>): Promise<boolean> {
    if (!n.ourId?.startsWith(REHEARSAL_ID_PREFIX)) return false;
    // The card the provider saved for the run's payment (T-Bank names it only here), kept encrypted for its saved_card step.
    const saved = n.object === 'payment' && 'outcome' in n && 'saved' in n.outcome ? (n.outcome as { saved?: SavedCard }).saved : undefined;
    await this.db.pool.query(
      `INSERT INTO connector_rehearsal_notices (connector, event_key, object_type, object_id, provider_ref, saved_method_enc) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (connector, event_key) DO NOTHING`,
      [connector, n.eventKey, n.object, n.ourId, n.ref, saved ? encrypt(this.config.tokenEncryptionKey, JSON.stringify(saved)) : null]);
    return true;
  }

  /**
   * Runs no process carries on any more become `failed`, "interrupted" (docs/adr/0136): a row
   * `running` past RUN_TIMEOUT_MS that is not one of this process's runs (the process that started
   * it was restarted or is gone). Each finds its own end once; a run's later save changes nothing.
   */
  async endInterrupted(): Promise<number> {
    const step = { name: 'rehearsal', status: 'failed', detail: `interrupted: the run did not end within ${this.waits.runMs / 60_000} min (the process that carried it was restarted or stopped); start a new one`, raw: null };
    const r = await this.db.pool.query(
      `UPDATE connector_rehearsals SET status = 'failed', finished_at = now(), steps = steps || $2::jsonb, failed_steps = failed_steps + 1
        WHERE status = 'running' AND started_at < now() - make_interval(secs => $1::double precision / 1000) AND NOT (id = ANY($3::text[]))`,
      [this.waits.runMs, JSON.stringify([step]), [...this.mine]]);
    return r.rowCount ?? 0;
  }

  /**
   * The warning due when a live connector is switched on and no rehearsal of its kind ever passed
   * (docs/adr/0106); null otherwise. The console and the operator API say the same words.
   */
  async unrehearsedWarning(c: { mode: string; kind: string; enabled: boolean }): Promise<string | null> {
    if (!c.enabled || c.mode !== 'live' || await this.kindPassed(c.kind)) return null;
    return `no rehearsal of a ${c.kind} connector has ever passed; rehearse one against the provider's test terminal before real money.`;
  }

  /** A connector's rehearsals, newest first. */
  async list(name: string, limit = 50): Promise<RehearsalRecord[]> {
    if (!await this.connectors.find(name)) throw new NotFoundError('Connector not found.');
    await this.endInterrupted();
    const r = await this.db.pool.query<Row>(`SELECT ${COLUMNS} FROM connector_rehearsals WHERE connector = $1 ORDER BY started_at DESC, id DESC LIMIT $2`, [name, limit]);
    return r.rows.map(toRecord);
  }

  async find(name: string, id: string): Promise<RehearsalRecord> {
    await this.endInterrupted();
    const r = await this.db.pool.query<Row>(`SELECT ${COLUMNS} FROM connector_rehearsals WHERE connector = $1 AND id = $2`, [name, id]);
    if (!r.rows[0]) throw new NotFoundError('Rehearsal not found.');
    return toRecord(r.rows[0]);
  }

  /** Whether a connector of `kind` ever passed a rehearsal (enabling a live one without warns). */
  async kindPassed(kind: string): Promise<boolean> {
    const r = await this.db.pool.query(`SELECT 1 FROM connector_rehearsals WHERE kind = $1 AND status = 'passed' LIMIT 1`, [kind]);
    return (r.rowCount ?? 0) > 0;
  }

  /** Waits for the runs of this process to end (shutdown, tests). */
  async drain(): Promise<void> { await Promise.all([...this.running]); }
}
