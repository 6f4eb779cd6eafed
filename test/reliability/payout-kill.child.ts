// A real worker process for test/reliability/payout-kill.test.ts: the service's own boot,
// services and payout or refund worker (CHILD_WORKER), as a deployment would run them.
// Payouts: the connector `yk-emu` (the YooKassa emulator at EMU_URL) is put in the registry.
// Refunds: with SANDBOX_HANG_AFTER_APPLY=true the sandbox applies a refund (and records it)
// and then never answers, so the test can kill the process between the two.
import '../../src/entry/runtime-flags.js';
import { boot } from '../../src/entry/boot.js';
import { createDb } from '../../src/db/client.js';
import { createServices } from '../../src/services.js';
import { createLogger } from '../../src/logger.js';
import type { CreateRefund, OperationOutcome } from '../../src/domain/providers/connector.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { YooKassaPayoutTestConnector } from './payout-kill.connector.js';
import { startOperationWorker } from '../../src/workers/operation-worker.js';

const b = await boot();
const db = createDb(b.databaseUrl, { max: 4 });
const log = createLogger(b.config);
const services = createServices(b.config, db);
const ctx = { config: b.config, db, services, log };
let worker;
if (process.env.CHILD_WORKER === 'refund') {
  if (process.env.SANDBOX_HANG_AFTER_APPLY === 'true') {
    services.connectors.override(new class extends SandboxConnector {
      override async refund(req: CreateRefund): Promise<OperationOutcome> {
        await super.refund(req);
        process.stdout.write(`refund applied ${req.refundId}\n`);
        return new Promise<OperationOutcome>(() => undefined);
      }
    }('sandbox', 'test', {}, { db: db.pool }));
  }
  worker = startOperationWorker(ctx, 'refund');
} else {
  services.connectors.override(new YooKassaPayoutTestConnector('yk-emu', process.env.EMU_URL!, process.env.EMU_AGENT_ID!, process.env.EMU_KEY!));
  worker = startOperationWorker(ctx, 'payout', { pollMs: 50 });
}
process.stdout.write('worker up\n');
process.on('SIGTERM', () => { void worker.stop().then(() => db.close()).then(() => process.exit(0)); });
