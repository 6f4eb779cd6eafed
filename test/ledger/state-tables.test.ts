import { describe, expect, it } from 'vitest';
import {
  FINAL_PAYMENT_STATUSES, PAYMENT_TRANSITIONS, assertPaymentTransition, isPaymentFinal, paymentSourcesOf,
} from '../../src/domain/payment/payment.states.js';
import {
  FINAL_PAYOUT_STATUSES, IllegalPayoutTransition, NOT_COUNTED_STATUSES, PAYOUT_TRANSITIONS, assertTransition as assertPayout, payoutSourcesOf,
} from '../../src/domain/payout/payout.states.js';
import { FINAL_REFUND_STATUSES, IllegalRefundTransitionError, REFUND_TRANSITIONS, assertTransition as assertRefund, sourcesOf as refundSourcesOf } from '../../src/domain/refund/refund.states.js';
import { transitionPairs } from '../../src/kernel/transitions.js';

/**
 * The state tables are DESIGN.md "States", edge for edge (found missing by mutation testing,
 * docs/testing.md): a table that gained an edge, a final state that can move, or a final list
 * that lost a status would let money move twice or a payout count against limits wrongly.
 */
describe('state tables as DESIGN.md "States" lists them', () => {
  it('payment: NEW -> PROCESS -> SUCCESS | UNDERPAID | OVERPAID | FAIL (and NEW -> FAIL, refused before the acquirer); final states never change', () => {
    expect(PAYMENT_TRANSITIONS).toEqual({
      NEW: ['PROCESS', 'FAIL'], PROCESS: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'], SUCCESS: [], UNDERPAID: [], OVERPAID: [], FAIL: [],
    });
    expect([...FINAL_PAYMENT_STATUSES].sort()).toEqual(['FAIL', 'OVERPAID', 'SUCCESS', 'UNDERPAID']);
    expect(isPaymentFinal('SUCCESS')).toBe(true);
    expect(isPaymentFinal('PROCESS')).toBe(false);
    expect(paymentSourcesOf('SUCCESS')).toEqual(['PROCESS']);
    expect(() => assertPaymentTransition('SUCCESS', 'FAIL')).toThrow('Payment is SUCCESS; it cannot become FAIL.');
    expect(() => assertPaymentTransition('PROCESS', 'SUCCESS')).not.toThrow();
  });

  it('payout: NEW -> MODERATING -> PROCESS | DECLINED; NEW -> PROCESS -> SUCCESS | FAIL | ERROR; limits skip FAIL, ERROR, DECLINED', () => {
    expect(PAYOUT_TRANSITIONS).toEqual({
      NEW: ['MODERATING', 'PROCESS'], MODERATING: ['PROCESS', 'DECLINED'], PROCESS: ['SUCCESS', 'FAIL', 'ERROR'],
      SUCCESS: [], FAIL: [], ERROR: [], DECLINED: [],
    });
    expect([...FINAL_PAYOUT_STATUSES].sort()).toEqual(['DECLINED', 'ERROR', 'FAIL', 'SUCCESS']);
    expect([...NOT_COUNTED_STATUSES].sort()).toEqual(['DECLINED', 'ERROR', 'FAIL']);
    expect(payoutSourcesOf('PROCESS').sort()).toEqual(['MODERATING', 'NEW']);
    expect(() => assertPayout('SUCCESS', 'FAIL')).toThrow(IllegalPayoutTransition);
    expect(() => assertPayout('MODERATING', 'MODERATING')).toThrow(IllegalPayoutTransition);
    expect(() => assertPayout('MODERATING', 'DECLINED')).not.toThrow();
  });

  it('refund: NEW -> PROCESS -> SUCCESS | FAIL; final states never change', () => {
    expect(Object.values(REFUND_TRANSITIONS).flat().length).toBe(transitionPairs(REFUND_TRANSITIONS)[0].length);
    expect(REFUND_TRANSITIONS).toEqual({ NEW: ['PROCESS'], PROCESS: ['SUCCESS', 'FAIL'], SUCCESS: [], FAIL: [] });
    expect([...FINAL_REFUND_STATUSES].sort()).toEqual(['FAIL', 'SUCCESS']);
    expect(refundSourcesOf('SUCCESS')).toEqual(['PROCESS']);
    expect(() => assertRefund('FAIL', 'SUCCESS')).toThrow(IllegalRefundTransitionError);
    expect(() => assertRefund('FAIL', 'SUCCESS')).toThrow('Refund is FAIL; it cannot become SUCCESS.');
    expect(() => assertRefund('NEW', 'PROCESS')).not.toThrow();
    expect(() => assertRefund('PROCESS', 'FAIL')).not.toThrow();
  });

  it('transitionPairs lists every edge once, as parallel (from, to) arrays', () => {
    const [from, to] = transitionPairs(PAYOUT_TRANSITIONS);
    expect(from.map((f, i) => `${f}>${to[i]}`).sort()).toEqual([
      'MODERATING>DECLINED', 'MODERATING>PROCESS', 'NEW>MODERATING', 'NEW>PROCESS', 'PROCESS>ERROR', 'PROCESS>FAIL', 'PROCESS>SUCCESS',
    ]);
  });
});

describe('the bill table module', () => {
  // Imported here, inside the test: a table that cannot be read when the module loads (a type's
  // row gone, sourcesOf broken) fails this test. A test file importing the module at its top would
  // fail to load instead, which mutation testing cannot count as a failed test.
  it('loads, and derives who may pay from the table', async () => {
    const bill = await import('../../src/domain/bill/bill.states.js');
    expect([...bill.PAYABLE_FROM.NORMAL].sort()).toEqual(['FAIL', 'NEW']);
    expect([...bill.PAYABLE_FROM.MULTI].sort()).toEqual(['FAIL', 'NEW', 'OVERPAID', 'PROCESS', 'SUCCESS', 'UNDERPAID']);
    expect(Object.keys(bill.BILL_TRANSITIONS).sort()).toEqual(['MULTI', 'NORMAL']);
  });
});
