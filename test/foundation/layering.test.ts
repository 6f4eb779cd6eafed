import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house in one order, lowest first (docs/adr/0123-layers-all-the-way-down.md): a file imports
 * its own folder and the layers below its own, never a layer above it nor another folder of its
 * own layer. Among the faces this is docs/adr/0060-faces-layered-among-themselves.md: each
 * registers its own routes, none imports another; and routes reach the database only through
 * services. A static scan of the sources, so a regression fails here before review.
 */

const SRC = resolve('src');

/** Each face serves one audience and registers its own routes; src/app.ts registers the faces. */
const FACES = ['http', 'provider-notifications', 'page', 'cabinet', 'admin', 'operator'];
/** Shared by some faces only: the operator's two faces share src/backoffice. */
const SHARED: Record<string, readonly string[]> = { backoffice: ['admin', 'operator'] };
/**
 * App infrastructure: Fastify plugins (error handler, body guards, rate limit, idempotency) and
 * the metrics endpoint. Faces build on them; they import no face (the merchant API's own auth
 * hook is the face's: src/http/merchant-auth.ts).
 */
const INFRA = ['plugins', 'metrics'];

/** Every top folder and root file of src/, by layer, lowest first. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts', 'types'], // one error factory (code -> status); ambient declarations of untyped packages
  ['lib'], // generic helpers: no business, no setting
  ['config.ts'], // the environment's schema, read once at boot
  ['logger.ts'], // pino options and redaction
  ['generated'], // Prisma's client, generated from prisma/schema.prisma
  ['db'], // pool, Prisma on it, transactions, statements, migrations, partitions
  ['kernel'], // transition-table helpers, the status sets the data model gives meaning to
  ['outbox', 'mail', 'audit'], // what the domain writes in its transaction: events, mail, the trail's writer
  ['domain'], // business rules, services, connectors, the audit steps
  ['services.ts'], // the domain's services built once
  ['workers'], // background loops over the services
  ['backoffice', ...INFRA], // what some faces share; app infrastructure
  FACES,
  ['app.ts'], // buildApp: plugins, then each face, then the error handler
  ['entry'], // processes: main, worker-main, the CLIs, boot, listen, V8 flags, the demo seed
];

/** The layer of a src/ top folder or root file, undefined when it has none. */
const layerOf = (top: string): number | undefined => {
  const i = LAYERS.findIndex((l) => l.includes(top));
  return i < 0 ? undefined : i;
};

