import type { FastifyInstance } from 'fastify';

/** Listens, and on SIGINT/SIGTERM stops accepting, drains, then runs `onClose` hooks once. */
export async function serve(app: FastifyInstance, onShutdown: () => Promise<void>): Promise<void> {
  await app.listen({ host: app.config.host, port: app.config.port });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    try {
      await app.close();
      await onShutdown();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
