import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors.js';
import { Lifecycle, type Claimed, type OperationKind } from '../../src/domain/operations/lifecycle.js';
import { NEEDS_OPERATOR } from '../../src/domain/providers/connector.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';

/**
 * The lifecycle's send phase (src/domain/operations/lifecycle.ts) with a kind of the test's own
 * whose rows live in memory, so each rule is seen alone: the answer is reported before any of
 * it is applied; a final one is finished by the kind's own one-statement finish when it takes
 * it, else applied once as the provider's read; a request on an operation is heard as its
 * caller says; anything else is deferred, with an attention item past the give-up age.
 */
let t: TestApp;
let merchantId: string;
beforeAll(async () => {
  t = await setupTestApp();
  merchantId = (await createMerchant(t)).merchantId;
});
afterAll(async () => { await t?.close(); });

type Status = 'PROCESS' | 'SUCCESS' | 'FAIL';
interface Row { id: string; status: Status }
interface Answer {
  status: 'final' | 'later'; to?: 'SUCCESS' | 'FAIL';
  /** Why it is not final (a connector's unknown reason). */
  reason?: string;
  /** What the kind's wordOf makes of it: the provider's word about the money. */
  word?: 'succeeded' | 'failed';
}
interface Op extends Claimed { fast?: boolean }

/** A kind whose every phase is written to `log`; `answers`: what its provider says of each id. */
function world(opts: { waits?: boolean } = {}) {
  const log: string[] = [];
  const rows = new Map<string, Row>();
  const answers = new Map<string, Answer>();
  const kind: OperationKind<Status, Row, Answer, Op> = {
    type: 'refund',
    lock_: async (_c, target) => ('id' in target ? rows.get(target.id) ?? null : null),
    finalOf: (o) => (o.status === 'final' ? o.to! : null),
    wordOf: (o) => (o.word ? { status: o.word, ref: null } : null),
    finish_: async (_c, row, o) => { log.push(`finish_ ${row.id}`); row.status = o.to!; return row.status; },
    conflict_: async (_c, row, _o, word) => { log.push(`conflict_ ${row.id} ${word.status} ${word.via}`); return true; },
    hold_: async (_c, row) => { log.push(`hold_ ${row.id}`); },
    waits_: async (_c, row, _o, ctx) => { log.push(`waits_ ${row.id} ${ctx.via} ${ctx.attempts}`); return opts.waits === true; },
    decided: (_row, to) => ({ status: 'final', to }),
    illegal: (from, to) => new ConflictError(`${from} -> ${to}`),
    sendFromProvider_: async (op) => { log.push(`send ${op.id}`); return answers.get(op.id)!; },
    reconcileFromProvider_: async (op) => { log.push(`ask ${op.id}`); return answers.get(op.id)!; },
    readFromProvider_: async () => null,
    defer_: async (_c, op) => {
      log.push(`defer_ ${op.id}`);
      // With its provider for an hour.
      return { merchantId, connector: 'sandbox', ref: null, sentAt: new Date(Date.now() - 3_600_000) };
    },
    finishSent_: async (op, o) => {
      log.push(`finishSent_ ${op.id}`);
      if (!op.fast) return null;
      rows.get(op.id)!.status = o.to!;
      return { status: o.to! };
    },
  };
  const lifecycle = new Lifecycle(kind, { pool: t.db.pool, giveUpMs: 86_400_000, observer: (e) => log.push(`answered ${e.id}`) });
  const op = (id: string, answer: Answer, more: Partial<Op> = {}): Op => {
    rows.set(id, { id, status: 'PROCESS' });
    answers.set(id, answer);
    return { id, sentAt: null, checkAttempts: 0, ...more };
  };
  return { log, rows, lifecycle, op };
}

const attentionOf = async (id: string) =>
  (await t.db.pool.query(`SELECT object_type, reason FROM attention_items WHERE object_id = $1 AND kind = 'unknown_outcome'`, [id])).rows;

