// A test-only entry point: the service as `npm start` serves it (API only), built with observers
// that kill the process (SIGKILL, as kill -9) at the phase named by CRASH_AT:
//   provider-answered  a provider answered an operation, before anything of the answer is committed
//   committed          a keyed request's change and its answer committed, before the answer is sent
// The crash tests (test/reliability/*-crash.test.ts) start it and then prove the recovery.
import '../../src/entry/runtime-flags.js';
import { boot } from '../../src/entry/boot.js';
import { buildApp } from '../../src/app.js';
import { createDb } from '../../src/db/client.js';
import { serve } from '../../src/entry/server.js';

const at = process.env.CRASH_AT;
if (at !== 'provider-answered' && at !== 'committed') throw new Error(`CRASH_AT must be provider-answered or committed, not ${at}`);
const die = () => process.kill(process.pid, 'SIGKILL');

const b = await boot();
const db = createDb(b.databaseUrl);
const app = await buildApp({
  config: b.config, db,
  observers: {
    lifecycle: (e) => { if (e.phase === at) die(); },
    onCommitted: () => { if (at === 'committed') die(); },
  },
});
await serve(app, () => db.close());
