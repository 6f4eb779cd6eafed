import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * STYLE.md "Imports point one way": the faces (API, page, cabinet, operator API and console)
 * depend on the domain, never the reverse; and routes reach the database only through services.
 * A static scan of the sources, so a regression fails here before review.
 */

const SRC = resolve('src');
const FACES = ['http', 'page', 'cabinet', 'admin', 'operator', 'plugins'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Code without comments and string contents other than import specifiers, so prose cannot trip the scan. */
const withoutComments = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

function importsOf(file: string): string[] {
  const code = withoutComments(readFileSync(file, 'utf8'));
  const specs = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return specs.filter((s) => s.startsWith('.')).map((s) => relative(SRC, resolve(dirname(file), s)));
}

const ROUTE_DIRS = ['http/routes', 'cabinet/routes', 'admin/routes'];

/** SQL or Prisma straight from a route: the pool, Prisma, a client's query, a transaction of its own. */
const DB_ACCESS = /\bdb\.(pool|prisma)\b|\$queryRaw|\$executeRaw|\$transaction|withPgTx\(|(?<!\b(req|request))\.query\s*(<[^>]*>)?\s*\(/;

/** The src/ top folder a file or import path lives in. */
const topOf = (p: string) => p.split(/[\\/]/)[0]!;

describe('layering', () => {
  it('the domain imports nothing from a face (http, page, cabinet, admin, operator, plugins)', () => {
    const domain = files(join(SRC, 'domain'));
    expect(domain.length).toBeGreaterThan(40);
    const bad = domain.flatMap((f) => importsOf(f).filter((i) => FACES.includes(topOf(i))).map((i) => `${relative(SRC, f)} -> ${i}`));
    expect(bad).toEqual([]);
  });

  it('the domain does not depend on fastify (requests and replies are the faces\' business)', () => {
    const bad = files(join(SRC, 'domain')).filter((f) => /from\s*['"]fastify['"]/.test(withoutComments(readFileSync(f, 'utf8'))));
    expect(bad.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('routes of the API, the cabinet and the operator API reach the database only through services', () => {
    const routes = ROUTE_DIRS.flatMap((d) => files(join(SRC, d)));
    expect(routes.length).toBeGreaterThan(40);
    const offenders = routes.filter((f) => DB_ACCESS.test(withoutComments(readFileSync(f, 'utf8')))).map((f) => relative(SRC, f)).sort();
    // Every route goes through a service (issue 13 item 4, finished in session 5).
    expect(offenders).toEqual([]);
  });

  it('the database-access scan recognises each way of reaching it (guards the test itself)', () => {
    for (const code of ['app.db.pool.query(sql)', 'app.db.prisma.bill.findMany()', 'await c.query<Row>(sql)', 'withPgTx(app.db.pool, fn)', 'tx.$queryRaw`x`']) {
      expect(DB_ACCESS.test(code), code).toBe(true);
    }
    for (const code of ['req.query', 'const q = request.query as X', 'app.services.bills.find(m, id)']) {
      expect(DB_ACCESS.test(code), code).toBe(false);
    }
  });

  it('the scan sees a face import when there is one (guards the test itself)', () => {
    const f = join(SRC, 'cabinet', 'roles.ts');
    expect(importsOf(f).map(topOf)).toContain('domain');
  });
});
