import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Decimal } from 'decimal.js';
import { defineInput, v } from '../../src/lib/input.js';
import { ValidationError } from '../../src/errors.js';
import { parsePersonal } from '../../src/domain/payout/payout.input.js';
import type { PersonalPayoutInput } from '../../src/domain/payout/payout.service.js';

// STYLE.md "Types from schemas": a handler's parsed input has its required fields typed as
// present (no `T | undefined`, no `!`), and the parser is what makes that true at run time.
const input = defineInput({
  id: v.string({ required: true, max: 64 }),
  amount: v.decimal({ required: true }),
  note: v.string({ max: 10 }),
  kind: v.enumOf(['A', 'B'] as const, { required: true }),
});

describe('typed input', () => {
  it('required fields are typed T, optional ones T | undefined (checked by tsc --noEmit)', () => {
    const p = input.parse({ id: 'x1', amount: '10.50', kind: 'a' });
    expectTypeOf(p.id).toEqualTypeOf<string>();
    expectTypeOf(p.amount).toEqualTypeOf<Decimal>();
    expectTypeOf(p.kind).toEqualTypeOf<'A' | 'B'>();
    expectTypeOf(p.note).toEqualTypeOf<string | undefined>();
    expect(p).toMatchObject({ id: 'x1', kind: 'A' });
    expect(p.amount.toFixed(2)).toBe('10.50');
  });

  it('a missing or empty required field is a 422 on that field, so the type never lies', () => {
    expect(() => input.parse({ id: '', amount: '1', kind: 'A' })).toThrow(ValidationError);
    let thrown: unknown = null;
    try { input.parse({ kind: 'A' }); } catch (e) { thrown = e; }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as ValidationError).errors).toEqual({ id: ['The id field is required.'], amount: ['The amount field is required.'] });
  });

  it('services take typed input objects: payout/personal/create is parsed into PersonalPayoutInput', () => {
    const p = parsePersonal({ amount: '100', payout_account_id: 'acc1', extra: 'ignored' });
    expectTypeOf(p).toEqualTypeOf<PersonalPayoutInput>();
    expect(p.amount.toFixed()).toBe('100');
    expect(p).toMatchObject({ payoutAccountId: 'acc1', orderId: undefined });
  });
});