describe('the lifecycle\'s send phase', () => {
  it('a final answer the kind finishes itself (finishSent_) is reported first and applied there alone, what it finished handed back', async () => {
    const w = world();
    const sent = await w.lifecycle.send(w.op('s1', { status: 'final', to: 'SUCCESS' }, { fast: true }));
    expect(w.log).toEqual(['send s1', 'answered s1', 'finishSent_ s1']);
    expect(sent).toEqual({ outcome: { status: 'final', to: 'SUCCESS' }, applied: { applied: true, status: 'SUCCESS', id: 's1' }, finished: { status: 'SUCCESS' } });
  });

  it('a final answer the kind does not finish itself is applied once as the provider\'s read of its own call, its check counted; sent again it moves nothing', async () => {
    const w = world();
    const o = w.op('s2', { status: 'final', to: 'FAIL' }, { checkAttempts: 2 });
    expect(await w.lifecycle.send(o)).toEqual({ outcome: { status: 'final', to: 'FAIL' }, applied: { applied: true, status: 'FAIL', id: 's2' } });
    expect(w.log).toEqual(['send s2', 'answered s2', 'finishSent_ s2', 'waits_ s2 reconciliation 3', 'finish_ s2']);
    w.log.length = 0;
    expect((await w.lifecycle.send(o)).applied).toEqual({ applied: false, status: 'FAIL', id: 's2' });
    expect(w.log).not.toContain('finish_ s2');
  });

  it('a request on an operation already with its provider (via) is heard as its caller says and counts no check', async () => {
    const w = world();
    await w.lifecycle.send(w.op('s3', { status: 'final', to: 'SUCCESS' }, { checkAttempts: 5 }), { via: 'read' });
    expect(w.log).toContain('waits_ s3 read undefined');
    expect(w.rows.get('s3')!.status).toBe('SUCCESS');
  });

  it('no final answer is deferred, never finished: an attention item only once past the give-up age (the context\'s, or the caller\'s)', async () => {
    const w = world();
    const sent = await w.lifecycle.send(w.op('s4', { status: 'later' }));
    expect(sent).toEqual({ outcome: { status: 'later' }, applied: null });
    expect(w.log).toEqual(['send s4', 'answered s4', 'defer_ s4']);
    expect(w.rows.get('s4')!.status).toBe('PROCESS');
    expect(await attentionOf('s4')).toEqual([]);
    await w.lifecycle.send(w.op('s5', { status: 'later' }), { giveUpMs: 60_000 });
    expect(await attentionOf('s5')).toEqual([{ object_type: 'refund', reason: 'no final answer from sandbox within RECONCILE_GIVE_UP_MS (60000 ms)' }]);
  });

  it('run hands the caller\'s give-up age to the first send too', async () => {
    const w = world();
    expect(await w.lifecycle.run(w.op('r3', { status: 'later' }), 60_000)).toBeNull();
    expect(await attentionOf('r3')).toEqual([{ object_type: 'refund', reason: 'no final answer from sandbox within RECONCILE_GIVE_UP_MS (60000 ms)' }]);
  });

  it('an answer its connector says cannot decide it (NEEDS_OPERATOR) goes to the operator at once, with what the connector said (200 characters of it)', async () => {
    const w = world();
    const said = `tbank: the payment is PARTIAL_REFUNDED ${'x'.repeat(300)}`;
    await w.lifecycle.send(w.op('u1', { status: 'later', reason: `${NEEDS_OPERATOR}${said}` }));
    expect(await attentionOf('u1')).toEqual([{ object_type: 'refund', reason: `sandbox's answers cannot decide it: ${said.slice(0, 200)}` }]);
    // Only a reason that starts so: one merely naming it is asked again until the give-up age.
    await w.lifecycle.send(w.op('u2', { status: 'later', reason: `tbank: timeout ${NEEDS_OPERATOR}` }));
    expect(await attentionOf('u2')).toEqual([]);
  });

  it('run: an operation never sent is sent (its answer reported once); one sent already is asked, never finished by finishSent_', async () => {
    const w = world();
    expect(await w.lifecycle.run(w.op('r1', { status: 'final', to: 'SUCCESS' }, { fast: true }))).toEqual({ applied: true, status: 'SUCCESS', id: 'r1' });
    expect(w.log).toEqual(['send r1', 'answered r1', 'finishSent_ r1']);
    w.log.length = 0;
    expect(await w.lifecycle.run(w.op('r2', { status: 'final', to: 'SUCCESS' }, { fast: true, sentAt: new Date(), checkAttempts: 1 })))
      .toEqual({ applied: true, status: 'SUCCESS', id: 'r2' });
    expect(w.log).toEqual(['ask r2', 'answered r2', 'waits_ r2 reconciliation 2', 'finish_ r2']);
  });
});

describe('an answer applied', () => {
  it('a final answer the kind still waits on (waits_) is not applied: PROCESS, nothing finished', async () => {
    const w = world({ waits: true });
    const o = w.op('w1', { status: 'final', to: 'FAIL' }, { sentAt: new Date(), checkAttempts: 1 });
    expect(await w.lifecycle.applyAnswer({ id: 'w1' }, { status: 'final', to: 'FAIL' }, { via: 'notification' })).toEqual({ applied: false, status: 'PROCESS', id: 'w1' });
    expect(w.log).toEqual(['waits_ w1 notification undefined']);
    expect(w.rows.get(o.id)!.status).toBe('PROCESS');
  });

  it('a non-final answer heard about a PROCESS operation is kept by the kind (hold_), nothing finished', async () => {
    const w = world();
    w.op('h1', { status: 'later' });
    expect(await w.lifecycle.applyAnswer({ id: 'h1' }, { status: 'later' }, { via: 'notification' })).toEqual({ applied: false, status: 'PROCESS', id: 'h1' });
    expect(w.log).toEqual(['hold_ h1']);
  });

  it('against a final status: a read contradicting it is a recorded conflict (said in what apply returns); a non-final answer never is, whatever its word', async () => {
    const w = world();
    w.op('c1', { status: 'final', to: 'SUCCESS' });
    w.rows.get('c1')!.status = 'SUCCESS';
    expect(await w.lifecycle.applyAnswer({ id: 'c1' }, { status: 'final', to: 'FAIL', word: 'failed' }, { via: 'read' }))
      .toEqual({ applied: false, status: 'SUCCESS', id: 'c1', conflict: true });
    expect(w.log).toEqual(['conflict_ c1 failed read']);
    w.log.length = 0;
    expect(await w.lifecycle.applyAnswer({ id: 'c1' }, { status: 'later', word: 'failed' }, { via: 'read' })).toEqual({ applied: false, status: 'SUCCESS', id: 'c1' });
    // A notification alone is no read: confirmed by one first.
    expect(await w.lifecycle.applyAnswer({ id: 'c1' }, { status: 'final', to: 'FAIL', word: 'failed' }, { via: 'notification' })).toEqual({ applied: false, status: 'SUCCESS', id: 'c1' });
    expect(w.log).toEqual([]);
  });

});
