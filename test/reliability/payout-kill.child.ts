// A real payout worker process for test/reliability/payout-kill.test.ts: the service's own
// boot, services and payout worker, with the connector `yk-emu` (the YooKassa emulator at
// EMU_URL) put in the registry, as a deployment with a YooKassa connector would have it.
import '../../src/runtime-flags.js';
import { boot } from '../../src/boot.js';
import { createDb } from '../../src/db/client.js';
import { createServices } from '../../src/services.js';
import { createLogger } from '../../src/logger.js';
import { startPayoutWorker } from '../../src/domain/payout/payout.worker.js';
import { YooKassaPayoutTestConnector } from './payout-kill.connector.js';

const b = await boot();
const db = createDb(b.databaseUrl, { max: 4 });
const log = createLogger(b.config);
const services = createServices(b.config, db);
services.connectors.override(new YooKassaPayoutTestConnector('yk-emu', process.env.EMU_URL!, process.env.EMU_AGENT_ID!, process.env.EMU_KEY!));
const worker = startPayoutWorker({ config: b.config, db, services, log }, { idleMs: 50 });
process.stdout.write('payout worker up\n');
process.on('SIGTERM', () => { void worker.stop().then(() => db.close()).then(() => process.exit(0)); });
