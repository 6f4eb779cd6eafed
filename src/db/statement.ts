/**
 * Statements with named parameters. The text is written with `:name` placeholders and compiled
 * once, at module load, to PostgreSQL's positional form (`$1`, `$2`, ... in order of first
 * appearance), so a prepared (named) statement keeps one text; a call binds values by name and a
 * missing or unknown name fails at once. Hot statements built from parts (a caller's CTEs and
 * the ledger's) thus never depend on where another part's parameters sit.
 *
 * Placeholders are `:` then a letter or `_` then letters, digits or `_`, outside quoted strings,
 * quoted identifiers and comments; `::type` casts are left alone.
 */
export interface Statement<N extends string = string> {
  readonly name: string;
  /** The compiled text ($n). */
  readonly text: string;
  /** The parameter names, in $n order. */
  readonly names: readonly N[];
  /** The query config node-postgres takes: `values` ordered by `names`. */
  bind(values: Record<N, unknown>): { name: string; text: string; values: unknown[] };
}

export function statement<N extends string = string>(name: string, sql: string): Statement<N> {
  const names: string[] = [];
  const index = new Map<string, number>();
  let out = '';
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      // A quoted string or identifier, a doubled quote inside it escapes it.
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new Error(`statement ${name}: unterminated ${ch}`);
        if (sql[j] === ch) { if (sql[j + 1] === ch) { j += 2; continue; } break; }
        j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i);
      const end = j === -1 ? n : j;
      out += sql.slice(i, end);
      i = end;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const j = sql.indexOf('*/', i + 2);
      if (j === -1) throw new Error(`statement ${name}: unterminated comment`);
      out += sql.slice(i, j + 2);
      i = j + 2;
    } else if (ch === ':' && sql[i + 1] === ':') {
      out += '::';
      i += 2;
    } else if (ch === ':' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))!;
      const p = m[0];
      let k = index.get(p);
      if (k === undefined) { names.push(p); k = names.length; index.set(p, k); }
      out += `$${k}`;
      i += 1 + p.length;
    } else if (ch === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      throw new Error(`statement ${name}: positional parameter in a named statement`);
    } else {
      out += ch;
      i++;
    }
  }
  const frozen = Object.freeze([...names]) as readonly N[];
  return {
    name, text: out, names: frozen,
    bind(values) {
      const got = Object.keys(values);
      const unknown = got.filter((k) => !index.has(k));
      const missing = frozen.filter((k) => !Object.hasOwn(values, k));
      if (unknown.length > 0 || missing.length > 0) {
        throw new Error(`statement ${name}: ${missing.length > 0 ? `missing ${missing.join(', ')}` : ''}${missing.length > 0 && unknown.length > 0 ? '; ' : ''}${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : ''}`);
      }
      return { name, text: out, values: frozen.map((k) => values[k]) };
    },
  };
}
