import { describe, expect, it } from 'vitest';
import {
  BILL_TRANSITIONS, IllegalBillTransitionError, PAID_STATUSES, PAYABLE_FROM, assertTransition, canTransition, isBillExpired, isBillFinished,
  payRefusal, sourcesOf, type BillStatus,
} from '../../src/domain/bill/bill.states.js';

const ALL: BillStatus[] = ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'];
const FINAL_PAID: BillStatus[] = ['SUCCESS', 'UNDERPAID', 'OVERPAID'];

describe('bill state table', () => {
  it('NORMAL: NEW -> PROCESS, PROCESS -> SUCCESS|UNDERPAID|OVERPAID|FAIL, FAIL -> PROCESS, and nothing else', () => {
    const allowed = ALL.flatMap((from) => ALL.filter((to) => canTransition(from, to, 'NORMAL')).map((to) => `${from}->${to}`));
    expect(allowed.sort()).toEqual([
      'FAIL->PROCESS', 'NEW->PROCESS', 'PROCESS->FAIL', 'PROCESS->OVERPAID', 'PROCESS->SUCCESS', 'PROCESS->UNDERPAID',
    ].sort());
  });

  it.each(FINAL_PAID)('a finished NORMAL bill (%s) never changes again', (from) => {
    for (const to of ALL) expect(canTransition(from, to, 'NORMAL')).toBe(false);
    expect(isBillFinished({ type: 'NORMAL', status: from })).toBe(true);
  });

  it('a MULTI bill follows its latest payment: a paid MULTI bill goes back to PROCESS for a new payment', () => {
    for (const from of [...FINAL_PAID, 'FAIL'] as BillStatus[]) expect(canTransition(from, 'PROCESS', 'MULTI')).toBe(true);
    expect(isBillFinished({ type: 'MULTI', status: 'SUCCESS' })).toBe(false);
    expect(canTransition('NEW', 'SUCCESS', 'MULTI')).toBe(false);
  });

  it('NEW, PROCESS and FAIL bills are not finished', () => {
    for (const status of ['NEW', 'PROCESS', 'FAIL'] as BillStatus[]) expect(isBillFinished({ type: 'NORMAL', status })).toBe(false);
  });

  it('an illegal transition raises a typed error carrying api:error.bill_is_finished, a legal one does not', () => {
    expect(() => assertTransition('SUCCESS', 'PROCESS', 'NORMAL')).toThrow(IllegalBillTransitionError);
    try {
      assertTransition('OVERPAID', 'FAIL', 'NORMAL');
    } catch (e) {
      expect((e as IllegalBillTransitionError).message).toBe('api:error.bill_is_finished');
      expect((e as IllegalBillTransitionError).from).toBe('OVERPAID');
    }
    expect(() => assertTransition('PROCESS', 'SUCCESS', 'NORMAL')).not.toThrow();
  });

  it('the whole table, as DESIGN.md "States" lists it for both types', () => {
    expect(BILL_TRANSITIONS).toEqual({
      NORMAL: { NEW: ['PROCESS'], PROCESS: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'], FAIL: ['PROCESS'], SUCCESS: [], UNDERPAID: [], OVERPAID: [] },
      MULTI: {
        NEW: ['PROCESS'], PROCESS: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'], FAIL: ['PROCESS'], SUCCESS: ['PROCESS'], UNDERPAID: ['PROCESS'], OVERPAID: ['PROCESS'],
      },
    });
  });

  it('every status of both types has a row in the table', () => {
    for (const type of ['NORMAL', 'MULTI'] as const) expect(Object.keys(BILL_TRANSITIONS[type]).sort()).toEqual([...ALL].sort());
  });
});

describe('who may pay a bill, and why not (the refusals the API and the page share)', () => {
  const bill = (o: Partial<{ type: 'NORMAL' | 'MULTI'; status: BillStatus; active: boolean; expired: boolean }>) =>
    ({ type: 'NORMAL' as const, status: 'NEW' as BillStatus, active: true, ...o });

  it('a payment opens on a NORMAL bill from NEW or FAIL; on a MULTI bill from any status (another payment may be running)', () => {
    expect([...PAYABLE_FROM.NORMAL].sort()).toEqual(['FAIL', 'NEW']);
    expect([...PAYABLE_FROM.MULTI].sort()).toEqual(['FAIL', 'NEW', 'OVERPAID', 'PROCESS', 'SUCCESS', 'UNDERPAID']);
    expect(sourcesOf('PROCESS', 'NORMAL').sort()).toEqual(['FAIL', 'NEW']);
    expect(sourcesOf('SUCCESS', 'MULTI')).toEqual(['PROCESS']);
  });

  it('refusals in order: finished, inactive, expired, a payment in progress; none for a payable bill', () => {
    expect(payRefusal(bill({ status: 'SUCCESS', active: false, expired: true }))).toBe('bill_is_finished');
    expect(payRefusal(bill({ active: false, expired: true }))).toBe('bill_inactive');
    expect(payRefusal(bill({ expired: true, status: 'PROCESS' }))).toBe('bill_expired');
    expect(payRefusal(bill({ status: 'PROCESS' }))).toBe('payment_in_progress');
    expect(payRefusal(bill({ status: 'PROCESS', expired: false }))).toBe('payment_in_progress');
    expect(payRefusal(bill({}))).toBeNull();
    expect(payRefusal(bill({ status: 'FAIL', expired: false }))).toBeNull();
    expect(payRefusal(bill({ type: 'MULTI', status: 'SUCCESS' }))).toBeNull();
    expect(payRefusal(bill({ type: 'MULTI', status: 'PROCESS' }))).toBeNull();
    expect(payRefusal(bill({ type: 'MULTI', status: 'SUCCESS', active: false }))).toBe('bill_inactive');
  });

  it('a bill expires at the very millisecond of its ttl; one without a ttl never does', () => {
    const at = new Date('2026-01-01T00:00:00.000Z');
    expect(isBillExpired({ expiresAt: at }, new Date(at.getTime() - 1))).toBe(false);
    expect(isBillExpired({ expiresAt: at }, at)).toBe(true);
    expect(isBillExpired({ expiresAt: at }, new Date(at.getTime() + 1))).toBe(true);
    expect(isBillExpired({ expiresAt: null }, at)).toBe(false);
    expect(isBillExpired({ expiresAt: new Date(Date.now() + 60_000) })).toBe(false);
    expect(isBillExpired({ expiresAt: new Date(Date.now() - 60_000) })).toBe(true);
  });

  it('PAID_STATUSES are the statuses that received money', () => {
    expect([...PAID_STATUSES].sort()).toEqual(['OVERPAID', 'SUCCESS', 'UNDERPAID']);
  });
});
