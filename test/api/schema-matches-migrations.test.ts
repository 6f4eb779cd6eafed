import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';

/**
 * The database built by the SQL migrations matches prisma/schema.prisma: every model's table,
 * every scalar field's column with its type and nullability, every @id, @unique, @@id,
 * @@unique and @@index; and nothing in the database that the schema does not declare.
 * Partitioned tables (payments, ledger_entries, outbox_events, delivery_attempts) are compared
 * as their parent table; their month partitions are not models. A partitioned table's primary
 * key must hold its partition key, so in the database it is the model's @id / @@id plus that
 * column (the id stays unique across months through a key table: payment_keys, outbox_event_keys).
 * A small parser of schema.prisma (the engines that give Prisma's DMMF cannot be installed here).
 */

interface Column { table: string; column: string; type: string; nullable: boolean }
interface Index { table: string; columns: string[]; unique: boolean; primary: boolean }
interface Schema { tables: Set<string>; columns: Column[]; indexes: Index[] }

const SCALARS = new Set(['String', 'Int', 'BigInt', 'Boolean', 'DateTime', 'Decimal', 'Json', 'Float', 'Bytes']);

function pgType(type: string, attrs: string, enums: Set<string>): string {
  const db = /@db\.(\w+)(?:\(([^)]*)\))?/.exec(attrs);
  if (enums.has(type)) return `enum:${type}`;
  if (db) {
    const args = (db[2] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    switch (db[1]) {
      case 'Timestamptz': return `timestamptz(${args[0] ?? 6})`;
      case 'Timestamp': return `timestamp(${args[0] ?? 6})`;
      case 'Decimal': return `numeric(${args[0]},${args[1]})`;
      case 'Char': return `char(${args[0]})`;
      case 'VarChar': return `varchar(${args[0]})`;
      case 'Text': return 'text';
      case 'Date': return 'date';
      default: return `db.${db[1]}`;
    }
  }
  return ({
    String: 'text', Int: 'int4', BigInt: 'int8', Boolean: 'bool', DateTime: 'timestamp(3)', Decimal: 'numeric(65,30)',
    Json: 'jsonb', Float: 'float8', Bytes: 'bytea',
  } as Record<string, string>)[type]!;
}

export function parseSchema(src: string): Schema {
  const text = src.replace(/\/\/.*$/gm, '');
  const enums = new Set([...text.matchAll(/^enum\s+(\w+)\s*\{/gm)].map((m) => m[1]!));
  const out: Schema = { tables: new Set(), columns: [], indexes: [] };
  for (const m of text.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const body = m[2]!;
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? m[1]!;
    out.tables.add(table);
    const colOf = new Map<string, string>();
    for (const line of body.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('@@'))) {
      const f = /^(\w+)\s+(\w+)(\?|\[\])?\s*(.*)$/.exec(line);
      if (!f) continue;
      const [, name, type, mod, attrs] = f as unknown as [string, string, string, string | undefined, string];
      if (mod === '[]' || (!SCALARS.has(type) && !enums.has(type))) continue; // relation field
      const column = /@map\("([^"]+)"\)/.exec(attrs)?.[1] ?? name;
      colOf.set(name, column);
      out.columns.push({ table, column, type: pgType(type, attrs, enums), nullable: mod === '?' });
      if (/@id\b/.test(attrs)) out.indexes.push({ table, columns: [column], unique: true, primary: true });
      if (/@unique\b/.test(attrs)) out.indexes.push({ table, columns: [column], unique: true, primary: false });
    }
    for (const a of body.matchAll(/@@(id|unique|index)\(\[([^\]]+)\]/g)) {
      const columns = a[2]!.split(',').map((s) => s.trim().split(/[\s(]/)[0]!).map((n) => colOf.get(n) ?? n);
      out.indexes.push({ table, columns, unique: a[1] !== 'index', primary: a[1] === 'id' });
    }
  }
  return out;
}

const key = (i: Index) => `${i.table}(${i.columns.join(',')})${i.primary ? ' PRIMARY' : i.unique ? ' UNIQUE' : ''}`;

