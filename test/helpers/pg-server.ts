import pg from 'pg';

/**
 * Where the test databases live: DATABASE_URL's server if set, else the local server on
 * 127.0.0.1:5432, else null (the global setup then starts embedded PostgreSQL).
 */
export async function findAdminUrl(): Promise<string | null> {
  const candidates: string[] = [];
  if (process.env.DATABASE_URL) {
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = '/postgres';
    candidates.push(u.toString());
  } else {
    // TEST_LOCAL_PG_URL only exists to exercise the embedded fallback on a machine that has a server.
    candidates.push(process.env.TEST_LOCAL_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  }
  for (const url of candidates) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return url;
    } catch {
      // try the next one
    } finally {
      await c.end().catch(() => {});
    }
  }
  return null;
}

export function withDatabase(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}
