/**
 * A database URL and what it says about the connection: `?pgbouncer=true` (Prisma's own
 * convention) means a PgBouncer in transaction pooling mode sits in front, which (Debian's 1.18)
 * keeps no prepared statement from one transaction to the next.
 */
export function parseDatabaseUrl(url: string): { url: string; pgbouncer: boolean } {
  const u = new URL(url);
  const flag = u.searchParams.get('pgbouncer');
  if (flag === null) return { url, pgbouncer: false };
  u.searchParams.delete('pgbouncer');
  return { url: u.toString(), pgbouncer: flag === 'true' || flag === '1' };
}