/** The entries of src/ that hold code and have no layer (a new folder must be placed first). */
function unlayered(entries: readonly { name: string; hasCode: boolean }[]): string[] {
  return entries.filter((e) => e.hasCode && layerOf(e.name) === undefined).map((e) => e.name);
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Code without comments, so prose cannot trip the scan. */
const withoutComments = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/** The relative imports of `code` (a file at `at`, relative to src), as paths relative to src. */
function importsIn(code: string, at: string): string[] {
  const specs = [...withoutComments(code).matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return specs.filter((s) => s.startsWith('.')).map((s) => relative(SRC, resolve(SRC, dirname(at), s)).replace(/\.js$/, '.ts'));
}
const importsOf = (file: string): string[] => importsIn(readFileSync(file, 'utf8'), relative(SRC, file));

/** The src/ top folder a file or import path lives in (`app.ts` for a root file). */
const topOf = (p: string) => p.split(/[\\/]/)[0]!;

/**
 * What `file` (relative to src) may not import, by the order above; `imports` relative to src.
 * Returns the offending imports as `file -> import`.
 */
function layeringViolations(file: string, imports: readonly string[]): string[] {
  const from = topOf(file);
  const refused = (to: string): boolean => {
    if (to === from) return false;
    const [a, b] = [layerOf(from), layerOf(to)];
    // A file outside every layer, or an import into one, is refused until it is placed.
    if (a === undefined || b === undefined) return true;
    if (to in SHARED && from !== 'app.ts' && !SHARED[to]!.includes(from)) return true;
    // Down only: a peer of the same layer (a face of a face, the outbox of the mail) is refused too.
    return b >= a;
  };
  return imports.filter((i) => refused(topOf(i))).map((i) => `${file} -> ${i}`);
}

/** SQL or Prisma straight from a route: the pool, Prisma, a client's query, a transaction of its own. */
const DB_ACCESS = /\bdb\.(pool|prisma)\b|\$queryRaw|\$executeRaw|\$transaction|withPgTx\(|(?<!\b(req|request))\.query\s*(<[^>]*>)?\s*\(/;

/** A file that declares a route: `app.get('/x', ...)`, `app.post<{...}>('/x', ...)`, `app.route({ ... })`. */
const DECLARES_ROUTE = /\.(get|post|put|patch|delete|head|all)\s*(<[^>]*>)?\s*\(\s*['"`](\/|\$\{)|\.route\s*\(\s*\{/;

/** Route files: every file of a face's routes/ folder, and every other face file that declares a route. */
function routeFiles(): string[] {
  return FACES.flatMap((face) => files(join(SRC, face)))
    .filter((f) => /[\\/]routes[\\/]/.test(relative(SRC, f)) || DECLARES_ROUTE.test(withoutComments(readFileSync(f, 'utf8'))));
}

/** The code of src/ top entries (folders or root files); Prisma's generated client is not ours to scan. */
const scanned = (entries: readonly string[]) => entries.filter((e) => e !== 'generated')
  .flatMap((e) => (e.endsWith('.ts') ? [join(SRC, e)] : files(join(SRC, e))));

/** src/'s top entries, each with whether it holds code (src/assets holds only files the app serves). */
const srcEntries = () => readdirSync(SRC).map((name) => {
  const p = join(SRC, name);
  return { name, hasCode: statSync(p).isDirectory() ? files(p).length > 0 : name.endsWith('.ts') };
});

describe('layering', () => {
  it('the domain imports nothing from a face, the backoffice or the app infrastructure', () => {
    const domain = files(join(SRC, 'domain'));
    expect(domain.length).toBeGreaterThan(40);
    const bad = domain.flatMap((f) => importsOf(f).filter((i) => [...FACES, ...INFRA, ...Object.keys(SHARED)].includes(topOf(i))).map((i) => `${relative(SRC, f)} -> ${i}`));
    expect(bad).toEqual([]);
  });

  it('the domain does not depend on fastify (requests and replies are the faces\' business)', () => {
    const bad = files(join(SRC, 'domain')).filter((f) => /from\s*['"]fastify['"]/.test(withoutComments(readFileSync(f, 'utf8'))));
    expect(bad.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('no face imports another face; only src/app.ts registers them', () => {
    const faceFiles = scanned(FACES);
    for (const face of FACES) expect(files(join(SRC, face)).length, face).toBeGreaterThan(0);
    const bad = faceFiles.flatMap((f) => layeringViolations(relative(SRC, f), importsOf(f)));
    expect(bad).toEqual([]);
  });

  it('the backoffice is imported only by the operator API and the console, and imports no face', () => {
    const everything = files(SRC).filter((f) => !relative(SRC, f).startsWith('generated'));
    const bad = everything.flatMap((f) => layeringViolations(relative(SRC, f), importsOf(f)).filter((v) => / -> backoffice[\\/]/.test(v) || v.startsWith('backoffice')));
    expect(bad).toEqual([]);
    expect(files(join(SRC, 'backoffice')).length).toBeGreaterThan(0);
  });

  it('lib imports no face, no backoffice, no infrastructure and nothing of the business (only lib and errors)', () => {
    const lib = files(join(SRC, 'lib'));
    expect(lib.length).toBeGreaterThan(10);
    const bad = lib.flatMap((f) => layeringViolations(relative(SRC, f), importsOf(f)));
    expect(bad).toEqual([]);
  });

  it('the infrastructure and everything below the faces import no face', () => {
    const below = scanned(LAYERS.slice(0, layerOf('backoffice')! + 1).flat().filter((e) => e !== 'backoffice'));
    expect(below.length).toBeGreaterThan(150);
    const bad = below.flatMap((f) => layeringViolations(relative(SRC, f), importsOf(f)).filter((v) => FACES.includes(topOf(v.split(' -> ')[1]!))));
    expect(bad).toEqual([]);
  });

  it('every top folder and root file of src/ that holds code has a layer, and every layer names what exists', () => {
    const entries = srcEntries();
    expect(unlayered(entries)).toEqual([]);
    const names = entries.map((e) => e.name);
    for (const e of LAYERS.flat()) expect(names, e).toContain(e);
  });

  it('every file of src/ imports only its own folder and the layers below its own (outbox, mail and audit below the domain; entry points above all)', () => {
    const everything = scanned(srcEntries().map((e) => e.name));
    expect(everything.length).toBeGreaterThan(250);
    const bad = everything.flatMap((f) => layeringViolations(relative(SRC, f), importsOf(f)));
    expect(bad).toEqual([]);
  });

  it('docs/architecture.md draws the same order, top layer first', () => {
    const doc = readFileSync(resolve('docs/architecture.md'), 'utf8');
    const block = /## Layers[^\n]*\n[\s\S]*?```\n([\s\S]*?)```/.exec(doc)![1]!;
    // A layer's line starts in the first column after one space; its names end at the first wide gap.
    const drawn = block.split('\n').filter((l) => /^ [^\s│▼─]/.test(l))
      .map((l) => l.trim().split(/\s{2,}/)[0]!.split(' ').map((n) => n.replace(/\/$/, '')));
    expect(drawn).toEqual([...LAYERS].reverse());
  });

  it('the order refuses a planted upward or sideways import at every level and allows what is below (guards the test itself)', () => {
    const planted = (file: string, spec: string) => layeringViolations(file, importsIn(`import { x } from '${spec}';`, file));
    // Upward: each one a layer reaching above itself.
    for (const [file, spec] of [
      ['lib/input.ts', '../config.js'],
      ['config.ts', './logger.js'],
      ['db/client.ts', '../kernel/statuses.js'],
      ['db/seed.ts', '../services.js'],
      ['db/migrate-cli.ts', '../entry/boot.js'],
      ['kernel/transitions.ts', '../outbox/events.js'],
      ['outbox/x.ts', '../domain/y.js'],
      ['outbox/events.ts', '../domain/ledger/ledger.js'],
      ['outbox/outbox.service.ts', '../domain/merchant/merchant.service.js'],
      ['audit/audit.ts', '../domain/operator-views.js'],
      ['mail/templates.ts', '../domain/merchant/fees.js'],
      ['domain/payment/payment.service.ts', '../../services.js'],
      ['domain/attention/attention.service.ts', '../../workers/index.js'],
      ['services.ts', './workers/index.js'],
      ['workers/index.ts', '../backoffice/actions.js'],
      ['workers/outbox.ts', '../plugins/error-handler.js'],
      ['backoffice/actions.ts', '../cabinet/context.js'],
      ['http/index.ts', '../app.js'],
      ['admin/cli.ts', '../entry/boot.js'],
      ['app.ts', './entry/server.js'],
    ] as const) expect(planted(file, spec), `${file} -> ${spec}`).toHaveLength(1);
    // Sideways: another folder of the same layer.
    for (const [file, spec] of [
      ['mail/smtp.ts', '../outbox/retry.js'],
      ['outbox/deliverer.ts', '../audit/audit.js'],
      ['audit/audit.ts', '../mail/mail-outbox.js'],
      ['plugins/idempotency.ts', '../metrics/index.js'],
      ['metrics/index.ts', '../backoffice/permissions.js'],
      ['errors.ts', './types/rate-limit-local-store.js'],
    ] as const) expect(planted(file, spec), `${file} -> ${spec}`).toHaveLength(1);
    // Down: allowed.
    for (const [file, spec] of [
      ['entry/main.ts', '../app.js'],
      ['entry/main.ts', '../workers/index.js'],
      ['entry/main.ts', './boot.js'],
      ['entry/admin-cli.ts', '../admin/cli.js'],
      ['app.ts', './services.js'],
      ['workers/index.ts', '../services.js'],
      ['services.ts', './domain/merchant/merchant.service.js'],
      ['domain/payment/payment.service.ts', '../../outbox/events.js'],
      ['domain/audit-steps.ts', '../audit/audit.js'],
      ['domain/merchant/password-reset.service.ts', '../../mail/mail-outbox.js'],
      ['domain/bill/bill.states.ts', '../../kernel/transitions.js'],
      ['outbox/events.ts', '../kernel/statuses.js'],
      ['outbox/events.ts', '../db/client.js'],
      ['mail/smtp.ts', '../lib/delivery-retry.js'],
      ['db/client.ts', '../generated/prisma/client.js'],
      ['logger.ts', './config.js'],
      ['lib/input.ts', '../errors.js'],
    ] as const) expect(planted(file, spec), `${file} -> ${spec}`).toEqual([]);
  });

  it('a folder or root file without a layer is refused, as is an import into one (guards the test itself)', () => {
    expect(unlayered([{ name: 'kernel', hasCode: true }, { name: 'bin', hasCode: true }, { name: 'stray.ts', hasCode: true }, { name: 'assets', hasCode: false }])).toEqual(['bin', 'stray.ts']);
    expect(layeringViolations('bin/main.ts', ['lib/ids.ts'])).toEqual(['bin/main.ts -> lib/ids.ts']);
    expect(layeringViolations('entry/main.ts', ['bin/x.ts'])).toEqual(['entry/main.ts -> bin/x.ts']);
  });

  it('routes of every face (API, provider notifications, pages, cabinet, operator API, console) reach the database only through services', () => {
    const routes = routeFiles();
    expect(routes.length).toBeGreaterThan(60);
    // Each face has route files in the scan (a face left out would pass unseen).
    for (const face of FACES) expect(routes.some((f) => topOf(relative(SRC, f)) === face), face).toBe(true);
    for (const dir of ['http/routes', 'cabinet/routes', 'admin/routes', 'operator/routes']) {
      expect(routes.some((f) => relative(SRC, f).startsWith(dir)), dir).toBe(true);
    }
    for (const f of ['page/index.ts', 'page/sandbox-bank.ts', 'provider-notifications/index.ts']) expect(routes.map((r) => relative(SRC, r))).toContain(f);
    const offenders = routes.filter((f) => DB_ACCESS.test(withoutComments(readFileSync(f, 'utf8')))).map((f) => relative(SRC, f)).sort();
    expect(offenders).toEqual([]);
  });

  it('the database-access scan recognises each way of reaching it (guards the test itself)', () => {
    for (const code of ['app.db.pool.query(sql)', 'app.db.prisma.bill.findMany()', 'await c.query<Row>(sql)', 'withPgTx(app.db.pool, fn)', 'tx.$queryRaw`x`', 'req.server.db.pool.query(sql)']) {
      expect(DB_ACCESS.test(code), code).toBe(true);
    }
    for (const code of ['req.query', 'const q = request.query as X', 'app.services.bills.find(m, id)']) {
      expect(DB_ACCESS.test(code), code).toBe(false);
    }
  });

  it('the route scan sees a route however it is declared (guards the test itself)', () => {
    for (const code of ["app.get('/x', h)", 'app.post<{ Params: { id: string } }>(\'/:id\', h)', 'app.route({ method: "GET" })', 'app.post(`${BASE}/result`, h)']) {
      expect(DECLARES_ROUTE.test(code), code).toBe(true);
    }
    for (const code of ['twins.get(p.merchant_id)', "url.searchParams.get('ok')", 'cliActors.get(header)']) {
      expect(DECLARES_ROUTE.test(code), code).toBe(false);
    }
  });

  it('the rules refuse a planted cross-face import and allow what is below (guards the test itself)', () => {
    const planted = (file: string, spec: string) => layeringViolations(file, importsIn(`import { x } from '${spec}';`, file));
    // Faces leaning on each other.
    expect(planted('cabinet/routes/bills.ts', '../../http/routes/bill/create.js')).toHaveLength(1);
    expect(planted('operator/routes/pages.ts', '../../admin/routes/merchants.js')).toHaveLength(1);
    expect(planted('http/routes/payout/search.ts', '../../../page/index.js')).toHaveLength(1);
    expect(planted('provider-notifications/index.ts', '../page/render.js')).toHaveLength(1);
    // The backoffice is the operator's; lib and the infrastructure lean on no face.
    expect(planted('cabinet/routes/api.ts', '../../backoffice/actions.js')).toHaveLength(1);
    expect(planted('backoffice/actions.ts', '../admin/auth.js')).toHaveLength(1);
    expect(planted('lib/sign-in-guard.ts', '../page/attempt-limiter.js')).toHaveLength(1);
    expect(planted('lib/input.ts', '../domain/bill/bill.input.js')).toHaveLength(1);
    expect(planted('plugins/merchant-auth.ts', '../http/api-scopes.js')).toHaveLength(1);
    expect(planted('audit/steps.ts', '../admin/views.js')).toHaveLength(1);
    expect(planted('db/seed.ts', '../http/sandbox-shop.js')).toHaveLength(1);
    // Allowed: a face's own files, what is below, the shared parts of the operator's faces, the composition.
    expect(planted('cabinet/routes/bills.ts', '../context.js')).toEqual([]);
    expect(planted('cabinet/routes/bills.ts', '../../domain/bill/bill.input.js')).toEqual([]);
    expect(planted('operator/routes/pages.ts', '../../backoffice/actions.js')).toEqual([]);
    expect(planted('http/routes/bill/create.ts', '../../../plugins/idempotency.js')).toEqual([]);
    expect(planted('lib/input.ts', '../errors.js')).toEqual([]);
    expect(planted('app.ts', './cabinet/index.js')).toEqual([]);
  });

  it('the scan reads the real imports of a file (guards the test itself)', () => {
    expect(importsOf(join(SRC, 'cabinet', 'roles.ts')).map(topOf)).toContain('domain');
    expect(importsOf(join(SRC, 'app.ts')).map(topOf)).toEqual(expect.arrayContaining(FACES));
  });
});
