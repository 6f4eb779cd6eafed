/**
 * The reliability profile. `npm test` runs test/reliability short, within vitest's own timeouts
 * (30 s a test, 60 s a hook); `npm run test:reliability` sets RELIABILITY_PROFILE=full: longer
 * load phases, more generated requests, a second failover. Only the full profile raises a
 * timeout, and only through `budget` (docs/adr/0140-no-raised-timeouts-in-the-short-profile.md).
 */
export const FULL = process.env.RELIABILITY_PROFILE === 'full';

/** `short` in `npm test`, `full` in the full profile: a size, a count, a length of time. */
export function sized<T>(short: T, full: T): T {
  return FULL ? full : short;
}

/**
 * A raised timeout for a test or hook of the full profile; vitest's default (undefined) in
 * `npm test`, so a short run that grows past it fails instead of slowing the suite quietly.
 */
export function budget(ms: number): number | undefined {
  return FULL ? ms : undefined;
}
