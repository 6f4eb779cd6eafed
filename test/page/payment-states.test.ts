import { describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { assertPaymentTransition, canTransitionPayment, IllegalPaymentTransitionError, PAYMENT_TRANSITIONS } from '../../src/domain/payment/payment.states.js';
import { settle, statusFor, storedQuote } from '../../src/domain/payment/payment-finish.js';
import { parsePayInput, PayValidationError } from '../../src/domain/payment/pay-input.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import type { Connector } from '../../src/domain/providers/connector.js';

describe('payment transition table', () => {
  it('final statuses never change', () => {
    for (const f of ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'] as const) {
      for (const to of Object.keys(PAYMENT_TRANSITIONS) as Array<keyof typeof PAYMENT_TRANSITIONS>) {
        expect(canTransitionPayment(f, to)).toBe(false);
      }
    }
  });
  it('PROCESS goes only to a final status; NEW only to PROCESS or FAIL', () => {
    expect(PAYMENT_TRANSITIONS.PROCESS).toEqual(['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL']);
    expect(() => assertPaymentTransition('NEW', 'SUCCESS')).toThrow(IllegalPaymentTransitionError);
    expect(() => assertPaymentTransition('PROCESS', 'NEW')).toThrow(IllegalPaymentTransitionError);
  });
});

describe('amounts', () => {
  const q = { commission: new Decimal('3.00'), dueInBillCurrency: new Decimal('103.00'), dueRub: new Decimal('9270.00'), rate: new Decimal('90') };
  it('status by what arrived against what was due', () => {
    expect(statusFor(new Decimal('10'), new Decimal('10.00'))).toBe('SUCCESS');
    expect(statusFor(new Decimal('9.99'), new Decimal('10'))).toBe('UNDERPAID');
    expect(statusFor(new Decimal('10.01'), new Decimal('10'))).toBe('OVERPAID');
  });
  it('exact payment: the merchant gets due minus the fee, nothing rounded', () => {
    expect(settle(q, new Decimal('9270.00'))).toEqual({ receivedInBillCurrency: new Decimal('103.00'), commission: new Decimal('3.00'), accountAmount: new Decimal('100.00') });
  });
  it('half paid: everything scales by what arrived', () => {
    const s = settle(q, new Decimal('4635.00'));
    expect([s.receivedInBillCurrency.toFixed(2), s.commission.toFixed(2), s.accountAmount.toFixed(2)]).toEqual(['51.50', '1.50', '50.00']);
  });
  it('a fee larger than what arrived never makes the credit negative', () => {
    const s = settle({ ...q, commission: new Decimal('50'), dueInBillCurrency: new Decimal('10'), dueRub: new Decimal('10'), rate: new Decimal(1) }, new Decimal('1'));
    expect(s.accountAmount.toFixed(2)).toBe('0.00');
  });
});

describe('payer form and sandbox acquirer', () => {
  const now = new Date('2026-11-21T00:00:00Z');
  it('a card expiring this month is still valid; last month is expired', () => {
    expect(parsePayInput({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '11/26', card_cvc: '123' }, null, now).card?.expMonth).toBe(11);
    try {
      parsePayInput({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '10/26', card_cvc: '123' }, null, now);
      expect.unreachable();
    } catch (e) {
      expect((e as PayValidationError).codes).toEqual({ card_expiry: 'card_expiry_past' });
    }
  });
  it('the sandbox connector: 0002 declined with code and message, 9995 insufficient funds, other cards and SBP pay (SBP: the amount sent)', async () => {
    const a: Connector = new SandboxConnector();
    const ctx = { signal: new AbortController().signal };
    const card = (n: string) => ({ number: n, expMonth: 1, expYear: 2030, cvc: '123' });
    const pay = (n: string) => a.createPayment({ paymentId: 'p', method: 'card', amount: new Decimal(5), card: card(n) }, ctx);
    expect(await pay('4000000000000002')).toMatchObject({ status: 'declined', code: 'card_declined', message: 'The card was declined.' });
    expect(await pay('4000000000009995')).toMatchObject({ status: 'declined', code: 'insufficient_funds' });
    expect((await pay('5555555555554444')).status).toBe('paid');
    const sbp = await a.createPayment({ paymentId: 'p', method: 'sbp', amount: new Decimal(5), sbpAmount: new Decimal('4.5') }, ctx);
    expect(sbp.status === 'paid' && sbp.amountReceived.toFixed(2)).toBe('4.50');
  });
});

describe('card expiry forms', () => {
  const now = new Date('2026-11-21T00:00:00Z');
  const exp = (e: string) => parsePayInput({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: e, card_cvc: '123' }, null, now).card;
  it('accepts MM/YY, M/YY, MM/YYYY and MMYY', () => {
    expect(exp('12/30')).toMatchObject({ expMonth: 12, expYear: 2030 });
    expect(exp('1/30')).toMatchObject({ expMonth: 1, expYear: 2030 });
    expect(exp('03/2031')).toMatchObject({ expMonth: 3, expYear: 2031 });
    expect(exp('0429')).toMatchObject({ expMonth: 4, expYear: 2029 });
  });
  it('refuses month 0 or 13 and other shapes', () => {
    for (const e of ['00/30', '13/30', '12-30', '123', '12/3']) expect(() => exp(e)).toThrow(PayValidationError);
  });
});

describe('the stored quote (a late answer applied by reconciliation or a notification)', () => {
  it('keeps the amount due in the bill currency (USD), not the RUB amount the payer owed', () => {
    const bill = { amount: new Decimal('100.00'), payerPaysCommission: true, rate: new Decimal('95') };
    const q = storedQuote(bill, { amount: '9785.00', commission: '3.00', rate: '95' });
    expect(q.dueInBillCurrency.toFixed(2)).toBe('103.00');
    expect(q.dueRub.toFixed(2)).toBe('9785.00');
    expect(q.rate.toFixed()).toBe('95');
    expect(storedQuote({ ...bill, payerPaysCommission: false }, { amount: '9500.00', commission: '3.00', rate: '95' }).dueInBillCurrency.toFixed(2)).toBe('100.00');
  });
});
