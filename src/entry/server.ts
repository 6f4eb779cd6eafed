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

/**
 * Listens, and on a stop signal stops accepting, drains, then runs `onShutdown` once. A port
 * already taken (another checkout's `npm start`) is said in one line, what was started is
 * stopped, and the process exits 78 (no stack trace).
 */
export async function serve(app: FastifyInstance, onShutdown: () => Promise<void>): Promise<void> {
  try {
    await app.listen({ host: app.config.host, port: app.config.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    process.stderr.write(`port ${app.config.port} on ${app.config.host} is taken by another program (another npm start?): stop it, or set PORT to a free port (e.g. PORT=${app.config.port + 1} npm start)\n`);
    await app.close().catch(() => {});
    await onShutdown().catch(() => {});
    process.exit(78);
  }
  onStopSignal(app.log, async () => {
    await app.close();
    await onShutdown();
  });
}
