import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs `stop` once on the first SIGINT/SIGTERM/SIGHUP (SIGHUP: the terminal went away), then
 * exits 0, or 1 if stopping failed or took longer than 15 s.
 */
export function onStopSignal(log: FastifyBaseLogger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took longer than 15 s: exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    try {
      await stop();
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  for (const s of STOP_SIGNALS) process.on(s, () => void handler(s));
}

/** Listens, and on a stop signal stops accepting, drains, then runs `onShutdown` once. */
export async function serve(app: FastifyInstance, onShutdown: () => Promise<void>): Promise<void> {
  await app.listen({ host: app.config.host, port: app.config.port });
  onStopSignal(app.log, async () => {
    await app.close();
    await onShutdown();
  });
}
