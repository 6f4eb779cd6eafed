/**
 * `npm run admin -- <verb> ...`: boots like the service (joins a running embedded PostgreSQL,
 * migrates, no profile entry), builds the app in-process and runs one verb of src/admin/cli.ts
 * through the operator API's route. Exit code: 0 on 2xx, 1 on a 4xx/5xx answer (or a ledger
 * problem), 2 on a usage error.
 */
import { pathToFileURL } from 'node:url';
import { buildCall, cliUser, helpText, UsageError, type Call } from '../admin/cli.js';

/** Where the CLI writes: the process's streams, or a test's buffers. */
export interface CliIo { out(s: string): void; err(s: string): void }
const processIo: CliIo = { out: (s) => { process.stdout.write(s); }, err: (s) => { process.stderr.write(s); } };

/** One CLI run: the exit code (0 ok, 1 refused, 2 usage); settings from the environment. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  let call: Call | 'help';
  try {
    call = buildCall(argv);
  } catch (e) {
    if (e instanceof UsageError) { io.err(`${e.message}\n`); return 2; }
    throw e;
  }
  if (call === 'help') { io.out(helpText()); return 0; }

  // Imported here so --help and usage errors need no database.
  const { boot } = await import('./boot.js');
  const { createDb } = await import('../db/client.js');
  const { buildApp } = await import('../app.js');
  const { createServices } = await import('../services.js');
  const { pino } = await import('pino');
  const { CLI_HEADER, registerCliActor } = await import('../admin/auth.js');
  const { joinRunningEmbedded } = await import('../db/embedded-join.js');
  await joinRunningEmbedded();
  const b = await boot({ migrate: true, enterProfile: false });
  const db = createDb(b.databaseUrl, { max: 4 });
  // A conflict the command records is still said at error level, on stderr: stdout is the answer.
  const services = createServices(b.config, db, { log: pino({ name: 'provider-conflict' }, pino.destination(2)) });
  const app = await buildApp({ config: b.config, db, logger: false, services });
  try {
    await app.ready();
    const qs = call.query && Object.keys(call.query).length > 0 ? `?${new URLSearchParams(call.query).toString()}` : '';
    const res = await app.inject({
      method: call.method,
      url: `/admin/v1${call.path}${qs}`,
      headers: { authorization: `Bearer ${b.config.adminApiToken}`, [CLI_HEADER]: registerCliActor(cliUser()) },
      ...(call.body ? { payload: call.body } : {}),
    });
    let body: unknown;
    try { body = res.json(); } catch { body = res.body; }
    if (res.statusCode < 400 && call.follow && body && typeof body === 'object') {
      const path = `/admin/v1${call.follow(body as Record<string, unknown>)}`;
      for (let r = res; ; await new Promise((ok) => setTimeout(ok, 500))) {
        r = await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${b.config.adminApiToken}` } });
        body = r.json();
        if (r.statusCode !== 202) break;
      }
    }
    if (res.statusCode < 400 && call.extra && body && typeof body === 'object') body = { ...(body as object), ...call.extra };
    io.out(call.text && res.statusCode < 400 ? call.text(body as Record<string, unknown>) : `${JSON.stringify(body, null, 2)}\n`);
    if (res.statusCode >= 400) {
      io.err(`error: HTTP ${res.statusCode}\n`);
      return 1;
    }
    if (call.failed && call.failed(body as Record<string, unknown>)) return 1;
    return 0;
  } finally {
    await app.close();
    await db.close();
    if (b.embedded) await b.embedded.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => { process.stderr.write(`error: ${(e as Error).message}\n`); process.exit(1); },
  );
}
