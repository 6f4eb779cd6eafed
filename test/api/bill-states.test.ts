import { describe, expect, it } from 'vitest';
import {
  BILL_TRANSITIONS, IllegalBillTransitionError, assertTransition, canTransition, isBillFinished, type BillStatus,
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

  it('every status of both types has a row in the table', () => {
    for (const type of ['NORMAL', 'MULTI'] as const) expect(Object.keys(BILL_TRANSITIONS[type]).sort()).toEqual([...ALL].sort());
  });
});
