import { defineConfig } from 'prisma/config';

// DATABASE_URL is read here only by the prisma CLI (generate needs none).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
});
