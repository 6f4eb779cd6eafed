import { describe, expect, it } from 'vitest';
import { statement } from '../../src/db/statement.js';

describe('statements with named parameters (src/db/statement.ts)', () => {
  it('compiles :names to $n in order of first appearance; a name used twice is one parameter', () => {
    const s = statement('t', 'SELECT :b::int + :a, :b');
    expect(s.text).toBe('SELECT $1::int + $2, $1');
    expect(s.names).toEqual(['b', 'a']);
    expect(s.bind({ a: 1, b: 2 })).toEqual({ name: 't', text: 'SELECT $1::int + $2, $1', values: [2, 1] });
  });

  it('leaves casts, quoted strings, quoted identifiers and comments alone', () => {
    const s = statement('t', `SELECT 'RUB:merchant:' || :id, "a:b", x::text -- not :this
      /* nor :that */ FROM t WHERE k = 'it''s :no'`);
    expect(s.names).toEqual(['id']);
    expect(s.text).toContain(`'RUB:merchant:' || $1`);
    expect(s.text).toContain('-- not :this');
    expect(s.text).toContain('/* nor :that */');
    expect(s.text).toContain(`'it''s :no'`);
  });

  it('a missing or an unknown name fails at once, naming it; a positional parameter is refused', () => {
    const s = statement('t', 'SELECT :a, :b');
    expect(() => s.bind({ a: 1 } as never)).toThrow(/missing b/);
    expect(() => s.bind({ a: 1, b: 2, c: 3 } as never)).toThrow(/unknown c/);
    expect(() => statement('t', 'SELECT $1, :a')).toThrow(/positional/);
  });
});