let t: TestApp;
let schema: Schema;
let db: Schema;
/** Partitioned table -> its partition key column. */
let partitionKeys: Map<string, string>;
beforeAll(async () => {
  t = await setupTestApp();
  schema = parseSchema(readFileSync('prisma/schema.prisma', 'utf8'));
  const q = async <T>(sql: string) => (await t.db.pool.query(sql)).rows as T[];
  // Month partitions (and the DEFAULT one) are storage of their parent, not tables of their own.
  const partitions = new Set((await q<{ relname: string }>(`SELECT c.relname FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public' WHERE c.relispartition`)).map((r) => r.relname));
  partitionKeys = new Map((await q<{ table: string; key: string }>(`SELECT c.relname AS table, a.attname AS key
    FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]`)).map((r) => [r.table, r.key]));
  const tables = (await q<{ table_name: string }>(`SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`))
    .filter((r) => !partitions.has(r.table_name));
  const cols = (await q<{ table_name: string; column_name: string; data_type: string; udt_name: string; is_nullable: string;
    character_maximum_length: number | null; numeric_precision: number | null; numeric_scale: number | null; datetime_precision: number | null }>(
    `SELECT table_name, column_name, data_type, udt_name, is_nullable, character_maximum_length, numeric_precision,
            numeric_scale, datetime_precision
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`))
    .filter((c) => !partitions.has(c.table_name));
  const idx = await q<{ table: string; columns: string[]; unique: boolean; primary: boolean }>(
    `SELECT t.relname AS table, i.indisunique AS unique, i.indisprimary AS primary,
            array_agg(a.attname::text ORDER BY k.ord) AS columns
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE t.relname <> '_prisma_migrations' AND i.indpred IS NULL AND i.indexprs IS NULL
        AND NOT t.relispartition
      GROUP BY t.relname, i.indexrelid, i.indisunique, i.indisprimary`);
  const typeOf = (c: (typeof cols)[number]): string => {
    switch (c.udt_name) {
      case 'timestamptz': return `timestamptz(${c.datetime_precision})`;
      case 'timestamp': return `timestamp(${c.datetime_precision})`;
      case 'numeric': return `numeric(${c.numeric_precision},${c.numeric_scale})`;
      case 'bpchar': return `char(${c.character_maximum_length})`;
      case 'varchar': return `varchar(${c.character_maximum_length})`;
      default: return c.data_type === 'USER-DEFINED' ? `enum:${c.udt_name}` : c.udt_name;
    }
  };
  db = {
    tables: new Set(tables.map((r) => r.table_name)),
    columns: cols.map((c) => ({ table: c.table_name, column: c.column_name, type: typeOf(c), nullable: c.is_nullable === 'YES' })),
    indexes: idx,
  };
});

/** What a schema key becomes on a partitioned table: the partition key is appended to the primary key. */
function stored(i: Index): Index {
  const k = partitionKeys.get(i.table);
  return k && i.primary && !i.columns.includes(k) ? { ...i, columns: [...i.columns, k] } : i;
}
afterAll(async () => { await t.close(); });

describe('the migrated database matches prisma/schema.prisma', () => {
  it('the parser reads the schema (guards against a parser that finds nothing)', () => {
    expect(schema.tables.size).toBeGreaterThanOrEqual(17);
    expect(schema.columns).toContainEqual({ table: 'bills', column: 'currency_in', type: 'enum:Currency', nullable: false });
    expect(schema.columns).toContainEqual({ table: 'merchants', column: 'api_token_hash', type: 'char(64)', nullable: false });
    expect(schema.indexes.map(key)).toContain('bills(merchant_id,created_at,id)');
    expect(schema.indexes.map(key)).toContain('ledger_entries(transfer_id,leg) PRIMARY');
    expect(schema.indexes.map(key)).toContain('balances(merchant_id,currency) PRIMARY');
  });

  it('the four monthly-partitioned tables are partitioned by their creation time, and their ids have key tables', async () => {
    expect(Object.fromEntries(partitionKeys)).toEqual({
      payments: 'created_at', ledger_entries: 'created_at', outbox_events: 'created_at', delivery_attempts: 'attempted_at',
    });
    expect(db.indexes.map(key)).toEqual(expect.arrayContaining([
      'payments(id,created_at) PRIMARY', 'payment_keys(id) PRIMARY',
      'outbox_events(id,created_at) PRIMARY', 'outbox_event_keys(kind,aggregate_id) PRIMARY', 'outbox_event_keys(id) UNIQUE',
      'ledger_entries(transfer_id,leg,created_at) PRIMARY', 'ledger_transfers(id,created_at) UNIQUE',
    ]));
  });

  it('every model has its table and every table has its model', () => {
    expect([...db.tables].sort()).toEqual([...schema.tables].sort());
  });

  it('every field has its column with the same type and nullability, and no column is undeclared', () => {
    const fmt = (c: Column) => `${c.table}.${c.column} ${c.type}${c.nullable ? ' NULL' : ' NOT NULL'}`;
    expect(db.columns.map(fmt).sort()).toEqual(schema.columns.map(fmt).sort());
  });

  it('every @id, @unique, @@id, @@unique and @@index exists, and no plain index is undeclared', () => {
    // Partial and expression indexes cannot be written in schema.prisma; they are left out of both sides.
    expect(db.indexes.map(key).sort()).toEqual(schema.indexes.map(stored).map(key).sort());
  });

  it('a schema that drifts from the database is caught (the comparison can fail)', () => {
    const src = readFileSync('prisma/schema.prisma', 'utf8');
    const fmt = (c: Column) => `${c.table}.${c.column} ${c.type}${c.nullable ? ' NULL' : ' NOT NULL'}`;
    const retyped = parseSchema(src.replace('@db.Decimal(10, 2)', '@db.Decimal(12, 2)'));
    expect(retyped.columns.map(fmt).sort()).not.toEqual(db.columns.map(fmt).sort());
    const unindexed = parseSchema(src.replace('@@index([shopId, createdAt])', ''));
    expect(unindexed.indexes.map(stored).map(key).sort()).not.toEqual(db.indexes.map(key).sort());
  });
});
