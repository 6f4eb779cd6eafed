/**
 * Waits for a named outcome: polls `condition` until it holds (truthy) and returns its value;
 * after `ms` it fails naming `what`, so a slow machine shows what never happened instead of a
 * timeout. Polling is the only pause: a test never sleeps a fixed time for an outcome.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, what: string, ms = 15_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await condition();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
