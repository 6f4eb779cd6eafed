/**
 * Helpers over the transition tables of `<entity>.states.ts`, so the conditional UPDATE of every
 * status change takes its from-states from the table (`WHERE status = ANY(<sourcesOf>)`) and
 * the table is the guard, not a comment beside it.
 */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

/** The statuses the table lets enter `to`. */
export function sourcesOf<S extends string>(table: TransitionTable<S>, to: S): S[] {
  return (Object.keys(table) as S[]).filter((s) => table[s].includes(to));
}

/** Every allowed (from, to) pair as two parallel arrays, for `unnest($1::text[], $2::text[])` in SQL. */
export function transitionPairs<S extends string>(table: TransitionTable<S>): [S[], S[]] {
  const from: S[] = [];
  const to: S[] = [];
  for (const f of Object.keys(table) as S[]) for (const t of table[f]) { from.push(f); to.push(t); }
  return [from, to];
}
